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

// outliers returns the contexts whose invocations on the critical path have
// a mean local work more than 1.5 times and more than 3 standard deviations
// above the mean of all their invocations, by an excess of more than 5% of
// the span. Invocations of a context that
// differ by design (the levels of a divide and conquer) have a large
// deviation and never qualify; alike ones (the leaves of a balanced tree,
// the rows of a loop) whose critical-path members read long were slowed by
// something other than the program.
func outliers(p *spanprofile.Profile, sq []float64) []spanprofile.Outlier {
	var out []spanprofile.Outlier
	for i, c := range p.Contexts {
		w, s := c.OnWork.Local, c.OnSpan.Local
		if i >= len(sq) || w.Count < outlierMin || s.Count == 0 || w.Work <= 0 {
			continue
		}
		n := float64(w.Count)
		mean := float64(w.Work) / n
		sd := math.Sqrt(max(sq[i]/n-mean*mean, 0))
		pathMean := float64(s.Work) / float64(s.Count)
		// Only what matters to the span: the excess of the path's
		// invocations must be a material part of it.
		material := (pathMean-mean)*float64(s.Count) > outlierShare*float64(p.Span)
		if pathMean > 1.5*mean && pathMean > mean+3*sd && material {
			out = append(out, spanprofile.Outlier{Context: i, PathMean: pathMean, Mean: mean, StdDev: sd})
		}
	}
	return out
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
