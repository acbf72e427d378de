package shadow

import "testing"

// TestNewStateBatches: states made a batch at a time each get room for
// framesAtStart frames of their own, filling one state's room (and growing
// past it) touches no other state's frames, and each is in allG at its
// index.
func TestNewStateBatches(t *testing.T) {
	e := newEngine(config{Measure: &synthetic{}, MeasureName: "synthetic", Mode: parallelMode}, &siteTable{})
	const n = 2*stateBatch + 3
	var made []*gstate
	for range n {
		c := e.newState()
		if len(c.frames) != 0 || cap(c.frames) != framesAtStart {
			t.Fatalf("new state has %d frames, room for %d; want 0, %d", len(c.frames), cap(c.frames), framesAtStart)
		}
		if int(c.idx) >= len(e.allG) || e.allG[c.idx] != c {
			t.Fatalf("new state's index %d does not find it in allG", c.idx)
		}
		made = append(made, c)
	}
	for i, c := range made {
		for k := range framesAtStart + 1 { // one past the room: the slab grows
			c.frames = append(c.frames, frame{id: uint64(i*100 + k)})
		}
	}
	for i, c := range made {
		for k, f := range c.frames {
			if f.id != uint64(i*100+k) {
				t.Fatalf("state %d frame %d holds id %d: another state wrote over it", i, k, f.id)
			}
		}
	}
}

// TestNewGTakesTheLastExited: of the states of goroutines that ended at
// their last Done and have returned, the next spawn takes the one whose
// goroutine returned last (its memory the likeliest still in the cache),
// then the one before, and it takes them while it still has others free.
func TestNewGTakesTheLastExited(t *testing.T) {
	e := newEngine(config{Measure: &synthetic{}, MeasureName: "synthetic", Mode: parallelMode}, &siteTable{})
	e.enablePar()
	e.freeG = append(e.freeG, e.newState()) // a free state, older than any exited one
	var exited []*gstate
	for range 3 {
		c := e.newState()
		c.dead, c.early = true, true // as parDoneLast leaves it
		e.par.exited.push(c)         // as endG hands it back
		exited = append(exited, c)
	}
	for i := len(exited) - 1; i >= 0; i-- {
		if c := e.newG(e.root); c != exited[i] {
			t.Fatalf("spawn %d took state %d; want %d, the state of the goroutine that returned %s", len(exited)-i, c.idx, exited[i].idx, []string{"first", "second", "last"}[i])
		}
	}
	if e.par.exited.head.Load() != nil {
		t.Fatal("exited states left on the list after the spawns")
	}
}
