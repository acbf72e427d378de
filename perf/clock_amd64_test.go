package perf

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTSCUsableAgreesWithLinux compares the CPUID reading with the kernel's:
// /proc/cpuinfo shows nonstop_tsc for the invariant TSC bit, rdtscp for
// RDTSCP and tsc_reliable where the hypervisor vouches for the counters,
// and the clock source file says whether the kernel keeps time with the
// TSC. The clock reads the counter where the kernel does and the CPU has
// RDTSCP, or, checked, where the flags vouch for it.
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
	kernelTSC := strings.TrimSpace(string(src)) == "tsc"
	invariant := slices.Contains(flags, "nonstop_tsc")
	want := invariant && (kernelTSC && slices.Contains(flags, "rdtscp") ||
		!kernelTSC && slices.Contains(flags, "tsc_reliable"))
	ok, checked := tscUsable()
	if ok != want || ok && checked == kernelTSC {
		t.Errorf("tscUsable() = %v, checked %v; cpuinfo flags and clock source %q say %v", ok, checked, strings.TrimSpace(string(src)), want)
	}
	m := openClock()
	wantSource := "nanotime"
	switch {
	case ok && checked:
		wantSource = "tsc (checked)"
	case ok:
		wantSource = "tsc"
	}
	if got := Source(m); got != wantSource {
		t.Errorf("clock reads by %s, want %s (tscUsable() = %v, checked %v)", got, wantSource, ok, checked)
	}
}
