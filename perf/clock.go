package perf

import (
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname
)

// The clock measure has two paths, chosen once per process:
//
//   - tsc: on amd64 where the time-stamp counter is invariant, the CPU has
//     RDTSCP and the kernel itself keeps time with the counter, or where the
//     CPU flags say the hypervisor keeps the counters reliable and the
//     counter is checked as it goes (tscUsable, tscWatch), Read executes a
//     bare RDTSC and scales ticks to nanoseconds with one
//     64×64→128 multiply by a factor calibrated against runtime.nanotime at
//     the first Open. RDTSCP (38 ns against 18 ns in this VM) cannot run
//     ahead of the loads before it, but the runtime reads the clock at every
//     event and clamps a strand that comes out negative to zero instead
//     (see Read).
//   - nanotime: everywhere else, runtime.nanotime (the vDSO's
//     clock_gettime(CLOCK_MONOTONIC) on Linux).
//
// Measured on this 2-core AMD EPYC VM (Firecracker, clocksource tsc) with
// other users' builds running (load average 4), median of five runs of
// BenchmarkRead and BenchmarkClockPath: tsc path 41 ns per Read (RDTSCP
// alone 38 ns, bare RDTSC 18 ns), nanotime 45 ns, time.Since 52 ns.

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// nanoClock reads runtime.nanotime.
type nanoClock struct{}

func (nanoClock) Name() string    { return Clock }
func (nanoClock) Unit() string    { return UnitNanoseconds }
func (nanoClock) Read() uint64    { return uint64(nanotime()) }
func (nanoClock) PerThread() bool { return false }
func (nanoClock) Close() error    { return nil }
func (nanoClock) source() string  { return "nanotime" }

// tscShift is the number of fractional bits of tscClock.mult. With 32 bits a
// 3 GHz counter's factor (0.33 ns per tick) keeps nine significant digits.
const tscShift = 32

// tscClock reads the time-stamp counter and scales it to nanoseconds.
type tscClock struct {
	mult uint64  // nanoseconds per tick, fixed point with tscShift fraction bits
	hz   float64 // ticks per second, for the record
	// watch checks the counter against the runtime's clock, where the
	// kernel does not keep time with it (tscUsable); nil where it does.
	watch *tscWatch
}

func (*tscClock) Name() string    { return Clock }
func (*tscClock) Unit() string    { return UnitNanoseconds }
func (*tscClock) PerThread() bool { return false }
func (*tscClock) Close() error    { return nil }

func (c *tscClock) source() string {
	switch w := c.watch; {
	case w == nil:
		return "tsc"
	case w.gaveUp.Load():
		return "nanotime (tsc given up)"
	}
	return "tsc (checked)"
}

// Read returns the counter in nanoseconds. The 128-bit product cannot
// overflow, and the scaling is monotonic in the tick count, so the result is
// as monotonic as the counter itself; it wraps after 584 years of uptime.
//
// It uses a bare RDTSC, not RDTSCP: the shadow runtime reads the clock at
// every event, so the 20-odd ns that RDTSCP's ordering costs here would be
// paid several times per spawn. Without ordering a read can run a few cycles
// ahead of the instructions before it, which moves a strand boundary by
// nanoseconds; the runtime clamps a strand that comes out negative to zero,
// so no measurement goes backwards.
//
// A checked counter costs one load and a comparison more, and a check
// (tscWatch.check) once a tscWatchPeriod.
func (c *tscClock) Read() uint64 {
	now := scaleTicks(rdtsc(), c.mult)
	if w := c.watch; w != nil && now >= w.next.Load() {
		return w.check(now)
	}
	return now
}

