package perf

import (
	"io"
	"os"
	"strings"
)

// Implemented in asm_amd64.s.

// rdtscp executes RDTSCP, which waits for every earlier instruction and load.
func rdtscp() uint64

// rdtsc executes a bare RDTSC: what tscClock.Read uses (see there why).
func rdtsc() uint64

// rdtscOrdered executes LFENCE;RDTSC: a read that waits for every earlier
// instruction, for the calibration (openTSC).
func rdtscOrdered() uint64

// cpuid executes CPUID for leaf eax, subleaf ecx.
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// clocksourcePath names the kernel's current clock source on Linux.
const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// tscInvariant reports whether the time-stamp counter ticks at a constant
// rate whatever the power state: the invariant TSC, CPUID 0x80000007 EDX bit
// 8, which Linux shows as constant_tsc and nonstop_tsc. That is enough for
// one thread's clock that is checked against the runtime's (the cpu measure,
// cpu.go); the process-wide clock needs more (tscUsable).
func tscInvariant() bool {
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt < 0x80000007 {
		return false
	}
	_, _, _, invariant := cpuid(0x80000007, 0)
	return invariant&(1<<8) != 0
}

// hasRDTSCP reports whether the CPU has RDTSCP (CPUID 0x80000001 EDX bit
// 27, on every x86-64 since 2008, though a hypervisor may hide it).
func hasRDTSCP() bool {
	_, _, _, ext := cpuid(0x80000001, 0)
	return ext&(1<<27) != 0
}

// cpuinfoPath is Linux's list of the CPUs' features.
const cpuinfoPath = "/proc/cpuinfo"

// tscUsable reports whether the time-stamp counter can serve as a
// process-wide clock, and whether it must then be checked against the
// runtime's clock as it goes (checked).
//
// It needs the invariant TSC (tscInvariant). Invariance alone does not make
// the counters of different CPUs agree, so on Linux (where /sys is readable)
// it also needs one of two things:
//
//   - the kernel keeps time with the TSC, which it does only after checking
//     that the CPUs' counters are synchronized. The clock then also needs
//     RDTSCP: the fenced RDTSC of older processors (MFENCE;LFENCE;RDTSC, 55
//     ns here) costs more than runtime.nanotime, which then serves better.
//   - or the kernel keeps time with another clock source (a VM's kvm-clock,
//     which survives the VM's migration to another host) while the CPU
//     flags say the hypervisor keeps the counters reliable (tsc_reliable:
//     the kernel then skips its own check that the CPUs agree). The clock
//     is checked: every tscWatchPeriod it compares the counter's time with
//     the runtime clock's and gives the counter up if they part (tscWatch).
//     On the 2-vCPU VM, a Firecracker guest whose kernel keeps time with
//     kvm-clock, a read costs 11 ns against nanotime's 28.
func tscUsable() (usable, checked bool) {
	if !tscInvariant() {
		return false, false
	}
	b, err := os.ReadFile(clocksourcePath)
	if err != nil || strings.TrimSpace(string(b)) == "tsc" {
		return hasRDTSCP(), false
	}
	return tscReliable(firstCPUInfo()), true
}

// firstCPUInfo returns the start of /proc/cpuinfo, which holds the first
// CPU's flags, or "": the whole file of a machine with hundreds of CPUs
// is hundreds of kilobytes, and every CPU shows the same flags.
func firstCPUInfo() string {
	f, err := os.Open(cpuinfoPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<10))
	return string(b)
}
