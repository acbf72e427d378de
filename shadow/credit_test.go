package shadow

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestChainCreditsEndedAncestors runs, in parallel mode, a chain of
// goroutines each of which spawns the next and ends before it
// (examples/deepchain's shape), deterministically: a link starts only once
// every other goroutine is blocked, its parent gone. Each link's work must
// reach the invocation open around the first spawn, up past all the ended
// links above it, which credit's compressed walk skips: a shortcut that
// lost the spawn's event number or depth would drop the work of every link
// below the first few.
func TestChainCreditsEndedAncestors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		tab := &siteTable{}
		tab.add([]SiteInfo{
			{File: "a.go", Line: 1, Func: "chain", Caller: "main", Kind: spanprofile.KindCall},
			{File: "a.go", Line: 2, Func: "link", Caller: "chain", Kind: spanprofile.KindSpawn},
		})
		m := &goSynthetic{n: map[uintptr]uint64{}}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: parallelMode}, tab)
		withEngine(t, e)

		var release [n + 1]chan struct{}
		for i := range release {
			release[i] = make(chan struct{})
		}
		go func() {
			for k := 1; k <= n; k++ {
				synctest.Wait() // link k-1 has ended; link k waits
				close(release[k])
			}
		}()
		var wg sync.WaitGroup
		var link func(k int)
		link = func(k int) {
			<-release[k]
			m.add(int64(k))
			if k < n {
				wg.Add(1)
				Go(1, func() {
					defer WaitGroupDone(&wg)
					link(k + 1)
				})
			}
		}
		m.add(1)
		CallBegin(0)
		wg.Add(1)
		Go(1, func() {
			defer WaitGroupDone(&wg)
			link(1)
		})
		WaitGroupWait(&wg)
		CallEnd()
		m.add(1)
		p := e.stop()

		// Every link ends before the next starts, so when a link spawns,
		// the run holds four states: the root's, the ended link that
		// spawned this one, this one, and the new child. credit reaps
		// each ended link's state once its child has ended too (it points
		// the child past it); before, the chain kept all n.
		if got := len(e.allG); got > 4 {
			t.Errorf("%d goroutine states allocated for a chain of %d links; want at most 4", got, n)
		}
		// The longest path runs through every link's spawn, and each
		// spawn splices the records of ended links out of the chain it
		// starts from (splice), so the records in use at once stay a
		// few, not one per link: before, all n were live at the end.
		if got := e.rp.all; got > 12 {
			t.Errorf("%d path records allocated for a chain of %d links; want at most 12", got, n)
		}

		links := int64(n * (n + 1) / 2)
		if p.Work != links+2 {
			t.Errorf("work %d, want %d", p.Work, links+2)
		}
		for _, s := range p.BySite() {
			if s.Index != 0 {
				continue
			}
			if got := s.OnWork.TopCallSite; got.Count != 1 || got.Work != links {
				t.Errorf("the call around the chain: top-call-site %+v on work, want 1 invocation of work %d", got, links)
			}
		}
	})
}

// runLongLivedChain runs, in parallel mode, a chain of n goroutines each of
// which spawns the next and stays alive until the link live places below
// it has spawned, deterministically (one goroutine runs at a time), and
// returns the profile and the path records the run allocated. With naive,
// nothing is compressed or spliced (noCompress).
func runLongLivedChain(t *testing.T, n, live int, naive bool) (*spanprofile.Profile, int) {
	var p *spanprofile.Profile
	var records int
	synctest.Test(t, func(t *testing.T) {
		tab := &siteTable{}
		tab.add([]SiteInfo{
			{File: "a.go", Line: 1, Func: "chain", Caller: "main", Kind: spanprofile.KindCall},
			{File: "a.go", Line: 2, Func: "link", Caller: "chain", Kind: spanprofile.KindSpawn},
		})
		m := &goSynthetic{n: map[uintptr]uint64{}}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: parallelMode}, tab)
		e.noCompress = naive
		withEngine(t, e)

		release := make([]chan struct{}, n+1)
		finish := make([]chan struct{}, n+1)
		for i := range release {
			release[i], finish[i] = make(chan struct{}), make(chan struct{})
		}
		go func() {
			for k := 1; k <= n; k++ {
				synctest.Wait()
				close(release[k]) // link k runs, spawns k+1 and waits
				synctest.Wait()
				if k > live {
					close(finish[k-live])
				}
			}
			for k := max(1, n-live+1); k <= n; k++ {
				synctest.Wait()
				close(finish[k])
			}
		}()
		var wg sync.WaitGroup
		var link func(k int)
		link = func(k int) {
			<-release[k]
			m.add(int64(k))
			if k < n {
				wg.Add(1)
				Go(1, func() {
					defer WaitGroupDone(&wg)
					link(k + 1)
				})
			}
			<-finish[k]
			m.add(1)
		}
		m.add(1)
		CallBegin(0)
		wg.Add(1)
		Go(1, func() {
			defer WaitGroupDone(&wg)
			link(1)
		})
		WaitGroupWait(&wg)
		CallEnd()
		m.add(1)
		p = e.stop()
		p.ShadowBytes, p.TimeNanos, p.DurationNanos = 0, 0, 0
		records = e.rp.all
	})
	return p, records
}

// TestSpliceLongLivedLinks: links that stay alive while several later
// links spawn are passed as running by the spawns' splices, and end only
// after. Their records must still leave the chain once they have ended,
// or the chain keeps one per link, as it did before splicing; and the
// profile must be the one a run without splicing gives.
func TestSpliceLongLivedLinks(t *testing.T) {
	const n = 400
	for _, live := range []int{1, 2, 6, 20} {
		want, all := runLongLivedChain(t, n, live, true)
		got, records := runLongLivedChain(t, n, live, false)
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("links alive for %d spawns: spliced\n%s\nunspliced\n%s", live, gj, wj)
		}
		t.Logf("links alive for %d spawns: %d records, %d unspliced", live, records, all)
		if records > n/4 {
			t.Errorf("links alive for %d spawns: %d path records allocated for a chain of %d links (%d without splicing); want at most %d", live, records, n, all, n/4)
		}
	}
}