// tscWatch checks a process-wide counter that the kernel does not keep
// time with against runtime.nanotime, which it does, as cpuClock.tscCheck
// checks one thread's: once a tscWatchPeriod the first Read past it
// compares the time each clock saw since the last check. A counter that
// went back, or ran ahead or behind by more than tscSkew and a thousandth
// of the time, is given up: from then on Read returns the runtime's clock,
// moved to where the counter would have been without the jump, so that
// the readings go on without one. The checks run on whichever thread
// reads, so a CPU whose counter was set apart from the others shows up as
// well, unless it is off by less than the tolerance.
type tscWatch struct {
	mult uint64
	// next is the reading at or after which Read checks: 0 once the
	// counter is given up, so that every Read goes to check.
	next atomic.Uint64
	// off is what Read adds to nanotime once the counter is given up.
	off    atomic.Int64
	gaveUp atomic.Bool

	mu sync.Mutex // held by the one check under way
	// The counter and nanotime at the same moment of the last check.
	anchorTSC, anchorNano uint64
}

// tscWatchPeriod is how long a checked counter goes between checks:
// a check takes three clock reads, so its cost is some 100 ns in 10 ms.
const tscWatchPeriod = 10 * time.Millisecond

// newTSCWatch returns a watch of the counter scaled by mult, anchored now,
// or nil if no read of nanotime came between two close reads of the
// counter in a hundred tries.
func newTSCWatch(mult uint64) *tscWatch {
	w := &tscWatch{mult: mult}
	for range 100 {
		if a, n, b, ok := tscBracketRead(w.mult); ok {
			w.anchorTSC, w.anchorNano = a+(b-a)/2, n
			w.next.Store(b + uint64(tscWatchPeriod))
			return w
		}
	}
	return nil
}

// tscBracketRead reads the counter scaled by mult, nanotime and the
// counter again, and reports whether the two counter reads are within
// tscBracket of each other: an interrupt or a descheduling of the virtual
// CPU between them would look like a jump. The checks of cpuClock and
// tscWatch compare the clocks only at such brackets.
func tscBracketRead(mult uint64) (a, n, b uint64, ok bool) {
	a = scaleTicks(rdtsc(), mult)
	n = uint64(nanotime())
	b = scaleTicks(rdtsc(), mult)
	return a, n, b, b >= a && b-a <= tscBracket
}

// check is Read's slow path: a reading now at or past next. It compares
// the clocks if no other thread is doing so, and returns the reading;
// once the counter is given up, it returns the runtime's clock.
//
//go:noinline
func (w *tscWatch) check(now uint64) uint64 {
	if w.gaveUp.Load() {
		return w.runtimeClock()
	}
	if !w.mu.TryLock() {
		return now // another thread is checking
	}
	defer w.mu.Unlock()
	if w.gaveUp.Load() {
		return w.runtimeClock() // given up meanwhile
	}
	if now < w.next.Load() {
		return now // checked meanwhile
	}
	for range 3 {
		a, n, b, ok := tscBracketRead(w.mult)
		if !ok {
			continue
		}
		mid := a + (b-a)/2
		dt, dn := int64(mid-w.anchorTSC), int64(n-w.anchorNano)
		if diff := dt - dn; dt >= 0 && dn >= 0 && diff < tscSkew+dn/1024 && -diff < tscSkew+dn/1024 {
			w.anchorTSC, w.anchorNano = mid, n
			w.next.Store(b + uint64(tscWatchPeriod))
			return now
		}
		// The counter parted from the runtime's clock: read the runtime's
		// clock from here, where the counter would have been.
		w.off.Store(int64(w.anchorTSC - w.anchorNano))
		w.gaveUp.Store(true)
		w.next.Store(0)
		return w.runtimeClock()
	}
	// No tight bracket (a busy machine): try again a little later.
	w.next.Store(now + uint64(tscWatchPeriod)/16)
	return now
}

// runtimeClock is what Read returns once the counter is given up: the
// runtime's clock, moved to where the counter would have been.
func (w *tscWatch) runtimeClock() uint64 {
	return uint64(nanotime() + w.off.Load())
}

// ClockGaveUpTSC reports whether the process's clock measure read the
// time-stamp counter, checked, and gave it up during the run (tscWatch):
// the strands around that moment may be wrong.
func ClockGaveUpTSC() bool {
	if c := checkedClock.Load(); c != nil {
		return c.watch.gaveUp.Load()
	}
	return false
}

// tscReliable reports whether Linux's /proc/cpuinfo, info, lists the
// tsc_reliable flag: the hypervisor (or the hardware) vouches that the
// CPUs' counters agree, and the kernel does not check them.
func tscReliable(info string) bool {
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for f := range strings.FieldsSeq(v) {
				if f == "tsc_reliable" {
					return true
				}
			}
			return false
		}
	}
	return false
}

