package perf

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTSCUsableAgreesWithLinux compares the CPUID reading with the kernel's:
// /proc/cpuinfo shows nonstop_tsc for the invariant TSC bit and rdtscp for
// RDTSCP, and the clock source file says whether the kernel trusts the TSC.
func TestTSCUsableAgreesWithLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/cpuinfo")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip(err)
	}
	var flags []string
	for line := range strings.Lines(string(info)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	src, err := os.ReadFile(clocksourcePath)
	if err != nil {
		t.Skip(err)
	}
	want := slices.Contains(flags, "nonstop_tsc") && slices.Contains(flags, "rdtscp") &&
		strings.TrimSpace(string(src)) == "tsc"
	ok := tscUsable()
	if ok != want {
		t.Errorf("tscUsable() = %v; cpuinfo flags and clock source %q say %v", ok, strings.TrimSpace(string(src)), want)
	}
	m := openClock()
	if (Source(m) == "tsc") != ok {
		t.Errorf("clock reads by %s although tscUsable() = %v", Source(m), ok)
	}
}
