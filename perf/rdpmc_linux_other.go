//go:build linux && !amd64

package perf

// haveRDPMC reports whether counters can be read from user space here: only
// amd64 has the assembly for it, so other architectures use read(2).
const haveRDPMC = false

func rdpmc(counter uint32) uint64 { panic("perf: rdpmc outside amd64") }
