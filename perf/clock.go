package perf

import (
	"math/bits"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// The clock measure has two paths, chosen once per process:
//
//   - tsc: on amd64 where the time-stamp counter is invariant, the CPU has
//     RDTSCP and the kernel itself keeps time with the counter (tscUsable),
//     Read executes a bare RDTSC and scales ticks to nanoseconds with one
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
}

func (*tscClock) Name() string    { return Clock }
func (*tscClock) Unit() string    { return UnitNanoseconds }
func (*tscClock) PerThread() bool { return false }
func (*tscClock) Close() error    { return nil }
func (*tscClock) source() string  { return "tsc" }

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
func (c *tscClock) Read() uint64 {
	return scaleTicks(rdtsc(), c.mult)
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
			// Where a hypervisor hides RDTSCP, calibrate with bare RDTSC:
			// pair brackets each nanotime between two reads and keeps the
			// tightest bracket, which bounds how far an unordered read can
			// stray, some nanoseconds over the calibration window.
			ticks := rdtsc
			if hasRDTSCP() {
				ticks = rdtscp
			}
			if mult, hz, ok := calibrateTSC(ticks, nanotime, calibrationWindow); ok {
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
		if tscUsable() {
			if t := openTSC(); t != nil {
				theClock = t
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
