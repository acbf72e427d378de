package shadow

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestGtableOracle checks gtable against a Go map over random puts and
// removals, through several rebuilds.
func TestGtableOracle(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		var tab gtable
		want := map[uintptr]*gstate{}
		states := make([]gstate, 8)
		for range 2000 {
			g := uintptr(8 * (1 + r.IntN(300))) // g addresses: never 0 or gTomb
			st := &states[r.IntN(len(states))]
			switch r.IntN(3) {
			case 0, 1:
				if old := tab.put(g, st); old != want[g] {
					t.Fatalf("seed %d: put(%#x) replaced %p, want %p", seed, g, old, want[g])
				}
				want[g] = st
			case 2:
				ok := tab.del(g, st)
				if ok != (want[g] == st) {
					t.Fatalf("seed %d: del(%#x) = %v with %p there", seed, g, ok, want[g])
				}
				if ok {
					delete(want, g)
				}
			}
			if tab.live != len(want) {
				t.Fatalf("seed %d: %d live, want %d", seed, tab.live, len(want))
			}
			for range 4 {
				g := uintptr(8 * (1 + r.IntN(300)))
				if got := tab.get(g); got != want[g] {
					t.Fatalf("seed %d: get(%#x) = %p, want %p", seed, g, got, want[g])
				}
			}
		}
	}
}

// TestGtableConcurrent: a reader always finds its own entry while a writer
// adds and removes others' and rebuilds the table (run under -race).
func TestGtableConcurrent(t *testing.T) {
	var tab gtable
	var mu sync.Mutex
	own := make([]gstate, 4)
	for i := range own {
		tab.put(uintptr(8*(1000+i)), &own[i])
	}
	var wg sync.WaitGroup
	for i := range own {
		wg.Go(func() {
			g := uintptr(8 * (1000 + i))
			for range 20000 {
				if tab.get(g) != &own[i] {
					t.Errorf("reader %d lost its entry", i)
					return
				}
			}
		})
	}
	var other gstate
	for n := range 5000 {
		mu.Lock()
		g := uintptr(8 * (1 + n%700))
		if n%3 == 2 {
			tab.del(g, &other)
		} else {
			tab.put(g, &other)
		}
		mu.Unlock()
	}
	wg.Wait()
}

// TestGtableChurn: goroutines that come and go, a few hundred live at a
// time, reuse the table's slots instead of filling it with tombstones and
// rebuilding it (every few hundred puts before).
func TestGtableChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	var tab gtable
	var st gstate
	var live []uintptr
	next := uintptr(8)
	for range 200_000 {
		if len(live) < 300 && r.IntN(2) == 0 || len(live) == 0 {
			tab.put(next, &st)
			live = append(live, next)
			next += 8 * uintptr(1+r.IntN(50))
			continue
		}
		k := r.IntN(len(live))
		if !tab.del(live[k], &st) {
			t.Fatalf("del(%#x) found nothing", live[k])
		}
		live[k] = live[len(live)-1]
		live = live[:len(live)-1]
	}
	for _, g := range live {
		if tab.get(g) != &st {
			t.Fatalf("get(%#x) lost its entry", g)
		}
	}
	if tab.rebuilds > 20 {
		t.Errorf("%d rebuilds for 100,000 entries with at most 300 live, want at most 20", tab.rebuilds)
	}
}
