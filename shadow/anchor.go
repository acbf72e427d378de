package shadow

import (
	"math/rand/v2"
	"sync"
)

// A goroutine spawned for real in parallel accounting finds its state
// through an anchor at the top of its own stack, not through the goroutine
// table (gtable.go): two words, a key and the state, that startG writes
// and leave clears, on the goroutine itself. Every goroutine spawned for
// real put its entry in the table at its start and took it out at its
// end, each under the table's writers' mutex with two atomic stores, and
// every event looked it up, from every processor. At GOMAXPROCS=2
// parallel stencil, fib and quicksort took 22%, 21% and 13% less CPU time
// with anchors (docs/benchmarks.md), and a spawn and its sync 7% less at
// one (BenchmarkParallelGoDoneLast).
//
// The runtime starts every goroutine with its first frame below 32 bytes
// that no frame uses ("extra space in case of reads slightly beyond
// frame", runtime.newproc1), and copies them with the rest of the stack
// when the stack grows or shrinks: the anchor is the top 16 of them.
// anchorsWork checks, once a process, that a goroutine's first frame
// leaves that room, and the engine uses the table alone if it does not,
// as it does on platforms other than amd64. The key is the goroutine's g
// xor a random number of the engine's, so that a word left on the stack by
// an earlier goroutine, or by another engine, matches only by a chance of
// one in 2⁶⁴, and only a matching key's state is ever read. A goroutine
// clears its anchor before it ends, but a stack that grew left a copy in
// the old stack, which the runtime may give to a later goroutine on the
// same g: so the state must also name the goroutine that anchored it and
// still runs it (anchored). The state an anchor holds is kept alive by the
// engine's allG: the collector does not see the anchor.
//
// The root state, which a hand-over moves from goroutine to goroutine
// (hold.go), stays in the table, and an anchor comes before the table: a
// goroutine that runs a child for real on its own stack (parlib's spawn
// may) finds the child's state until the child ends.

// anchorRoom is the room the top of a goroutine's stack must have above
// its first frame's saved frame pointer: the anchor's 16 bytes, and the
// first frame's return address and saved frame pointer.
const anchorRoom = 32

// anchorsWork reports whether anchors may be used in this process.
var anchorsWork = sync.OnceValue(func() bool {
	if !anchorArch {
		return false
	}
	c := make(chan uintptr, 1)
	// The closure is the goroutine's first frame: entryRoom measures it.
	go func() { c <- entryRoom() }()
	return <-c >= anchorRoom
})

// newAnchorKey returns a key for an engine's anchors, or 0 (no anchors)
// where they may not be used.
func newAnchorKey() uintptr {
	if !anchorsWork() {
		return 0
	}
	for {
		if k := uintptr(rand.Uint64()); k != 0 {
			return k
		}
	}
}

// stateOf returns the state of the calling goroutine: its anchor's, or
// else its entry's in the goroutine table, or nil. It is every event's
// first step in parallel accounting, so the anchor's check is one call
// (anchorOwn), and the goroutine's g is read only for the table.
func (e *engine) stateOf() *gstate {
	if k := e.anchorKey; k != 0 {
		if st := anchorOwn(k); st != nil {
			return st
		}
	}
	return e.par.byG.get(getg())
}

// anchored returns the state the calling goroutine anchored, or nil.
// The anchor's key is not enough: a stack that grows is copied, and the
// old copy, anchor and all, goes back to the runtime, which may give it to
// a later goroutine on the same g (x/sync's errgroup tests, rewritten,
// found a test's goroutine taking a state that had ended long before). So
// the state must also say that the goroutine anchored it and has not
// ended it (anchoredBy), which anchorOwn checks.
func (e *engine) anchored() *gstate {
	if k := e.anchorKey; k != 0 {
		return anchorOwn(k)
	}
	return nil
}
