package shadow

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/parlib"
	"github.com/spanprof/spanprof/spanprofile"
)

// TestParlibForOnSpan: a parallel loop that is the whole program is on the
// critical path, with all of the program's work and most of its span, in
// both modes. parlib's halves join one flat group, so the path through a
// piece leaves every enclosing half before that half ends; before the loop
// was an invocation of its own, the site had local span on the span and
// nothing on span, and in parallel mode the work of pieces that outlived
// their spawning half was lost.
func TestParlibForOnSpan(t *testing.T) {
	measure := steadyMeasure()
	base := register([]SiteInfo{
		{File: "loop_test.go", Line: 1, Func: "shadow.TestParlibForOnSpan.func1", Caller: "shadow.TestParlibForOnSpan", Kind: spanprofile.KindSpawn},
	})
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) {
			// The program's span is a fraction of a millisecond: with
			// other processes on the cores one parallel-mode run can
			// read a piece's thread hand-off as part of the span (67%
			// on the loop's site was seen). Up to three runs; the
			// structure must show in one, and a wrong one fails all.
			var fails []string
			for range 3 {
				msg := parlibForRun(t, mode, measure, base)
				if msg == "" {
					return
				}
				fails = append(fails, msg)
			}
			t.Errorf("in each of 3 runs: %s", strings.Join(fails, "; "))
		})
	}
}

// parlibForRun profiles TestParlibForOnSpan's loop once and says what is
// wrong with the profile, "" for nothing.
func parlibForRun(t *testing.T, mode runMode, measure string, base SiteID) string {
	t.Helper()
	unstart() // after the run of an earlier test
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	if err := start(options{Out: out, Mode: mode, Measure: measure, Burden: 1000}); err != nil {
		t.Fatal(err)
	}
	defer unstart()
	sums := make([]int, 64)
	// Pieces of about 0.7 ms, so that the span is long next to the
	// program's few strands outside the loop: with pieces of 40 µs, under
	// the race detector at -cpu 2 and 8, those strands (10-43 µs) took the
	// loop's site to 81-90% of the span.
	ParlibFor(base, parlib.For, 0, len(sums), 1, func(i int) { sums[i] = busy(2_000_000) })
	if err := stopAndWrite(); err != nil {
		t.Fatal(err)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var site spanprofile.SiteMeasurement
	for _, s := range p.BySite() {
		if s.Site.File == "loop_test.go" {
			site = s
		}
	}
	on := site.OnSpan.TopCallSite
	t.Logf("%s, %s: work %d span %d; site on span: count %d work %d span %d", mode, measure, p.Work, p.Span, on.Count, on.Work, on.Span)
	if p.Span <= 0 || p.Span > p.Work {
		t.Fatalf("work %d, span %d: want 0 < span <= work", p.Work, p.Span)
	}
	if on.Count != 1 || on.Span < p.Span*9/10 || on.Span > p.Span {
		return fmt.Sprintf("the loop's site on span: count %d span %d, want 1 invocation with 90-100%% of the span %d", on.Count, on.Span, p.Span)
	}
	if w := site.OnWork.TopCallSite.Work; w < p.Work*9/10 || w > p.Work {
		return fmt.Sprintf("the loop's site on work: work %d, want 90-100%% of the program's %d", w, p.Work)
	}
	return ""
}

// unstart lets the next test start a run again: a program starts one.
func unstart() {
	startMu.Lock()
	defer startMu.Unlock()
	current, stopOnce = nil, sync.Once{}
}
