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
	const n = 40
	e, p := runChain(t, n, 0, false)

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
	// Each link's spawn is open in the list of open sites it starts
	// from, shared with the parent, whose own invocation of it has ended
	// (activity.go): every node is freed once the chain has ended.
	if e.ap.live != 0 {
		t.Errorf("%d activity nodes live after the run, want 0", e.ap.live)
	}

	links := int64(n*(n+1)/2 + n) // each link's k, and 1 after its spawn
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
}

// runChain runs, in parallel mode, a chain of n goroutines inside a call:
// link k adds k to its measure, spawns link k+1, and ends (adding 1) once
// the link live places below it has spawned, or at once with live 0. One
// goroutine runs at a time: a link starts only once every other goroutine
// is blocked. It returns the stopped engine and its profile. With naive,
// nothing is compressed or spliced (noCompress).
func runChain(t *testing.T, n, live int, naive bool) (*engine, *spanprofile.Profile) {
	var e *engine
	var p *spanprofile.Profile
	synctest.Test(t, func(t *testing.T) {
		var m *goSynthetic
		e, m = syntheticEngine(t, naive,
			SiteInfo{File: "a.go", Line: 1, Func: "chain", Caller: "main", Kind: spanprofile.KindCall},
			SiteInfo{File: "a.go", Line: 2, Func: "link", Caller: "chain", Kind: spanprofile.KindSpawn})

		release := make([]chan struct{}, n+1)
		finish := make([]chan struct{}, n+1)
		for i := range release {
			release[i], finish[i] = make(chan struct{}), make(chan struct{})
		}
		driven := make(chan struct{})
		go func() {
			defer close(driven)
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
			synctest.Wait() // the last link has ended
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
		// Every link has ended before the wait, so that no two
		// goroutines take the engine at once: one that found it taken
		// would park on a channel of the engine lock's pool, and a later
		// test outside this bubble that reused it would crash
		// (TestEngineLockOrder did, once, under make test's load).
		<-driven
		WaitGroupWait(&wg)
		CallEnd()
		m.add(1)
		p = e.stop()
		p.ShadowBytes, p.TimeNanos, p.DurationNanos = 0, 0, 0
	})
	return e, p
}

// syntheticEngine makes the running engine, in parallel mode, one over
// sites measured by a synthetic counter per goroutine, compressing and
// splicing nothing if naive.
func syntheticEngine(t *testing.T, naive bool, sites ...SiteInfo) (*engine, *goSynthetic) {
	tab := &siteTable{}
	tab.add(sites)
	m := &goSynthetic{n: map[uintptr]uint64{}}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: parallelMode}, tab)
	e.noCompress = naive
	withEngine(t, e)
	return e, m
}

// TestSpliceLongLivedLinks: links that stay alive while several later
// links spawn are passed as running by the spawns' splices, and end only
// after. Their records must still leave the chain once they have ended,
// or the chain keeps one per link, as it did before splicing; and the
// profile must be the one a run without splicing gives.
func TestSpliceLongLivedLinks(t *testing.T) {
	const n = 400
	for _, live := range []int{1, 2, 6, 20} {
		naive, want := runChain(t, n, live, true)
		e, got := runChain(t, n, live, false)
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("links alive for %d spawns: spliced\n%s\nunspliced\n%s", live, gj, wj)
		}
		records, all := e.rp.all, naive.rp.all
		t.Logf("links alive for %d spawns: %d records, %d unspliced", live, records, all)
		if records > n/4 {
			t.Errorf("links alive for %d spawns: %d path records allocated for a chain of %d links (%d without splicing); want at most %d", live, records, n, all, n/4)
		}
	}
}
