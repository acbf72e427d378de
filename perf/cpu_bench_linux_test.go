//go:build linux

package perf

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkThreadTime compares the ways a thread can learn how long it was
// not running, to justify cpu's design (cpu.go): the thread's CPU clock,
// getrusage's context-switch counts, the task-clock counter, and the
// scheduler's per-thread statistics in /proc.
func BenchmarkThreadTime(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.Run("clock_gettime-thread", func(b *testing.B) {
		var c threadClock
		for b.Loop() {
			v, _ := c.read()
			sink += v
		}
	})
	b.Run("getrusage-thread", func(b *testing.B) {
		var ru unix.Rusage
		for b.Loop() {
			unix.RawSyscall(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_THREAD), uintptr(unsafe.Pointer(&ru)), 0)
			sink += uint64(ru.Nivcsw)
		}
	})
	b.Run("task-clock", func(b *testing.B) {
		c, err := openPath(TaskClock, pathSyscall)
		if err != nil {
			b.Skip(err)
		}
		defer c.Close()
		for b.Loop() {
			sink += c.Read()
		}
	})
	b.Run("proc-schedstat", func(b *testing.B) {
		f, err := os.Open("/proc/thread-self/schedstat")
		if err != nil {
			b.Skip(err)
		}
		defer f.Close()
		buf := make([]byte, 64)
		for b.Loop() {
			n, _ := f.ReadAt(buf, 0)
			sink += uint64(n)
		}
	})
}
