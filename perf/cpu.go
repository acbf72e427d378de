package perf

import (
	"slices"
	"time"
)

// The cpu measure: the thread's running time, at close to the clock's cost.
//
// A raw clock counts every moment the profiled thread does not run (another
// process on its core, the hypervisor running another guest, the thread
// asleep in a channel receive) as part of whatever strand was open, and the
// span, a maximum over paths, picks exactly those strands: on a 2-core VM
// with two busy loops beside it, a fork/join tree whose parallelism is 64
// read 3 to 19. The thread's CPU time (CLOCK_THREAD_CPUTIME_ID) excludes all
// of that, but it is a system call: 150–700 ns here, against 45 ns for the
// clock, and the shadow runtime reads the measure twice per event.
//
// So cpu reads the clock at every event, and the thread's CPU time only when
// more than Period of clock has passed since it last did (a check). Between
// two checks the thread ran for ΔCPU of the Δwall that passed; the rest,
// Δwall − ΔCPU, is time it did not run, and is subtracted from the strand
// that is open at the check. A descheduling lasts a scheduler time slice
// (milliseconds), far longer than Period, so the check falls at the end of
// the very strand that contains it, and only the strands earlier in the same
// window (less than Period of clock in all) can be charged for it wrongly:
// the error per descheduling is below Period. Reads stay monotonic: a check
// never subtracts more than the open strand's clock time.
//
// The check's own cost (the system call) is excluded from every strand:
// the clock is read again after it, and the difference is subtracted too.
//
// What cpu still counts: time the thread runs in the kernel on its own
// behalf (system calls, page faults), interrupts the kernel charges to the
// thread, and the slowdown of a cache another process polluted while the
// thread was away. What it excludes: other processes and threads, hypervisor
// steal (the kernel's task clock does not advance while the vCPU is stolen
// when the guest has paravirtual steal accounting, as KVM guests do), and
// time the thread sleeps.

// DefaultPeriod is how much clock time passes between two reads of the
// thread's CPU time, at least. A check costs one system call; 100 µs keeps
// that below 1% of the thread's time where the call costs up to 1 µs, and
// below 5 ns per event for programs with an event every 500 ns, while a
// descheduling, which lasts milliseconds, is still caught in the strand it
// falls in. Where the call costs more (3–4 µs on a busy VM, where the
// checks took 3.4% of profiled stencil's CPU time and 4.5% of fib's), the
// period stretches to 100 times the call's cost, up to MaxPeriod
// (checkPeriod), so that the checks stay near 1%.
const DefaultPeriod = 100 * time.Microsecond

// MaxPeriod is the longest period between two checks: still well below a
// scheduler's time slice, so a descheduling is caught in its own strand.
const MaxPeriod = time.Millisecond

// Default is the measure spanprof uses when none is named: cpu where the
// platform reads a thread's CPU time, clock elsewhere.
func Default() string {
	if threadCPUSupported {
		return CPU
	}
	return Clock
}

// CPUStats says what a cpu measure corrected, for the profile's trust
// figures.
type CPUStats struct {
	// Checks is how many times the thread's CPU time was read.
	Checks int64
	// Excluded is the clock time subtracted because the thread was not
	// running, in nanoseconds, and Corrections the number of checks that
	// subtracted any.
	Excluded    int64
	Corrections int64
	// CheckCost is the clock time the checks themselves took, also
	// subtracted (no strand includes it).
	CheckCost int64
	// TSCDisagreed says a check found the time-stamp counter out of step
	// with the runtime's clock, after which the measure read the runtime's
	// clock (cpuClock.check).
	TSCDisagreed bool
}

// Add returns s with t added.
func (s CPUStats) Add(t CPUStats) CPUStats {
	return CPUStats{s.Checks + t.Checks, s.Excluded + t.Excluded, s.Corrections + t.Corrections, s.CheckCost + t.CheckCost, s.TSCDisagreed || t.TSCDisagreed}
}

// Stats returns what m corrected so far, if m is a cpu measure.
func Stats(m Measure) (CPUStats, bool) {
	if c, ok := m.(*cpuClock); ok {
		return c.stats, true
	}
	return CPUStats{}, false
}

