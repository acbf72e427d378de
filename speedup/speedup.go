// Package speedup turns the run times of a parallel program into the
// factored speedup curves of Acar, Charguéraud and Rainey ("Parallel Work
// Inflation, Memory Effects, and their Empirical Analysis"), overlaid with
// Cilkview's speedup bounds from a span profile, and writes them as a table,
// a CSV file and a plot. It also measures them: an Experiment builds and
// times a program (Run times one run, as the bench driver's runs are timed
// too); the spanprof speedup command parses the flags and prints.
//
// The measurements, for P processors (GOMAXPROCS=P):
//
//   - T_s, the run time of the sequential baseline;
//   - T_1, the run time of the parallel program on one processor;
//   - T_P, its run time on P processors;
//   - I_P, the time the P processors spent idle during that run: not
//     running the program, and not wanted by it (see Idle);
//   - T_elision, optionally, the run time of its serial elision (every spawn
//     a plain call).
//
// From them, the paper's Facts 2.1–2.3: the parallel work W_P = P·T_P − I_P
// (so that P·T_P = W_P + I_P) and the work inflation F_P = W_P − T_1, and the
// factored speedup curves, each a speedup over T_s:
//
//	linear              P
//	elision             P·T_s / T_elision
//	maximal             P·T_s / T_1
//	idle-specific       P·T_s / (T_1 + I_P)
//	inflation-specific  P·T_s / (P·T_P − I_P) = P·T_s / (T_1 + F_P)
//	actual              T_s / T_P
//
// The gap between linear and maximal is the parallel program's overhead over
// the baseline, between maximal and idle-specific the idle time (too little
// parallelism), between maximal and inflation-specific the work inflation
// (memory effects, contention), and actual lies below both.
package speedup

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/spanprof/spanprof/spanprofile"
)

// Measurement is what was measured at one processor count: the medians of
// several runs.
type Measurement struct {
	Procs int     // P, the GOMAXPROCS of the runs
	Time  float64 // T_P, wall-clock seconds
	Idle  float64 // I_P, processor-seconds

	// Others is the processor time other processes took during a run
	// (Sample.Others), NaN when not measured, and Wait the time the
	// program's threads waited for a CPU (Sample.Delay), in
	// processor-seconds. Both are in W_P, and so in F_P, whose runs they
	// slowed; they are reported, not subtracted.
	Others, Wait float64
}

// Input is everything the curves are computed from.
type Input struct {
	Serial  float64 // T_s, seconds
	One     float64 // T_1, seconds
	Elision float64 // T_elision, seconds; 0 when not measured

	// Runs holds one Measurement per processor count, in the order the
	// points are wanted.
	Runs []Measurement

	// Profile, when not nil, is a span profile of the same program, whose
	// Cilkview bounds are drawn with the curves.
	Profile *spanprofile.Profile
}

// Point is the factored speedup at one processor count: a row of the CSV
// file. Times are in seconds; a value that was not measured is NaN.
type Point struct {
	Procs     int
	Serial    float64 // T_s
	One       float64 // T_1
	Time      float64 // T_P
	Idle      float64 // I_P
	Work      float64 // W_P = P·T_P − I_P
	Inflation float64 // F_P = W_P − T_1

	Linear            float64 // P
	Elision           float64 // P·T_s/T_elision (NaN without T_elision)
	Maximal           float64 // P·T_s/T_1
	IdleSpecific      float64 // P·T_s/(T_1 + I_P)
	InflationSpecific float64 // P·T_s/(P·T_P − I_P)
	Actual            float64 // T_s/T_P

	// Upper and Lower are Cilkview's bounds scaled to speedups over T_s
	// (see Factor); NaN without a profile.
	Upper, Lower float64

	// Others and Wait are the Measurement's: the load of other processes
	// during a run at P, and the program's wait for a CPU.
	Others, Wait float64
}

