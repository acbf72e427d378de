package perf

// haveRDPMC reports whether counters can be read from user space here.
const haveRDPMC = true

// rdpmc executes RDPMC for the counter with the given index; implemented in
// rdpmc_linux_amd64.s.
func rdpmc(counter uint32) uint64
