package speedup

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Other processes' load. On a machine that other processes share, every
// timed run is slower than on a quiet one, and by different amounts at
// different P: T_P is longer, the time the program's threads wait for a CPU
// counts as its work (see Idle), and the work inflation F_P = W_P − T_1 is
// then partly other processes' time. Run measures that load for each run so
// that the output can say so instead of calling it inflation.
//
// Two quantities, chosen by measuring them on a 2-CPU VM with and without
// busy loops beside quicksort (docs/benchmarks.md, "Speedup curves"):
//
//   - the processor time that other processes took while the program ran:
//     the machine's busy and steal time from /proc/stat's aggregate line
//     (user, nice, system, irq, softirq and steal), read before and after
//     the run, less the program's own processor time from its rusage.
//     /proc/stat's counters advance in ticks of 10 ms per CPU, so one run's
//     figure is good to a few ticks; summed over all the runs it is good to
//     far better than the 10% that matters;
//   - the time the program's threads waited for a CPU: their run delay
//     (Sample.Delay), which Run polls already.
//
// /proc/pressure/cpu was tried too: its "some" total is the time in which
// any task of the machine waited for a CPU, the program's own threads
// included, so with P above the free CPUs it reads high on a machine with
// no other load at all, and it cannot say whose wait it was.

// BusyShare is the share of the machine's processor time that other
// processes may take, and the share of the time the program wanted a CPU
// that it may wait for one, before the measurements are called those of a
// busy machine.
const BusyShare = 0.10

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture that Go runs on.
const userHZ = 100

// CPUTimes are the times of the aggregate "cpu" line of /proc/stat, in
// seconds since boot, summed over the CPUs.
type CPUTimes struct {
	Busy  float64 // user, nice, system, irq and softirq (guest time is in user)
	Steal float64 // taken by the hypervisor for other virtual machines
	Total float64 // every field but guest and guest_nice: the CPUs' time
}

// Sub returns t − u, field by field.
func (t CPUTimes) Sub(u CPUTimes) CPUTimes {
	return CPUTimes{Busy: t.Busy - u.Busy, Steal: t.Steal - u.Steal, Total: t.Total - u.Total}
}

// ParseStat reads the aggregate "cpu" line of the contents of /proc/stat.
func ParseStat(data []byte) (CPUTimes, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		if len(f) < 9 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line %q has %d fields, want at least 8 times", sc.Text(), len(f)-1)
		}
		var v [8]float64
		for i := range v {
			n, err := strconv.ParseUint(f[1+i], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line %q: %v", sc.Text(), err)
			}
			v[i] = float64(n) / userHZ
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		busy := user + nice + system + irq + softirq
		return CPUTimes{Busy: busy, Steal: steal, Total: busy + idle + iowait + steal}, nil
	}
	return CPUTimes{}, fmt.Errorf("/proc/stat: no cpu line")
}

// statPath is the file readCPUTimes reads; a variable for tests.
var statPath = "/proc/stat"

// readCPUTimes reads the machine's CPU times, or reports false where there
// is no /proc/stat.
func readCPUTimes() (CPUTimes, bool) {
	data, err := os.ReadFile(statPath)
	if err != nil {
		return CPUTimes{}, false
	}
	t, err := ParseStat(data)
	return t, err == nil
}

// OthersDuring returns the processor time, in seconds, that other processes
// and the hypervisor took from a machine whose CPU times advanced by d while
// a program ran that used own seconds of processor time itself, and the
// processor time the machine had meanwhile. The tick accounting of
// /proc/stat against the program's exact rusage can make the difference
// come out a little below 0 on a quiet machine: it is clamped.
func OthersDuring(d CPUTimes, own float64) (others, machine float64) {
	return max(0, d.Busy+d.Steal-own), d.Total
}

// Load sums up the load of other processes over a set of runs.
type Load struct {
	Others  float64 // processor-seconds other processes (and steal) took during the runs
	Steal   float64 // of Others, the hypervisor's steal
	Machine float64 // processor-seconds the machine had during the runs

	// Wait is the run delay of the program's threads in the runs with no
	// more Ps than the machine has CPUs, and Wanted the processor time
	// they wanted, CPU + Wait. With more Ps than CPUs the program's
	// threads wait for each other: not other processes' doing.
	Wait, Wanted float64
}

// Add adds the sample of a run at GOMAXPROCS procs on a machine of cpus
// CPUs.
func (l *Load) Add(s Sample, procs, cpus int) {
	if s.Machine > 0 {
		l.Others += s.Others
		l.Steal += s.Steal
		l.Machine += s.Machine
	}
	if procs <= cpus {
		l.Wait += s.Delay
		l.Wanted += s.CPU + s.Delay
	}
}

// OthersShare returns the share of the machine's processor time that other
// processes took, NaN when not measured.
func (l Load) OthersShare() float64 {
	if !(l.Machine > 0) {
		return math.NaN()
	}
	return l.Others / l.Machine
}

// WaitShare returns the share of the time the program wanted a CPU that it
// waited for one, NaN when not measured.
func (l Load) WaitShare() float64 {
	if !(l.Wanted > 0) {
		return math.NaN()
	}
	return l.Wait / l.Wanted
}

// Busy reports whether other processes' load was material: they took more
// than BusyShare of the machine, or the program waited for a CPU more than
// BusyShare of the time it wanted one.
func (l Load) Busy() bool {
	return l.OthersShare() > BusyShare || l.WaitShare() > BusyShare
}

// Warning returns one line that says how busy the machine was, and that
// the times include it, or "" when it was not busy. It does not call that
// load work inflation, which it is not.
func (l Load) Warning() string {
	if !l.Busy() {
		return ""
	}
	var what []string
	if s := l.OthersShare(); !math.IsNaN(s) {
		w := fmt.Sprintf("other processes took %.0f%% of its CPU time during the runs", 100*s)
		if l.Steal > 0.01*l.Machine {
			w += fmt.Sprintf(" (the hypervisor's steal %.0f%%)", 100*l.Steal/l.Machine)
		}
		what = append(what, w)
	}
	if s := l.WaitShare(); !math.IsNaN(s) {
		what = append(what, fmt.Sprintf("the program waited for a CPU %.0f%% of the time it wanted one", 100*s))
	}
	return "busy machine: " + strings.Join(what, ", and ") +
		"; T_P, idle and inflation include that load (columns others and wait), so re-measure on a quiet machine"
}
