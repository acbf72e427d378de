package shadow

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// actEntry is the model of an activity node: a site, its function and the
// context of its outermost invocation.
type actEntry struct{ site, fn, ctx int32 }

// actState is one goroutine's activity list in the pool, beside its model:
// the inherited entries and the ones it pushed, innermost last.
type actState struct {
	head      actRef
	inherited []actEntry
	own       []actEntry
}

// TestActivityListsAgainstModel runs random goroutines that push and pop
// their sites' outermost invocations, spawn children that share their
// lists and end in any order, the parents' invocations ending before
// their children do among them, and checks every lookup against a copy of
// each list kept as a slice, and that the pool frees every node at the end.
func TestActivityListsAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		var ap actPool
		live := []*actState{{}}
		const sites = 12
		fnOf := func(s int32) int32 { return s / 3 }
		for step := 0; step < 400; step++ {
			st := live[r.IntN(len(live))]
			model := append(slices.Clone(st.inherited), st.own...)
			s := int32(r.IntN(sites))
			// Every lookup agrees with the model.
			outer, fnOpen := ap.find(st.head, s, fnOf(s))
			i := slices.IndexFunc(model, func(a actEntry) bool { return a.site == s })
			wantFn := slices.ContainsFunc(model, func(a actEntry) bool { return a.fn == fnOf(s) })
			if (outer != 0) != (i >= 0) || fnOpen != wantFn {
				t.Fatalf("seed %d step %d: find(%d) = %d, %v; model %v", seed, step, s, outer, fnOpen, model)
			}
			if outer != 0 && ap.slab[outer].ctx != model[i].ctx {
				t.Fatalf("seed %d step %d: site %d folds to context %d, want %d", seed, step, s, ap.slab[outer].ctx, model[i].ctx)
			}
			switch op := r.IntN(10); {
			case op < 4 && outer == 0: // an outermost invocation begins
				ctx := int32(r.IntN(1000))
				ap.push(&st.head, s, fnOf(s), ctx)
				st.own = append(st.own, actEntry{s, fnOf(s), ctx})
			case op < 7 && len(st.own) > 0: // the innermost one ends
				top := st.own[len(st.own)-1]
				ap.pop(&st.head, top.site)
				st.own = st.own[:len(st.own)-1]
			case op < 8: // a spawn: the child starts from the parent's list
				c := &actState{inherited: model}
				ap.share(&c.head, st.head)
				live = append(live, c)
			case op < 9 && len(live) > 1 && st != live[0]: // a child ends
				for len(st.own) > 0 {
					ap.pop(&st.head, st.own[len(st.own)-1].site)
					st.own = st.own[:len(st.own)-1]
				}
				ap.release(&st.head)
				live = slices.DeleteFunc(live, func(x *actState) bool { return x == st })
			}
		}
		for _, st := range live {
			for len(st.own) > 0 {
				ap.pop(&st.head, st.own[len(st.own)-1].site)
				st.own = st.own[:len(st.own)-1]
			}
			ap.release(&st.head)
		}
		if ap.live != 0 {
			t.Fatalf("seed %d: %d nodes live after every list was released", seed, ap.live)
		}
		free := 0
		for r := ap.free; r != 0 && free < len(ap.slab); r = ap.slab[r].next {
			free++
		}
		if len(ap.slab) > 0 && free != len(ap.slab)-1 {
			t.Fatalf("seed %d: %d nodes free of %d made", seed, free, len(ap.slab)-1)
		}
	}
}

// TestLiveStatesDoNotGrowWithSites holds 200 goroutines live at once in
// parallel mode, in a program of 10,000 sites: their shadow states must not
// hold memory per site. Each held three arrays over the sites and their
// functions, about 120 KB a goroutine here (1,000 such goroutines took
// 124 MB of heap; with the lists of open sites, 1.6 MB).
func TestLiveStatesDoNotGrowWithSites(t *testing.T) {
	e := parallelEngine(t, benchTableOf(10000))
	old := current
	current = e
	defer func() { current = old }()
	const n = 200
	var wg, started sync.WaitGroup
	block := make(chan struct{})
	for range n {
		wg.Add(1)
		started.Add(1)
		Go(0, func() {
			defer WaitGroupDoneLast(&wg)
			started.Done()
			<-block
		})
	}
	started.Wait()
	got := e.shadowBytes()
	close(block)
	WaitGroupWait(&wg)
	e.stop()
	if got > 1<<20 {
		t.Errorf("%d goroutines live over 10,000 sites hold %d bytes of shadow state, want under 1 MiB", n, got)
	}
}
