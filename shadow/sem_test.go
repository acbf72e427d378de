package shadow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestSemaphore: a buffered channel of capacity k used as a semaphore
// around spawns (emit_sem.go) is modelled as SetLimit(k) is: the children
// take one of k slots in spawn order, a slot frees where the child
// releases it, and an acquire that finds them all taken waits for the
// first to free. On random programs (sizes, capacities, the work between
// spawns, each child's work before and after its release, the acquire in
// the spawner or first in the child) the work and span must equal list
// scheduling's, computed here by brute force; the critical path's local
// spans must add up to the span, and the waits that moved a path must be
// recorded against the spawn site.
func TestSemaphore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for trial := range 400 {
		n := 1 + r.IntN(10)
		k := 1 + r.IntN(5)
		inChild := r.IntN(2) == 0
		gaps, before, after := make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range n {
			gaps[i], before[i], after[i] = r.Int64N(5), 1+r.Int64N(40), r.Int64N(3)*r.Int64N(10)
		}
		tail := r.Int64N(5)
		t.Run(fmt.Sprintf("%d/n%d/k%d/child%v", trial, n, k, inChild), func(t *testing.T) {
			tab := &siteTable{}
			site := tab.add([]SiteInfo{{File: "s.go", Line: 1, Func: "child", Caller: "main", Kind: spanprofile.KindSpawn}})
			m := &goSynthetic{n: map[uintptr]uint64{}}
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: serialMode}, tab)
			withEngine(t, e)
			var wg sync.WaitGroup
			sem := make(chan struct{}, k)
			for i := range n {
				m.add(gaps[i])
				if !inChild {
					SemAcquire(site, sem, struct{}{})
				}
				wg.Add(1)
				Go(site, func() {
					if inChild {
						SemAcquire(site, sem, struct{}{})
					}
					m.add(before[i])
					SemRelease(sem)
					m.add(after[i])
					WaitGroupDone(&wg)
				})
			}
			m.add(tail)
			WaitGroupWait(&wg)
			p := e.stop()

			// List scheduling over k slots in spawn order, by brute force.
			var now, work, waits, delay int64
			var frees, ends []int64
			for i := range n {
				now += gaps[i]
				start := now
				if len(frees) == k {
					j := slices.Index(frees, slices.Min(frees))
					if frees[j] > start {
						waits++
						delay += frees[j] - start
					}
					start = max(start, frees[j])
					frees = slices.Delete(frees, j, j+1)
				}
				if !inChild {
					now = start
				}
				frees = append(frees, start+before[i])
				ends = append(ends, start+before[i]+after[i])
				work += gaps[i] + before[i] + after[i]
			}
			work += tail
			span := max(now+tail, slices.Max(ends))
			if p.Work != work || p.Span != span {
				t.Errorf("gaps %v before %v after %v tail %d, capacity %d: work %d span %d, want %d and %d",
					gaps, before, after, tail, k, p.Work, p.Span, work, span)
			}
			var onPath int64
			for _, c := range p.Contexts {
				onPath += c.OnSpan.Local.Span
			}
			if onPath != p.Span {
				t.Errorf("local span on span adds up to %d, want the span %d", onPath, p.Span)
			}
			var got spanprofile.LimitUse
			if len(p.Limits) > 0 {
				got = p.Limits[0]
			}
			if want := (spanprofile.LimitUse{Site: int(site), N: int64(k), Waits: waits, Delay: delay}); waits > 0 && got != want || waits == 0 && len(p.Limits) != 0 {
				t.Errorf("limits %+v, want %+v", p.Limits, want)
			}
		})
	}
}

// TestSemaphoreEqualTasks: eight equal tasks under a semaphore of 2 have
// a parallelism of 2, of 1 a parallelism of 1, of 8 a parallelism of 8.
func TestSemaphoreEqualTasks(t *testing.T) {
	for _, c := range []struct {
		k   int
		par float64
	}{{2, 2}, {1, 1}, {3, 8.0 / 3}, {8, 8}} {
		tab := &siteTable{}
		site := tab.add([]SiteInfo{{File: "s.go", Line: 1, Func: "task", Caller: "main", Kind: spanprofile.KindSpawn}})
		m := &goSynthetic{n: map[uintptr]uint64{}}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: serialMode}, tab)
		old := current
		current = e
		var wg sync.WaitGroup
		sem := make(chan struct{}, c.k)
		for range 8 {
			SemAcquire(site, sem, struct{}{})
			wg.Add(1)
			Go(site, func() {
				defer WaitGroupDone(&wg)
				defer SemRelease(sem)
				m.add(100)
			})
		}
		WaitGroupWait(&wg)
		p := e.stop()
		current = old
		if got := p.Parallelism(); got != c.par {
			t.Errorf("semaphore of %d: parallelism %.3f (work %d, span %d), want %.3f", c.k, got, p.Work, p.Span, c.par)
		}
	}
}
