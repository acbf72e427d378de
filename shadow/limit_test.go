package shadow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestGroupLimit: in serial mode a group's children under SetLimit(k) take
// one of k slots each, in spawn order, and a spawn that finds them all
// taken waits for the first to free (limit.go). On random groups (sizes,
// limits, children's work and the parent's work between spawns) the span
// must equal list scheduling's, computed here by brute force, and the work
// the sum; with no limit, or a limit the group never reaches, the span is
// the longest child's path as before.
func TestGroupLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		n := 1 + r.IntN(10)
		k := r.IntN(6) - 1 // -1: no limit
		gaps := make([]int64, n)
		works := make([]int64, n)
		for i := range n {
			gaps[i], works[i] = r.Int64N(5), 1+r.Int64N(40)
		}
		tail := r.Int64N(5)
		if k == 0 {
			continue // SetLimit(0): Go blocks for ever
		}
		t.Run(fmt.Sprintf("%d/n%d/k%d", trial, n, k), func(t *testing.T) {
			tab := &siteTable{}
			site := tab.add([]SiteInfo{{File: "g.go", Line: 1, Func: "child", Caller: "main", Kind: spanprofile.KindSpawn}})
			m := &goSynthetic{n: map[uintptr]uint64{}}
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: serialMode}, tab)
			withEngine(t, e)
			var g errgroup.Group
			GroupSetLimit(&g, k)
			for i := range n {
				m.add(gaps[i])
				GroupGo(site, &g, func() error { m.add(works[i]); return nil })
			}
			m.add(tail)
			if err := GroupWait(&g); err != nil {
				t.Fatal(err)
			}
			p := e.stop()

			// List scheduling over k slots, by brute force.
			var now int64
			var ends []int64
			for i := range n {
				now += gaps[i]
				if k > 0 && len(ends) == k {
					j := slices.Index(ends, slices.Min(ends))
					now = max(now, ends[j])
					ends = slices.Delete(ends, j, j+1)
				}
				ends = append(ends, now+works[i])
			}
			span := max(now+tail, slices.Max(ends))
			var work int64
			for i := range n {
				work += gaps[i] + works[i]
			}
			work += tail
			if p.Work != work || p.Span != span {
				t.Errorf("gaps %v works %v tail %d, limit %d: work %d span %d, want %d and %d", gaps, works, tail, k, p.Work, p.Span, work, span)
			}
			// The critical path's local span adds up to the span.
			var onPath int64
			for _, c := range p.Contexts {
				onPath += c.OnSpan.Local.Span
			}
			if onPath != p.Span {
				t.Errorf("local span on span adds up to %d, want the span %d", onPath, p.Span)
			}
		})
	}
}

// TestGroupLimitEqualTasks: eight equal tasks under SetLimit(2) have a
// parallelism of 2, under SetLimit(1) of 1, and with no limit of 8.
func TestGroupLimitEqualTasks(t *testing.T) {
	for _, c := range []struct {
		limit int
		par   float64
	}{{2, 2}, {1, 1}, {3, 8.0 / 3}, {-1, 8}} {
		tab := &siteTable{}
		site := tab.add([]SiteInfo{{File: "g.go", Line: 1, Func: "task", Caller: "main", Kind: spanprofile.KindSpawn}})
		m := &goSynthetic{n: map[uintptr]uint64{}}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: serialMode}, tab)
		old := current
		current = e
		var g errgroup.Group
		GroupSetLimit(&g, c.limit)
		for range 8 {
			GroupGo(site, &g, func() error { m.add(100); return nil })
		}
		GroupWait(&g)
		p := e.stop()
		current = old
		if got := p.Parallelism(); got != c.par {
			t.Errorf("SetLimit(%d): parallelism %.3f (work %d, span %d), want %.3f", c.limit, got, p.Work, p.Span, c.par)
		}
	}
}
