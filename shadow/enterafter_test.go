package shadow

import (
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestEnterAfterChargesArgumentsToTheCaller drives the form the rewriter
// gives a call whose arguments make calls, Leave1(f(EnterAfter(x, site))):
// the program evaluates f's arguments in the caller before f runs, so a
// call in them (f(g())) is not inside f's invocation, and a join in them
// (f(t.Wait())) joins the caller, whose child does not lengthen f's span.
// Leave(Enter(site), f(g())) would begin f before g and the join.
func TestEnterAfterChargesArgumentsToTheCaller(t *testing.T) {
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) {
			m := &synthetic{}
			tab := &siteTable{}
			tab.add([]SiteInfo{
				{File: "a.go", Line: 1, Func: "child", Caller: "main", Kind: spanprofile.KindSpawn},
				{File: "a.go", Line: 2, Func: "f", Caller: "main", Kind: spanprofile.KindCall},
				{File: "a.go", Line: 3, Func: "g", Caller: "main", Kind: spanprofile.KindCall},
			})
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode}, tab)
			withEngine(t, e)
			f := func(x int) int { m.now += 1; return x }
			g := func() int { m.now += 10; return 1 }
			obj := unsafe.Pointer(new(wgStub))
			wait := func() int { join(obj); return 2 }

			m.now += 5
			spawn(0, obj, func() { m.now += 100 })
			x := Leave1(f(EnterAfter(wait(), 1)))               // f(t.Wait())
			y := Leave1(f(EnterAfter(Leave(Enter(2), g()), 1))) // f(g())
			z, _ := Leave2(func(a int) (int, int) { m.now += 1; return a, a }(EnterAfter(g(), 1)))
			if x != 2 || y != 1 || z != 1 {
				t.Fatalf("results %d %d %d, want 2 1 1", x, y, z)
			}
			p := e.stop()
			if p.Work != 5+100+3*1+2*10 || p.Span != 5+100+3+20 {
				t.Errorf("work %d span %d, want 128 and 128", p.Work, p.Span)
			}
			sites := p.BySite()
			want := spanprofile.Triple{Count: 3, Work: 3, Span: 3}
			if got := sites[1].OnWork.TopCallSite; got != want {
				t.Errorf("f's top-call-site measurement %+v, want %+v: g or the join charged to f", got, want)
			}
			for _, c := range p.Contexts {
				if len(c.Stack) > 1 {
					t.Errorf("context %v: an invocation inside another", c.Stack)
				}
			}
		})
	}
}

// TestEnterAfterAllocatesNothing: the generic EnterAfter and Leave1 of
// the hot path allocate nothing, for a word and for a larger value.
func TestEnterAfterAllocatesNothing(t *testing.T) {
	e := clockEngine(t)
	withEngine(t, e)
	var v [5]int
	step := func() {
		sink += Leave1(EnterAfter(3, 1))
		v = Leave1(EnterAfter(v, 1))
		a, b := Leave2(EnterAfter(1, 1), 2)
		sink += a + b
	}
	for i := 0; i < 100; i++ {
		step()
	}
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Errorf("%v allocations per EnterAfter and Leave1; want 0", a)
	}
}
