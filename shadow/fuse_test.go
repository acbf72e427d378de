package shadow

import (
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestFusedSpawnKeepsTopValues: the rewriter profiles a spawned literal
// made of one call as its spawn (g.Go(func() error { x = fib(n-1); return
// nil }) has no call site of fib(n-1) inside the spawn's; rewrite/fuse.go).
// Run on the event streams of fib with and without that inner call site,
// the engine must give the spawn and the call of fib(n-2) the same
// top-caller and top-call-site triples, on work and on span, and the same
// work and span: the engine finds recursion by site and by the function
// containing it, and the spawn's container is fib either way. Only the
// inner call's row goes, its local work becoming the spawn's.
func TestFusedSpawnKeepsTopValues(t *testing.T) {
	run := func(fused bool) *spanprofile.Profile {
		tab := &siteTable{}
		tab.add([]SiteInfo{
			{File: "fib.go", Line: 13, Func: "main.fib", Caller: "main.main", Kind: spanprofile.KindCall},
			{File: "fib.go", Line: 4, Func: "main.fib.func1", Caller: "main.fib", Kind: spanprofile.KindSpawn},
			{File: "fib.go", Line: 5, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindCall},
			{File: "fib.go", Line: 4, Column: 30, Func: "main.fib", Caller: "main.fib.func1", Kind: spanprofile.KindCall},
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
			if !fused {
				e.CallBegin(3)
			}
			fib(n - 1)
			if !fused {
				e.CallEnd()
			}
			e.SpawnEnd(obj)
			m.now += 2
			e.CallBegin(2)
			fib(n - 2)
			e.CallEnd()
			e.Wait(obj)
			m.now += 3
		}
		e.CallBegin(0)
		fib(20)
		e.CallEnd()
		return e.stop()
	}
	find := func(p *spanprofile.Profile, line, col int) (spanprofile.SiteMeasurement, bool) {
		for _, s := range p.BySite() {
			if s.Site.Line == line && s.Site.Column == col && s.OnWork.Local.Count > 0 {
				return s, true
			}
		}
		return spanprofile.SiteMeasurement{}, false
	}
	plain, fused := run(false), run(true)
	if plain.Work != fused.Work || plain.Span != fused.Span {
		t.Errorf("work %d, span %d fused; %d, %d with the inner call site", fused.Work, fused.Span, plain.Work, plain.Span)
	}
	for _, line := range []int{4, 5} {
		a, _ := find(plain, line, 0)
		b, ok := find(fused, line, 0)
		if !ok || a.OnWork.TopCaller.Work == 0 {
			t.Fatalf("line %d: no top-caller work", line)
		}
		for _, c := range []struct {
			what string
			x, y spanprofile.Triple
		}{
			{"top-caller on work", a.OnWork.TopCaller, b.OnWork.TopCaller},
			{"top-call-site on work", a.OnWork.TopCallSite, b.OnWork.TopCallSite},
			{"top-caller on span", a.OnSpan.TopCaller, b.OnSpan.TopCaller},
			{"top-call-site on span", a.OnSpan.TopCallSite, b.OnSpan.TopCallSite},
		} {
			if c.x != c.y {
				t.Errorf("line %d %s: %+v fused, %+v with the inner call site", line, c.what, c.y, c.x)
			}
		}
	}
	inner, ok := find(plain, 4, 30)
	if !ok {
		t.Fatal("no row of the inner call site")
	}
	if _, ok := find(fused, 4, 30); ok {
		t.Error("the inner call site has invocations, fused")
	}
	a, _ := find(plain, 4, 0)
	b, _ := find(fused, 4, 0)
	if got, want := b.OnWork.Local.Work, a.OnWork.Local.Work+inner.OnWork.Local.Work; got != want {
		t.Errorf("the spawn's local work fused %d, want the spawn's and the inner call's %d", got, want)
	}
}
