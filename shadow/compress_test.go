package shadow

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/spanprof/spanprof/spanprofile"
)

// creditNode is a goroutine of a random spawn tree (TestCreditCompressionChangesNothing).
type creditNode struct {
	id    int // unique: the budget left when it was made
	work  int64
	call  bool          // its body runs inside an instrumented call
	pause int           // it blocks again after spawning this many children
	kids  []*creditNode // spawned in order
}

func genCreditTree(r *rand.Rand, depth int, budget *int) *creditNode {
	n := &creditNode{id: *budget, work: int64(1 + r.IntN(9)), call: r.IntN(2) == 0}
	for *budget > 0 && depth < 6 && r.IntN(3) != 0 {
		*budget--
		n.kids = append(n.kids, genCreditTree(r, depth+1, budget))
	}
	n.pause = r.IntN(len(n.kids) + 2) // past the last: no pause
	return n
}

// runCreditTree runs tree in parallel mode, releasing its goroutines one at a
// time in an order drawn from seed, and returns the profile. A goroutine
// waits to be released before it runs, and may block again partway
// (pause), so that its children end before it, after it, or around its
// pause; every goroutine joins the root's WaitGroup and none waits for its
// own children, so ended goroutines with live children, which credit's
// compression points past and reaps, are common. With naive, credit walks
// up the ended states without compressing, and reaps none of them early,
// and spawns leave the records of ended frames on their chains (splice).
func runCreditTree(t *testing.T, tree *creditNode, seed uint64, naive bool) *spanprofile.Profile {
	var p *spanprofile.Profile
	synctest.Test(t, func(t *testing.T) {
		e, m := syntheticEngine(t, naive,
			SiteInfo{File: "a.go", Line: 1, Func: "root", Caller: "main", Kind: spanprofile.KindCall},
			SiteInfo{File: "a.go", Line: 2, Func: "node", Caller: "node", Kind: spanprofile.KindSpawn},
			SiteInfo{File: "a.go", Line: 3, Func: "body", Caller: "node", Kind: spanprofile.KindCall})

		// The goroutines waiting to be released, each known by its node
		// and whether it paused: goroutines started together block in
		// any order, the release goes by key.
		type waiter struct {
			key int
			ch  chan struct{}
		}
		var mu sync.Mutex
		var blocked []waiter
		wait := func(key int) {
			ch := make(chan struct{})
			mu.Lock()
			blocked = append(blocked, waiter{key, ch})
			mu.Unlock()
			<-ch
		}
		var wg sync.WaitGroup
		var run func(n *creditNode)
		run = func(n *creditNode) {
			wait(2 * n.id)
			m.add(n.work)
			if n.call {
				CallBegin(2)
			}
			for i, k := range n.kids {
				if i == n.pause {
					wait(2*n.id + 1)
				}
				m.add(1)
				wg.Add(1)
				Go(1, func() {
					defer WaitGroupDone(&wg)
					run(k)
				})
			}
			if n.pause == len(n.kids) {
				wait(2*n.id + 1)
			}
			m.add(1)
			if n.call {
				CallEnd()
			}
		}

		m.add(1)
		CallBegin(0)
		wg.Add(1)
		Go(1, func() {
			defer WaitGroupDone(&wg)
			run(tree)
		})
		// Release one blocked goroutine at a time, once every other is
		// blocked: the order of events is the seed's alone.
		r := rand.New(rand.NewPCG(seed, 5))
		driven := make(chan struct{})
		go func() {
			defer close(driven)
			for {
				synctest.Wait()
				mu.Lock()
				if len(blocked) == 0 {
					mu.Unlock()
					return
				}
				slices.SortFunc(blocked, func(a, b waiter) int { return a.key - b.key })
				i := r.IntN(len(blocked))
				ch := blocked[i].ch
				blocked = append(blocked[:i], blocked[i+1:]...)
				mu.Unlock()
				close(ch)
			}
		}()
		// Every goroutine has ended before the wait, so that none takes
		// the engine at the same time as another: a goroutine that found
		// it taken would park on a channel of the engine lock's pool,
		// which a later test's bubble must not reuse.
		<-driven
		WaitGroupWait(&wg)
		CallEnd()
		m.add(1)
		p = e.stop()
		p.ShadowBytes, p.TimeNanos, p.DurationNanos = 0, 0, 0
	})
	return p
}

// TestCreditCompressionChangesNothing runs random spawn trees whose
// goroutines end in random orders, each with credit's path compression and
// with a naive walk, and wants the same profile: pointing ended states past
// their ended ancestors, and reaping those no state points at, must send
// every child's work where the naive walk up the ancestors does. It fails
// if compression keeps the spawn's event number or depth of the wrong link,
// or reaps a state that something still points at (the state is reused and
// the walk goes astray). Splicing is off in the naive runs too, but only
// the root waits here: the parallel oracle, whose frames wait for their own
// children, is what caught a splice that took out a running frame's record.
func TestCreditCompressionChangesNothing(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 40
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		budget := 4 + r.IntN(30)
		tree := genCreditTree(r, 0, &budget)
		want := runCreditTree(t, tree, seed, true)
		got := runCreditTree(t, tree, seed, false)
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("seed %d: compressed\n%s\nnaive\n%s", seed, gj, wj)
		}
	}
}
