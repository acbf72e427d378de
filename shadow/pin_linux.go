//go:build linux

package shadow

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pinThread binds the calling thread, which the caller has locked, to CPU
// want, or to the CPU it is running on when want is -1 or not allowed, and
// returns that CPU (-1 if it could not).
//
// The cores of one machine do not run a thread equally fast: hybrid laptop
// chips have fast and slow cores, and a VM's virtual CPUs run on host cores
// shared with other guests. On the 2-vCPU VM this project is developed on,
// one loop took 5.9 ms on CPU 0 and 8.4 ms on CPU 1, every time. A thread's
// CPU time excludes the time it did not run but not the speed at which it
// ran, so in serial mode, where one thread runs every strand, a strand's
// time depended on where the scheduler happened to put the thread: the
// same stencil read 12 to 19 ms of relax in six runs. Kept on one CPU, every
// strand of the run is measured at one speed, and the work and span keep
// their ratio.
//
// A thread the Go runtime creates later does not inherit the mask: the
// runtime clones new threads from its template thread, never from a locked
// one.
func pinThread(want int) int {
	if want >= 0 {
		var set unix.CPUSet
		set.Set(want)
		if unix.SchedSetaffinity(0, &set) == nil {
			return want
		}
	}
	var cpu uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
		return -1
	}
	var set unix.CPUSet
	set.Set(int(cpu))
	if unix.SchedSetaffinity(0, &set) != nil {
		return -1
	}
	return int(cpu)
}