// scaleTicks returns t·mult / 2^tscShift, truncated to 64 bits. It inlines
// into Read.
func scaleTicks(t, mult uint64) uint64 {
	hi, lo := bits.Mul64(t, mult)
	return hi<<(64-tscShift) | lo>>tscShift
}

var (
	clockOnce sync.Once
	theClock  Measure

	tscOnce sync.Once
	theTSC  *tscClock // nil where the TSC is not invariant or did not calibrate

	// checkedClock is theClock where it reads the counter checked, for
	// ClockGaveUpTSC, which must not open the clock.
	checkedClock atomic.Pointer[tscClock]
)

// calibrationWindow is how long the first Open of clock spends calibrating the
// time-stamp counter, asleep: every profiled process pays it before its
// first event. The bracketing error of each end, tens of nanoseconds at
// most, over one millisecond bounds the factor's error by about 1e-4; on the
// 2-vCPU VM fifteen calibrations of 1 ms agreed within 1.5e-6 (5 ms, the
// window before: 4.3e-7), and the cpu measure's checks allow the two clocks
// to part by 1/64 of a window.
const calibrationWindow = time.Millisecond

// openTSC returns the time-stamp counter scaled to nanoseconds, calibrated on
// the first call, or nil where it is not invariant (tscInvariant) or its rate
// is implausible.
func openTSC() *tscClock {
	tscOnce.Do(func() {
		if tscInvariant() {
			// LFENCE;RDTSC, which waits for the instructions before it
			// like RDTSCP, exists on every amd64 CPU and under Valgrind,
			// which executes neither a hidden RDTSCP nor, where CPUID
			// shows it, an RDTSCP of its own: a profiled program run
			// under callgrind died at its first clock read. pair also
			// brackets each nanotime between two reads and keeps the
			// tightest bracket.
			if mult, hz, ok := calibrateTSC(rdtscOrdered, nanotime, calibrationWindow); ok {
				theTSC = &tscClock{mult: mult, hz: hz}
			}
		}
	})
	return theTSC
}

// openClock returns the process's clock, choosing and calibrating its path on
// the first call.
func openClock() Measure {
	clockOnce.Do(func() {
		theClock = nanoClock{}
		if usable, checked := tscUsable(); usable {
			if t := openTSC(); t != nil {
				c := &tscClock{mult: t.mult, hz: t.hz}
				if checked {
					c.watch = newTSCWatch(t.mult)
				}
				if !checked || c.watch != nil {
					theClock = c
				}
				if c.watch != nil {
					checkedClock.Store(c)
				}
			}
		}
	})
	return theClock
}

// calibrateTSC measures how many nanoseconds of ns pass per tick of ticks over
// window, and returns that factor with tscShift fraction bits and the tick
// rate in Hz. It reports false when the rate is implausible (a counter that
// does not tick, or ticks outside 100 MHz to 100 GHz).
func calibrateTSC(ticks func() uint64, ns func() int64, window time.Duration) (mult uint64, hz float64, ok bool) {
	// pair reads ns bracketed by two tick reads and keeps the tightest of a
	// few brackets, so that an interrupt between the reads does not skew it.
	pair := func() (tick uint64, nsec int64) {
		best := ^uint64(0)
		for range 7 {
			a := ticks()
			n := ns()
			b := ticks()
			if b >= a && b-a < best {
				best, tick, nsec = b-a, a+(b-a)/2, n
			}
		}
		return tick, nsec
	}
	t0, n0 := pair()
	time.Sleep(window)
	t1, n1 := pair()
	if t1 <= t0 || n1 <= n0 {
		return 0, 0, false
	}
	dt, dn := t1-t0, uint64(n1-n0)
	hz = float64(dt) / float64(dn) * 1e9
	if hz < 1e8 || hz > 1e11 {
		return 0, 0, false
	}
	mult, _ = bits.Div64(dn>>(64-tscShift), dn<<tscShift, dt)
	return mult, hz, true
}
