//go:build unix && !linux

package perf

import "golang.org/x/sys/unix"

const threadCPUSupported = true

// threadClock reads the calling thread's CPU time.
type threadClock struct {
	ts unix.Timespec
}

// read returns the thread's CPU time in nanoseconds.
func (c *threadClock) read() (uint64, error) {
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c.ts); err != nil {
		return 0, err
	}
	return uint64(c.ts.Nano()), nil
}
