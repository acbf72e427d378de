//go:build linux

package perf

import "golang.org/x/sys/unix"

// pinToOneCPU binds the calling thread to CPU 0, reporting whether it could.
func pinToOneCPU() bool {
	var set unix.CPUSet
	set.Set(0)
	return unix.SchedSetaffinity(0, &set) == nil
}