// Factor computes the factored speedup curves, one Point per measurement.
//
// Cilkview's bounds are bounds on T_1/T_P, the speedup over the program's
// own one-processor run: upper min(P, T1/T∞) (work and span laws) and lower
// T1/(T1/P + 1.7·T̂∞) (its inequality (6), burdened span T̂∞), computed by
// spanprofile.SpeedupEstimate from the profile's work, span and burdened
// span. The factored curves are all speedups over T_s instead: the paper
// measures every curve against the one sequential baseline so that plots of
// different runs and configurations can be compared. Factor therefore
// multiplies both bounds by T_s/T_1, which turns a bound on T_1/T_P into the
// same bound on T_s/T_P, so that they share the curves' axis. The upper
// bound becomes min(maximal, T1/T∞ · T_s/T_1): the maximal curve, capped by
// the profile's parallelism. Only the profile's ratios are used, never its
// times, which the instrumentation and the measure (a clock, instructions)
// put on another scale than the uninstrumented runs.
func Factor(in Input) ([]Point, error) {
	if !(in.Serial > 0) || !(in.One > 0) {
		return nil, fmt.Errorf("need positive T_s and T_1, got %g s and %g s", in.Serial, in.One)
	}
	if in.Elision < 0 || math.IsNaN(in.Elision) {
		return nil, fmt.Errorf("serial elision time %g s: want 0 (not measured) or more", in.Elision)
	}
	if len(in.Runs) == 0 {
		return nil, errors.New("no measurements")
	}
	procs := make([]int, len(in.Runs))
	for i, m := range in.Runs {
		if m.Procs < 1 {
			return nil, fmt.Errorf("measurement %d: %d processors", i, m.Procs)
		}
		if !(m.Time > 0) || m.Idle < 0 || math.IsNaN(m.Idle) {
			return nil, fmt.Errorf("on %d processors: T_P %g s and I_P %g s: want T_P > 0 and I_P ≥ 0", m.Procs, m.Time, m.Idle)
		}
		if m.Idle > float64(m.Procs)*m.Time {
			return nil, fmt.Errorf("on %d processors: idle time %g s exceeds P·T_P = %g s", m.Procs, m.Idle, float64(m.Procs)*m.Time)
		}
		procs[i] = m.Procs
	}
	var bounds []spanprofile.Bound
	if in.Profile != nil {
		bounds = in.Profile.SpeedupEstimate(procs)
	}
	scale := in.Serial / in.One
	points := make([]Point, len(in.Runs))
	for i, m := range in.Runs {
		p := float64(m.Procs)
		work := p*m.Time - m.Idle
		pt := Point{
			Procs:     m.Procs,
			Serial:    in.Serial,
			One:       in.One,
			Time:      m.Time,
			Idle:      m.Idle,
			Work:      work,
			Inflation: work - in.One,

			Linear:            p,
			Elision:           math.NaN(),
			Maximal:           p * in.Serial / in.One,
			IdleSpecific:      p * in.Serial / (in.One + m.Idle),
			InflationSpecific: p * in.Serial / work,
			Actual:            in.Serial / m.Time,

			Upper: math.NaN(),
			Lower: math.NaN(),

			Others: m.Others,
			Wait:   m.Wait,
		}
		if in.Elision > 0 {
			pt.Elision = p * in.Serial / in.Elision
		}
		if bounds != nil && in.Profile.Work > 0 && in.Profile.Span > 0 {
			pt.Upper = bounds[i].Upper * scale
			pt.Lower = bounds[i].Lower * scale
		}
		points[i] = pt
	}
	return points, nil
}

// Idle returns the idle time of a run of wall-clock time wall on procs
// processors that kept busy seconds of processor time: procs·wall − busy,
// the processor time that was available and not taken. busy is the
// process's user and system time plus the time its threads were ready to
// run but waited for a processor (Sample.Delay): a thread that waits while
// other processes of the machine run is not idle for want of work, and the
// paper's scheduler, whose idle phases are the time a worker looks for
// work, would count that time as work.
//
// Measured from outside, with nothing added to the program, this gets
// wrong:
//
//   - on a busy machine, the run delay is not exact: the polling misses up
//     to its 10 ms interval per thread (I_P too large), and the delay of
//     threads that hold no P, such as the runtime's sysmon waking up,
//     counts as work too (I_P too small);
//   - the processor time the Go scheduler spends spinning in search of work
//     before it parks a thread counts as work, where the paper counts the
//     search for work as idle: I_P is too small by that spinning, a few
//     microseconds per idle phase;
//   - start-up and exit, when one thread runs, count P−1 processors idle
//     for about a millisecond, as the paper's runs start with all processors
//     but one idle;
//   - threads that hold no P (sysmon, system calls) add to busy, which can
//     then exceed procs·wall by a little when nothing was idle: the result
//     is clamped to 0.
//
// The runtime's own /cpu/classes/idle:cpu-seconds metric counts the time
// Ps spend with nothing to run, which is the same quantity, but it needs
// code inside the program, is updated only when a garbage collection ends,
// and counts spinning as busy all the same.
func Idle(procs int, wall, busy float64) float64 {
	return max(0, float64(procs)*wall-busy)
}

// Median returns the median of xs (the mean of the two middle values when
// there are an even number of them), or NaN for none. Run times are summed
// up by their median, not their mean, so that one run slowed down by another
// process on the machine does not move the result.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