// cpuClock is the cpu measure of one thread.
type cpuClock struct {
	tsc *tscClock // the clock's TSC path, or nil for nanotime
	// mult is tsc.mult, 0 where tsc is nil: Read's test of the path, a
	// comparison with memory, and its factor, loaded from c again after
	// the counter's read rather than kept across the call.
	mult   uint64
	period uint64 // nanoseconds of clock between two checks
	minGap uint64 // a window's loss below this is the reads' own skew

	checkWall uint64 // clock at the last check
	checkCPU  uint64 // the thread's CPU time at the last check
	// The TSC and runtime.nanotime at the same moment of the last check
	// that read them within tscBracket of each other, when tsc is not nil.
	anchorTSC, anchorNano uint64
	prevWall              uint64 // clock at the previous Read
	lost                  uint64 // clock time subtracted so far

	stats CPUStats
	cpu   threadClock
}

func (*cpuClock) Name() string    { return CPU }
func (*cpuClock) Unit() string    { return UnitNanoseconds }
func (*cpuClock) PerThread() bool { return true }
func (*cpuClock) Close() error    { return nil }

func (c *cpuClock) source() string {
	if c.tsc != nil {
		return "tsc+thread-cputime"
	}
	return "nanotime+thread-cputime"
}

// openCPU opens the cpu measure of the calling thread with the given check
// period.
func openCPU(period time.Duration) (*cpuClock, error) {
	if !threadCPUSupported {
		return nil, &OpenError{Measure: CPU, Cause: "this platform has no per-thread CPU clock", Fallback: "use -measure clock"}
	}
	c := &cpuClock{period: uint64(period), minGap: 2000}
	// The TSC serves wherever it is invariant, even where the kernel keeps
	// time with another clock source (a VM's kvm-clock) because the
	// counters of different CPUs might disagree: this clock is one
	// thread's, which serial mode keeps on one CPU, and every check
	// compares it with the runtime's clock and gives it up if they part.
	// A read costs 12 ns instead of nanotime's 30 on this VM.
	c.tsc = openTSC()
	if c.tsc != nil {
		c.mult = c.tsc.mult
	}
	if _, err := c.cpu.read(); err != nil {
		return nil, &OpenError{Measure: CPU, Cause: "reading the thread's CPU clock: " + err.Error(), Fallback: "use -measure clock", Err: err}
	}
	c.period = uint64(checkPeriod(period, &c.cpu))
	// The window starts after checkPeriod's reads.
	cpu, err := c.cpu.read()
	if err != nil {
		return nil, &OpenError{Measure: CPU, Cause: "reading the thread's CPU clock: " + err.Error(), Fallback: "use -measure clock", Err: err}
	}
	now := c.wall()
	if c.tsc != nil {
		now = c.tscCheck()
	}
	c.checkWall, c.checkCPU, c.prevWall = now, cpu, now
	return c, nil
}

// checkPeriod returns the period between checks for a measure opened with
// the given one: 100 times the median cost of five reads of the thread's
// CPU time where that is longer, up to MaxPeriod.
func checkPeriod(period time.Duration, tc *threadClock) time.Duration {
	var d [5]int64
	for i := range d {
		a := nanotime()
		tc.read()
		d[i] = nanotime() - a
	}
	slices.Sort(d[:])
	return min(max(period, 100*time.Duration(d[len(d)/2])), max(period, MaxPeriod))
}

// wall reads the clock.
func (c *cpuClock) wall() uint64 {
	if c.tsc != nil {
		return scaleTicks(rdtsc(), c.tsc.mult)
	}
	return uint64(nanotime())
}

// Read returns the clock less the time the thread was not running. It is
// the hot path: one clock read and a comparison, and a check once a Period.
// It reads the clock itself rather than through wall, which does not
// inline (the call to the runtime's clock costs more than the inliner's
// budget): profiled fib, which reads six times a node, took 2% longer with
// it (docs/benchmarks.md). The runtime's clock, where there is no TSC or it
// was given up, is readNano's, out of line: with both paths here the TSC's
// kept its factor's pointer across the counter's read and joined the other
// path by a jump, 3 instructions a read more (callgrind, profiled fib).
func (c *cpuClock) Read() uint64 {
	var now uint64
	if c.mult != 0 {
		now = scaleTicks(rdtsc(), c.mult)
	} else {
		return c.readNano()
	}
	if now-c.checkWall >= c.period {
		now = c.check(now)
	}
	c.prevWall = now
	return now - c.lost
}

