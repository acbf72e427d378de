package shadow

import (
	"math"
	"runtime"
	"sync"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// The trust figures of a profile (spanprofile.Trust): what the machine did
// to the run, read from the kernel at the start and at the end, and what the
// cpu measure corrected, summed over every measure the run opened.

// cpuStats sums the corrections of the cpu measures closed so far.
var cpuStats struct {
	mu sync.Mutex
	s  perf.CPUStats
}

// closeMeasure closes m and keeps what it corrected.
func closeMeasure(m perf.Measure) {
	if s, ok := perf.Stats(m); ok {
		cpuStats.mu.Lock()
		cpuStats.s = cpuStats.s.Add(s)
		cpuStats.mu.Unlock()
	}
	m.Close()
}

// machine is a reading of the machine's and the process's counters.
type machine struct {
	ok       bool
	busy     int64 // CPU time all processes used, all CPUs, nanoseconds
	steal    int64 // hypervisor steal, all CPUs, nanoseconds
	self     int64 // CPU time this process used, nanoseconds
	delay    int64 // run delay of the profiled thread, nanoseconds
	delayOK  bool
	cpus     int64
	threadID int
}

// trustFigures returns the trust figures of a run that started with
// reading start and ends now.
func trustFigures(start machine, moved bool) *spanprofile.Trust {
	t := &spanprofile.Trust{}
	cpuStats.mu.Lock()
	s := cpuStats.s
	cpuStats.mu.Unlock()
	// A thread preempted while it reads its CPU time shows up in the
	// check's cost, excluded all the same.
	t.Excluded, t.Corrections, t.Checks = s.Excluded+s.CheckCost, s.Corrections, s.Checks
	t.Counters = countsInstructions()
	t.TSCGivenUp = s.TSCDisagreed || perf.ClockGaveUpTSC()
	if !start.ok {
		return t
	}
	end := readMachine(start.threadID)
	if !end.ok {
		return t
	}
	t.CPUs = end.cpus
	// /proc/stat counts in clock ticks of 10 ms: the process's own CPU time
	// (from getrusage, finer) can exceed the machine's busy time by a tick
	// per CPU, so a difference below that is no load.
	if other := (end.busy - start.busy) - (end.self - start.self); other > 0 {
		t.OtherCPU = other
	}
	t.Steal = max(end.steal-start.steal, 0)
	switch {
	case moved:
		t.RunDelay = -1
	case start.delayOK && end.delayOK:
		t.RunDelay = max(end.delay-start.delay, 0)
	}
	return t
}

// outlierShare is the part of the span that a context's excess on the
// critical path must reach to be worth a warning.
const outlierShare = 0.05

// outlierMin is how many invocations a context needs before its critical
// path's invocations are compared with its average.
const outlierMin = 8

// sizeBuckets is the number of power-of-two buckets of a context's
// histogram of invocation sizes: bucket b holds local works of b bits.
const sizeBuckets = 65

// ctxSizes is a context's record of its invocations' sizes: the buckets of
// the first outlierMin, and once there were more, the index of its full
// histogram in the engine's hists. Only a context of outlierMin
// invocations is ever tested, and most contexts of a deep recursion are
// invoked a few times, so they keep 16 bytes instead of a histogram's 260.
type ctxSizes struct {
	first [outlierMin]uint8
	n     int32 // invocations counted in first; outlierMin+1 once hist is set
	hist  int32
}

// histogram returns the histogram of sz, built in buf if sz has none yet.
func (sz *ctxSizes) histogram(hists []uint32, buf []uint32) []uint32 {
	if sz.n > outlierMin {
		return hists[int(sz.hist)*sizeBuckets:][:sizeBuckets]
	}
	clear(buf)
	for _, b := range sz.first[:sz.n] {
		buf[b]++
	}
	return buf
}

// alikeShare is the share of a context's invocations that must lie within
// a factor of 2 of the median bucket's range for them to count as alike.
const alikeShare = 0.9

// outliers returns the contexts whose invocations are alike (nine in ten
// within the buckets next to the median's, an 8x range of sizes) but whose
// invocations on the critical path average more than 1.5 times the mean,
// by an excess of more than 5% of the span. Invocations that differ by
// design (the partitions of a quicksort, from the whole array down to the
// cutoff) are not alike and never qualify, though their largest, on the
// critical path, is far above their mean; alike ones (the leaves of a
// balanced tree, the rows of a loop) whose critical-path members read long
// were slowed by something other than the program, and the span, a maximum
// over paths, picked them.
func outliers(p *spanprofile.Profile, sizes []ctxSizes, hists []uint32) []spanprofile.Outlier {
	var out []spanprofile.Outlier
	buf := make([]uint32, sizeBuckets)
	for i, c := range p.Contexts {
		w, s := c.OnWork.Local, c.OnSpan.Local
		if i >= len(sizes) || w.Count < outlierMin || s.Count == 0 || w.Work <= 0 {
			continue
		}
		h := sizes[i].histogram(hists, buf)
		if !alike(h) {
			continue
		}
		n := float64(w.Count)
		mean := float64(w.Work) / n
		pathMean := float64(s.Work) / float64(s.Count)
		material := (pathMean-mean)*float64(s.Count) > outlierShare*float64(p.Span)
		if pathMean > 1.5*mean && material {
			out = append(out, spanprofile.Outlier{Context: i, PathMean: pathMean, Mean: mean, StdDev: stdDev(h, mean)})
		}
	}
	return out
}

// alike reports whether nine in ten of the sizes in histogram h lie in the
// median's bucket or the buckets next to it.
func alike(h []uint32) bool {
	var n uint64
	for _, c := range h {
		n += uint64(c)
	}
	var below uint64
	med := 0
	for b, c := range h {
		below += uint64(c)
		if 2*below >= n {
			med = b
			break
		}
	}
	var near uint64
	for b := max(med-1, 0); b <= min(med+1, len(h)-1); b++ {
		near += uint64(h[b])
	}
	return float64(near) >= alikeShare*float64(n)
}

// stdDev estimates the standard deviation of the sizes in h, taking each
// bucket at its middle, for the warning's text.
func stdDev(h []uint32, mean float64) float64 {
	var n, sq float64
	for b, c := range h {
		if c == 0 {
			continue
		}
		mid := 0.0
		if b > 0 {
			mid = 1.5 * math.Ldexp(1, b-1)
		}
		n += float64(c)
		sq += float64(c) * (mid - mean) * (mid - mean)
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sq / n)
}

// countsInstructions reports whether an instructions counter opens here.
func countsInstructions() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := perf.Open(perf.Instructions)
	if err != nil {
		return false
	}
	m.Close()
	return true
}
