//go:build !amd64

package perf

// Only amd64 reads the time-stamp counter directly; elsewhere clock is
// runtime.nanotime. These stubs are never called.

func rdtscp() uint64       { panic("perf: rdtscp outside amd64") }
func rdtscOrdered() uint64 { panic("perf: rdtsc outside amd64") }
func rdtsc() uint64        { panic("perf: rdtsc outside amd64") }

func tscUsable() (usable, checked bool) { return false, false }
func tscInvariant() bool                { return false }
func hasRDTSCP() bool                   { return false }
