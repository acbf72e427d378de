package shadow

import (
	"sync"
	"sync/atomic"
)

// gtable finds a goroutine's shadow state in parallel accounting by the
// address of its g (getg), without the engine's lock and without a Go map:
// every event looks up its own goroutine's state, and a map lookup under
// the lock was a share of every event's cost.
//
// It is open addressing with linear probing over atomic words. Writers
// (startG, endG, a hand-over of the root state) take the table's own lock,
// not the engine's, so that a goroutine's start takes no turn at the
// engine; readers take no lock. A reader looks up
// only its own goroutine, whose entry that goroutine made (or, for the
// root state, a hand-over made before the goroutine's events) and which
// only it removes, except that a hand-over removes the old holder's: then
// the old holder finds nothing, as it should. So entries never move while
// published: a removal leaves a tombstone, and when live entries and
// tombstones fill half the table a new table is built and published whole;
// a reader still on the old one finds its own entry there, unchanged.
//
// Where anchors work (anchor.go) the table holds the root state alone;
// elsewhere every goroutine spawned for real adds an entry and removes it,
// so tombstones pile up fast: parallel fib made 318,000 entries with 8,000
// live at once, and rebuilt its table every 8,000 or so (2.3% of its CPU at
// GOMAXPROCS=1). So a put takes the first tombstone on its probe path, and
// a removal that leaves the last slot of a probe run empties it, and the
// tombstones before it (no probe goes past an empty slot, so none needs
// them). A slot may then hold another goroutine's entry by the time a
// reader whose own entry a hand-over removed reads its value: get checks
// the key again after the value, and the writer stores the value before
// the key, so a value read under a key still the reader's is the reader's.
type gtable struct {
	cur      atomic.Pointer[gslots]
	mu       sync.Mutex // writers
	live     int        // entries, for the tests
	rebuilds int        // for the tests
}

type gslots struct {
	keys []atomic.Uintptr // 0: empty; gTomb: removed
	vals []atomic.Pointer[gstate]
	used int // live entries and tombstones
}

// gTomb marks a removed entry: no g lives at address 1.
const gTomb = 1

func newGslots(n int) *gslots {
	return &gslots{keys: make([]atomic.Uintptr, n), vals: make([]atomic.Pointer[gstate], n)}
}

func (s *gslots) home(g uintptr) uintptr {
	return uintptr((uint64(g)*0x9E3779B97F4A7C15)>>32) & uintptr(len(s.keys)-1)
}

// get returns the state of goroutine g, or nil.
func (t *gtable) get(g uintptr) *gstate {
	s := t.cur.Load()
	if s == nil {
		return nil
	}
	mask := uintptr(len(s.keys) - 1)
	for i := s.home(g); ; i = (i + 1) & mask {
		switch s.keys[i].Load() {
		case g:
			v := s.vals[i].Load()
			if s.keys[i].Load() != g {
				return nil // removed, and the slot taken again, meanwhile
			}
			return v
		case 0:
			return nil
		}
	}
}

// put makes st the state of g and returns the one it replaces, or nil.
func (t *gtable) put(g uintptr, st *gstate) *gstate {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.cur.Load()
	if s == nil || 2*(s.used+1) > len(s.keys) {
		s = t.rebuild(s)
	}
	mask := uintptr(len(s.keys) - 1)
	tomb := -1
	for i := s.home(g); ; i = (i + 1) & mask {
		switch s.keys[i].Load() {
		case g:
			return s.vals[i].Swap(st)
		case gTomb:
			if tomb < 0 {
				tomb = int(i)
			}
		case 0:
			if tomb >= 0 {
				i = uintptr(tomb)
			} else {
				s.used++
			}
			// The value first: a reader that sees the key sees it.
			s.vals[i].Store(st)
			s.keys[i].Store(g)
			t.live++
			return nil
		}
	}
}

// del removes g's entry, if st is its state, and reports whether it did.
func (t *gtable) del(g uintptr, st *gstate) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.cur.Load()
	if s == nil {
		return false
	}
	mask := uintptr(len(s.keys) - 1)
	for i := s.home(g); ; i = (i + 1) & mask {
		switch s.keys[i].Load() {
		case g:
			if s.vals[i].Load() != st {
				return false
			}
			s.keys[i].Store(gTomb)
			s.vals[i].Store(nil)
			t.live--
			if s.keys[(i+1)&mask].Load() == 0 {
				// The end of a probe run: empty it back to its start.
				for s.keys[i].Load() == gTomb {
					s.keys[i].Store(0)
					s.used--
					i = (i - 1) & mask
				}
			}
			return true
		case 0:
			return false
		}
	}
}

// rebuild publishes a table with s's live entries and room for as many
// again, and returns it.
func (t *gtable) rebuild(s *gslots) *gslots {
	n := 64
	for n < 4*(t.live+1) {
		n *= 2
	}
	ns := newGslots(n)
	t.rebuilds++
	if s != nil {
		mask := uintptr(n - 1)
		for i := range s.keys {
			g := s.keys[i].Load()
			if g == 0 || g == gTomb {
				continue
			}
			j := ns.home(g)
			for ns.keys[j].Load() != 0 {
				j = (j + 1) & mask
			}
			ns.vals[j].Store(s.vals[i].Load())
			ns.keys[j].Store(g)
			ns.used++
		}
	}
	t.cur.Store(ns)
	return ns
}
