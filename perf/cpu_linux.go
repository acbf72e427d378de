//go:build linux

package perf

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const threadCPUSupported = true

// threadClock reads the calling thread's CPU time.
type threadClock struct {
	ts unix.Timespec // inside the measure, so the read allocates nothing
}

// read returns the thread's CPU time in nanoseconds. Linux's vDSO does not
// serve CLOCK_THREAD_CPUTIME_ID, so this is a system call; RawSyscall skips
// the scheduler's entersyscall/exitsyscall, as the call never blocks.
func (c *threadClock) read() (uint64, error) {
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&c.ts)), 0)
	if errno != 0 {
		return 0, errno
	}
	return uint64(c.ts.Nano()), nil
}
