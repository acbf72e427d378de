package shadow

import (
	"fmt"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestLateRegisteredSites: a package whose site table registers after the
// run started (a package initialized late, a plugin) adds sites, functions
// and a goroutine site the engine has not sized its arrays for; its events
// must be profiled like the first package's, in both modes, and a spawn at
// its goroutine site must run as a goroutine in serial mode too. Until now
// only the integration tests came near this.
func TestLateRegisteredSites(t *testing.T) {
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) {
			tab := &siteTable{}
			early := tab.add([]SiteInfo{{File: "a.go", Line: 1, Func: "a.f", Caller: "main.main", Kind: spanprofile.KindCall}})
			m := &goSynthetic{n: map[uintptr]uint64{}}
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: mode}, tab)
			withEngine(t, e)
			CallBegin(early)
			m.add(1)
			CallEnd()

			// Each of the ways to an event must size the engine's arrays
			// for a table registered since: first calls, in new functions
			// and more than the arrays hold, then spawns, then, with
			// parallel accounting on (serial mode turned it on at the
			// goroutine site), another goroutine site.
			var late []SiteInfo
			for i := range 40 {
				late = append(late, SiteInfo{File: "b.go", Line: 10 + i, Func: "b.leaf", Caller: fmt.Sprintf("b.caller%d", i), Kind: spanprofile.KindCall})
			}
			calls := tab.add(late)
			for i := range SiteID(40) {
				CallBegin(calls + i)
				m.add(2)
				CallEnd()
			}
			spawns := []SiteInfo{
				{File: "c.go", Line: 1, Func: "c.talker", Caller: "c.par", Kind: spanprofile.KindSpawn, Goroutine: true},
				{File: "c.go", Line: 2, Func: "c.child", Caller: "c.par", Kind: spanprofile.KindSpawn},
			}
			goroutine := tab.add(spawns)
			spawn := goroutine + 1
			parent := getg()
			var childG, talkerG, laterG uintptr
			var wg sync.WaitGroup
			WaitGroupGo(goroutine, &wg, func() { talkerG = getg(); m.add(20) })
			WaitGroupGo(spawn, &wg, func() { childG = getg(); m.add(30) })
			m.add(4)
			later := tab.add([]SiteInfo{{File: "d.go", Line: 1, Func: "d.talker", Caller: "d.par", Kind: spanprofile.KindSpawn, Goroutine: true}})
			WaitGroupGo(later, &wg, func() { laterG = getg(); m.add(40) })
			m.add(3)
			WaitGroupWait(&wg)
			p := e.stop()

			if len(p.Sites) != 1+40+2+1 {
				t.Fatalf("the profile has %d sites, want %d", len(p.Sites), 1+40+2+1)
			}
			sites := p.BySite()
			for i := range 40 {
				if got := sites[int(calls)+i].OnWork.Local; got != (spanprofile.Triple{Count: 1, Work: 2, Span: 2}) {
					t.Errorf("late call site %d: local %+v, want one invocation of 2", i, got)
					break
				}
			}
			for _, c := range []struct {
				site SiteID
				work int64
			}{{spawn, 30}, {goroutine, 20}, {later, 40}} {
				if got := sites[c.site].OnWork.Local; got != (spanprofile.Triple{Count: 1, Work: c.work, Span: c.work}) {
					t.Errorf("late spawn site %s:%d: local %+v, want one child of %d", p.Sites[c.site].File, p.Sites[c.site].Line, got, c.work)
				}
			}
			// The spawns are beside what follows them: the span is
			// 1 + 80 + max(20, 30, 4 + max(40, 3)).
			if p.Work != 1+80+20+30+4+40+3 || p.Span != 1+80+4+40 {
				t.Errorf("work %d, span %d: want %d and %d", p.Work, p.Span, 1+80+20+30+4+40+3, 1+80+4+40)
			}
			if talkerG == parent || laterG == parent {
				t.Errorf("a spawn at a late goroutine site ran inline, on the spawning goroutine")
			}
			if (mode == serialMode) != (childG == parent) {
				t.Errorf("%s mode: the spawn at the late site ran on the spawning goroutine: %v", mode, childG == parent)
			}
		})
	}
}
