package main

import (
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestAutoRunsUntilWorkSettles: -count auto runs again while either total
// still shrinks by 1% or more, or the critical path still reads far above
// its sites' average. With the span settled after two runs but the work
// still 20% down (a large subtree off the critical path measured
// undisturbed at last), a third run is made; once both settle, no more;
// but settled totals with an outlier on the critical path run again.
func TestAutoRunsUntilWorkSettles(t *testing.T) {
	busy := &spanprofile.Trust{CPUs: 2, OtherCPU: 2e9}
	prof := func(work, span int64) []*spanprofile.Profile {
		return []*spanprofile.Profile{{Work: work, Span: span, DurationNanos: 1e9, Trust: busy}}
	}
	r := &runs{}
	for _, c := range []struct {
		work, span int64
		more       bool
	}{
		{1000, 100, true}, // disturbed: run again
		{800, 99, true},   // the span settled, the work did not
		{795, 99, false},  // both settled
	} {
		r.k++
		if got, _ := r.again(prof(c.work, c.span)); got != c.more {
			t.Fatalf("run %d (work %d, span %d): again = %v, want %v", r.k, c.work, c.span, got, c.more)
		}
	}

	r = &runs{}
	outlier := &spanprofile.Trust{Outliers: []spanprofile.Outlier{{Context: 1, PathMean: 3, Mean: 1}}}
	for i, more := range []bool{true, true, true} {
		p := []*spanprofile.Profile{{Work: 1000, Span: 100, DurationNanos: 1e9, Trust: outlier}}
		r.k++
		if got, _ := r.again(p); got != more {
			t.Fatalf("run %d: settled totals with an outlier on the critical path: again = %v, want %v", i+1, got, more)
		}
	}
	r.k = maxAutoRuns
	if got, _ := r.again(prof(1000, 100)); got {
		t.Errorf("run %d of at most %d: again = true", r.k, maxAutoRuns)
	}
}
