package shadow

import (
	"slices"
	"sync"
	"time"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// The run's constants, measured at start-up: the instrumentation's own cost
// per event, subtracted from every strand, and the burden of a spawn.

// calibrateOverhead measures the instrumentation's own cost per event, in
// the measure's unit, by running empty calls through a scratch engine: every
// strand such a run records is instrumentation. It takes the cheapest of
// several batches: anything else that lands in a batch (an interrupt, the
// host running another guest, a sibling hyperthread) only adds to it, and
// on a shared VM it lands in most of them. On the 2-vCPU VM the batches of
// one start read either the floor (11 ns with cpu, 29 ns with clock) or
// 16-98 ns, at random, and their median, taken before, read 10-35 ns over
// 20 starts with cpu and 27-59 ns with clock, where the cheapest batch
// reads 10-12 and 26-36 (docs/measures.md has what that did to the work).
//
// In parallel mode the events run through the locked path, whose strands
// exclude the engine's own work already (parallel.go): what is left is the
// cost of reaching the engine and reading the measure.
func calibrateOverhead(m reader, name string, mode runMode, perThread bool) int64 {
	tab := &siteTable{}
	tab.add([]SiteInfo{{File: "calibrate", Func: "calibrate", Caller: "calibrate", Kind: spanprofile.KindCall}})
	// One scratch engine serves every batch: a batch's cost is the work
	// it added, and the strand that its first event ends began at the
	// last event of the batch before, so no time falls between batches.
	// An engine per batch paid its setup, and faulted in its memory, in
	// every batch.
	e := newEngine(config{Measure: m, MeasureName: name, Mode: mode, PerThread: perThread}, tab)
	per := make([]int64, calibrationBatches)
	for b := range per {
		w0 := e.work
		for range calibrationPairs {
			if mode == parallelMode {
				e.parCallBegin(0, noDepth)
				e.parCallEnd(noDepth)
			} else {
				e.callBegin(0, noDepth)
				e.callEndAt(noDepth)
			}
		}
		per[b] = (e.work - w0) / (2 * calibrationPairs)
	}
	return slices.Min(per)
}

// The calibration runs calibrationBatches batches of calibrationPairs call
// pairs each, about 1 ms at start-up. Short batches serve the cheapest as
// well as long ones, since fewer of them take an interruption: at 2,000
// pairs the calibration took 2.3-3.9 ms and read the same costs
// (docs/measures.md).
const calibrationBatches, calibrationPairs = 9, 500

// burdenIn returns the burden in m's unit: the given duration, or the
// measured cost of handing a goroutine off (start one, let it signal a
// WaitGroup, wait for it), the Go counterpart of Cilkview's steal cost.
func burdenIn(m perf.Measure, d time.Duration) int64 {
	if d == 0 {
		d = handOffCost()
	}
	if m.Unit() == perf.UnitNanoseconds {
		return int64(d)
	}
	// A counter: convert at the rate it runs on a busy loop.
	return int64(float64(d) * counterRate(m))
}

// handOffCost measures the median wall time of spawning a goroutine and
// waiting for it on this machine.
//
// It measures from a goroutine of its own: the caller may be locked to its
// OS thread (the runtime locks the main goroutine while packages initialize,
// and per-thread measures lock it for the run), and a locked goroutine that
// parks hands its thread off, which costs some 30 µs instead of about one.
func handOffCost() time.Duration {
	c := make(chan time.Duration)
	go func() { c <- measureHandOff() }()
	return <-c
}

func measureHandOff() time.Duration {
	const n = 201
	costs := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range costs {
		t0 := time.Now()
		wg.Add(1)
		go wg.Done()
		wg.Wait()
		costs[i] = time.Since(t0)
	}
	slices.Sort(costs)
	return costs[n/2]
}

// counterRate returns how many units of m pass per nanosecond of a busy
// loop: the fastest of several short windows, because a window in which the
// thread was preempted counts wall time without counting instructions.
func counterRate(m perf.Measure) float64 {
	best := 0.0
	for i := 0; i < 10; i++ {
		t0, c0 := time.Now(), m.Read()
		x := 0
		for time.Since(t0) < 500*time.Microsecond {
			x++
		}
		_ = x
		if r := float64(m.Read()-c0) / float64(time.Since(t0)); r > best {
			best = r
		}
	}
	return best
}