// readNano is Read on the runtime's clock.
//
//go:noinline
func (c *cpuClock) readNano() uint64 {
	now := uint64(nanotime())
	if now-c.checkWall >= c.period {
		now = c.check(now)
	}
	c.prevWall = now
	return now - c.lost
}

// check reads the thread's CPU time and subtracts the clock time the thread
// did not run since the last check, at most the open strand's. It returns
// the clock at the end of the check; the check's own duration is subtracted
// as well.
//
//go:noinline
func (c *cpuClock) check(now uint64) uint64 {
	cpu, err := c.cpu.read()
	if err != nil {
		// It read once at Open; a later failure leaves the clock as is.
		return now
	}
	var after uint64
	if c.tsc != nil {
		after = c.tscCheck()
		if c.tsc == nil {
			// The TSC was given up: start a new window on the runtime's
			// clock, without a correction.
			c.checkWall, c.checkCPU = after, cpu
			return after
		}
	} else {
		after = uint64(nanotime())
	}
	c.stats.Checks++
	if after > now {
		c.lost += after - now
		c.stats.CheckCost += int64(after - now)
	}
	if cpu >= c.checkCPU && now >= c.checkWall {
		if l := notRunning(now-c.checkWall, cpu-c.checkCPU, now-min(c.prevWall, now), c.minGap); l > 0 {
			c.lost += l
			c.stats.Excluded += int64(l)
			c.stats.Corrections++
		}
	}
	// The CPU time was read between now and after; take the window's new
	// start there too, so the check's own time is in neither side.
	c.checkWall, c.checkCPU = after, cpu
	return after
}

// tscCheck reads the TSC and runtime.nanotime together and returns the
// clock, after comparing the TSC's time since the last such reading with
// the runtime clock's. They must agree: a counter that went back, or ran
// ahead or behind by more than tscSkew and a fraction of the time, is not to
// be trusted (the thread moved to a CPU whose counter is set differently,
// the VM was restored elsewhere). The clock is then the runtime's for the
// rest of the run, tsc becomes nil, and lost takes up the difference of the
// two clocks' origins so that Read goes on without a jump.
//
// The two clocks are read as a bracket, TSC, nanotime, TSC, and compared
// only where the bracket is tight: an interrupt or a descheduling of the
// virtual CPU between two reads (seen here: 45 µs, a few times a second)
// would look like a jump.
func (c *cpuClock) tscCheck() uint64 {
	for range 3 {
		a, n, b, ok := tscBracketRead(c.tsc.mult)
		if !ok {
			continue
		}
		mid := a + (b-a)/2
		first := c.anchorNano == 0
		dt, dn := int64(mid-c.anchorTSC), int64(n-c.anchorNano)
		c.anchorTSC, c.anchorNano = mid, n
		if diff := dt - dn; first || dt >= 0 && dn >= 0 && diff < tscSkew+dn/64 && -diff < tscSkew+dn/64 {
			return b
		}
		c.tsc, c.mult = nil, 0
		c.stats.TSCDisagreed = true
		// Read returns wall - lost: on the runtime's clock from here,
		// where the TSC would have been.
		c.lost += n - b
		c.prevWall = n
		return n
	}
	return scaleTicks(rdtsc(), c.tsc.mult) // no tight bracket: compare at the next check
}

// tscBracket is the widest TSC bracket around a nanotime read that
// tscCheck compares (a read takes tens of nanoseconds), and tscSkew how
// far the TSC's and the runtime clock's time between two checks may differ:
// tight brackets on this VM differ by under 1 µs over milliseconds, so
// anything above is a counter that jumped.
const (
	tscBracket = 2000
	tscSkew    = 20_000
)

// notRunning returns the clock time to subtract at a check: of the wall
// nanoseconds since the last check the thread ran run, and the rest it did
// not run, but no more than the open strand's clock time, strand (the
// earlier strands of the window were read already). A difference up to
// minGap is the skew of reading two clocks at slightly different moments,
// not a descheduling.
func notRunning(wall, run, strand, minGap uint64) uint64 {
	if wall <= run+minGap {
		return 0
	}
	return min(wall-run, strand)
}
