package shadow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// The case studies of the Cilkprof paper, as event streams with a
// deterministic cost model, must tell the paper's story.

// TestFibTopCallerRatio: Cilkprof Figure 7 — the top-caller work of fib's
// two recursive sites (spawn fib(n-1), call fib(n-2)) is in the golden ratio.
func TestFibTopCallerRatio(t *testing.T) {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "fib.go", Line: 13, Func: "main.fib", Caller: "main.main", Kind: spanprofile.KindCall},
		{File: "fib.go", Line: 4, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindSpawn},
		{File: "fib.go", Line: 5, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindCall},
	})
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, tab)
	var fib func(n int)
	fib = func(n int) {
		m.now += 7
		if n < 2 {
			return
		}
		obj := fibObjs[n]
		e.SpawnBegin(1)
		fib(n - 1)
		e.SpawnEnd(obj)
		m.now += 2
		e.CallBegin(2)
		fib(n - 2)
		e.CallEnd()
		e.Wait(obj)
		m.now += 3
	}
	e.CallBegin(0)
	fib(25)
	e.CallEnd()
	p := e.stop()
	bySite := p.BySite()
	var spawnWork, callWork float64
	for _, s := range bySite {
		switch s.Site.Line {
		case 4:
			spawnWork = float64(s.OnWork.TopCaller.Work)
		case 5:
			callWork = float64(s.OnWork.TopCaller.Work)
		}
	}
	phi := (1 + math.Sqrt(5)) / 2
	if r := spawnWork / callWork; math.Abs(r-phi)/phi > 0.01 {
		t.Errorf("top-caller work ratio of lines 4 and 5 = %.4f, want φ = %.4f", r, phi)
	}
	// Recursion folds: a handful of contexts, not one per call.
	if len(p.Contexts) > 8 {
		t.Errorf("fib(25) has %d contexts; recursion is not folded", len(p.Contexts))
	}
}

// TestQuicksortPartitionOnSpan: Cilkprof Figure 2 — partition, called
// serially at every level, is the site with the largest local span on span,
// and the parallelism is modest.
func TestQuicksortPartitionOnSpan(t *testing.T) {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "qsort.go", Line: 20, Func: "main.partition", Caller: "main.pqsort", Kind: spanprofile.KindCall},
		{File: "qsort.go", Line: 21, Func: "main.pqsort", Caller: "main.pqsort", Kind: spanprofile.KindSpawn},
		{File: "qsort.go", Line: 22, Func: "main.pqsort", Caller: "main.pqsort", Kind: spanprofile.KindCall},
		{File: "qsort.go", Line: 31, Func: "main.pqsort", Caller: "main.main", Kind: spanprofile.KindCall},
	})
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, tab)
	r := rand.New(rand.NewPCG(1, 1))
	var objs []*wgStub
	var pqsort func(n, depth int)
	pqsort = func(n, depth int) {
		m.now += 5
		if n <= 32 {
			m.now += uint64(n * 5) // insertion sort of a small range
			return
		}
		e.CallBegin(0)
		m.now += uint64(3 * n) // partition is linear
		e.CallEnd()
		left := n/4 + r.IntN(n/2)
		for len(objs) <= depth {
			objs = append(objs, new(wgStub))
		}
		obj := unsafe.Pointer(objs[depth])
		e.SpawnBegin(1)
		pqsort(left, depth+1)
		e.SpawnEnd(obj)
		e.CallBegin(2)
		pqsort(n-left-1, depth+1)
		e.CallEnd()
		e.Wait(obj)
	}
	e.CallBegin(3)
	pqsort(1_000_000, 0)
	e.CallEnd()
	p := e.stop()
	sites := p.BySite()
	slices.SortFunc(sites, func(a, b spanprofile.SiteMeasurement) int {
		return int(b.OnSpan.Local.Span - a.OnSpan.Local.Span)
	})
	if top := sites[0].Site; top.Func != "main.partition" {
		t.Errorf("top local span on span is %s at line %d, want main.partition", top.Func, top.Line)
	}
	if par := p.Parallelism(); par < 2 || par > 64 {
		t.Errorf("parallelism %.1f, want the low tens", par)
	}
	t.Logf("quicksort: work %d span %d parallelism %.1f", p.Work, p.Span, p.Parallelism())
}
