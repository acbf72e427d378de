package shadow

import (
	"sync"
	"sync/atomic"
)

// engineLock is the engine's lock in parallel accounting (parallel.go). A
// goroutine that finds it held parks; an unlock wakes the goroutine that
// parked last, not first, and a goroutine that is running takes a free
// lock before the one woken does.
//
// Under load the lock is rarely free: every goroutine of a fork/join
// program that runs soon asks for it, and one that waits is parked, its
// processor starting the next runnable goroutine, which soon parks too.
// sync.Mutex, once a waiter has waited a millisecond, hands the lock to its
// waiters in order of arrival, and so takes the spawns and ends of the
// program's tree breadth first: parallel fib at GOMAXPROCS=2 had
// 36,000-46,000 goroutines parked at once (8,000 at GOMAXPROCS=1), and their
// stacks, memory and garbage collection made most of its cost. The newest
// waiter is the one deepest in the tree, so waking it first takes the tree
// depth first, as a single processor runs it (fib(27): 4.99 s of CPU → 1.47
// s, peak memory 376 → 49 MB; docs/benchmarks.md). A hand-over to the woken
// waiter, as sync.Mutex makes once starving, would make the lock wait for
// the waiter to be scheduled, and at GOMAXPROCS=1 every event a switch of
// goroutines (fib 57% slower); a running goroutine takes it instead, and
// the woken one parks again if it lost, as the newest. So that a waiter
// cannot be passed over for ever (a goroutine that polls would keep one
// that it waits for at the bottom), every fifoEvery-th wake-up goes to the
// oldest.
type engineLock struct {
	// state is lockHeld while the lock is held, plus lockWoken while a
	// waiter woken by an unlock has not tried again, plus lockWaiter for
	// each parked waiter. Taking a free lock is a load and a
	// compare-and-swap, releasing it one atomic add, whatever waiters
	// there are; mu is taken only to park a waiter or to wake one. A woken
	// waiter may wait long to run (at GOMAXPROCS=1, until the running
	// goroutine blocks), and fast paths that, like sync.Mutex's, took only
	// a state of zero sent every take and release through mu meanwhile:
	// 2.1 million of parallel fib's 2.5 million takes at GOMAXPROCS=1, and
	// 9,000 now.
	state atomic.Int64
	mu    sync.Mutex // guards the waiters, held for a few instructions
	// waiters is a stack of the parked goroutines, oldest at head.
	waiters []*waiter
	head    int
	served  uint32
	// free holds the wake-ups of waiters that have tried again, for the
	// next to park. A sync.Pool, which the collector empties, made a new
	// channel for many a wait, deep in the runtime's allocator on the
	// stack of a goroutine spawned moments before: 9,400 of parallel
	// fib's 52,000 stack copies at GOMAXPROCS=1 (see newG).
	free []*waiter
}

const (
	lockHeld   = 1
	lockWoken  = 2
	lockWaiter = 4
)

// fifoEvery is how often a wake-up goes to the oldest waiter.
const fifoEvery = 16

// A waiter is a parked goroutine's wake-up: an unlock sends on ch.
type waiter struct{ ch chan struct{} }

// Lock takes the lock, waiting for it if it is held.
//
// It and Unlock are small enough to inline: every turn at the engine
// takes and releases the lock, and their calls cost some 35 instructions a
// turn (callgrind, BenchmarkParallelGoDoneLast).
func (l *engineLock) Lock() {
	// Free, with no waiter nor one woken, the common case.
	if !l.state.CompareAndSwap(0, lockHeld) {
		l.lockSlow()
	}
}

func (l *engineLock) lockSlow() {
	// Free, with waiters: a running goroutine takes it first.
	if s := l.state.Load(); s&lockHeld == 0 && l.state.CompareAndSwap(s, s|lockHeld) {
		return
	}
	var w *waiter
	for {
		w = l.enqueue(w)
		if w == nil {
			return
		}
		<-w.ch
		// Woken: try again, with the goroutines that run meanwhile. One
		// that runs takes the lock without a switch of goroutines;
		// waiting for the woken one to be scheduled made every event at
		// GOMAXPROCS=1 a switch once the lock had had waiters.
		l.state.Add(-lockWoken)
	}
}

// enqueue takes the lock if it is free and returns nil, or else counts the
// calling goroutine as a waiter, which the holder's unlock then wakes, and
// returns its wake-up. It keeps done, the wake-up of the calling
// goroutine's last wait (nil: none), for the next.
//
// It is out of lockSlow so that lockSlow's frame stays small: a goroutine
// parks in the runtime's channel receive, deep, below the spawn that asked
// for the lock, where a spawn of fib that parked outgrew its new
// goroutine's 2 KB stack by a few bytes (see newG). That was seen with the
// lock made busy under a debugger; in fib's own runs at GOMAXPROCS=2 the
// copies it saves did not stand out of the noise.
//
//go:noinline
func (l *engineLock) enqueue(done *waiter) *waiter {
	l.mu.Lock()
	if done != nil {
		l.free = append(l.free, done)
	}
	for {
		s := l.state.Load()
		if s&lockHeld == 0 {
			if l.state.CompareAndSwap(s, s|lockHeld) {
				l.mu.Unlock()
				return nil
			}
			continue
		}
		if l.state.CompareAndSwap(s, s+lockWaiter) {
			break
		}
	}
	var w *waiter
	if n := len(l.free); n > 0 {
		w = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		w = &waiter{ch: make(chan struct{}, 1)}
	}
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()
	return w
}

// TryLock takes the lock if it is free, and reports whether it did.
func (l *engineLock) TryLock() bool {
	for {
		s := l.state.Load()
		if s&lockHeld != 0 {
			return false
		}
		if l.state.CompareAndSwap(s, s|lockHeld) {
			return true
		}
	}
}

// Unlock frees the lock and wakes a waiter, the newest as a rule.
func (l *engineLock) Unlock() {
	// No waiter and none woken, the common case, leaves 0.
	if s := l.state.Add(-lockHeld); s != 0 {
		l.unlockSlow(s)
	}
}

// unlockSlow is Unlock's end where the lock's state s, after the release,
// is not 0.
func (l *engineLock) unlockSlow(s int64) {
	if s&lockHeld != 0 || s < 0 {
		panic("shadow: unlock of an unlocked engine")
	}
	if s < lockWaiter || s&lockWoken != 0 {
		return
	}
	l.wake()
}

// wake wakes a waiter unless none is parked, one woken has not tried
// again yet, or the lock is held again (its holder's unlock will wake one).
func (l *engineLock) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		s := l.state.Load()
		if s < lockWaiter || s&(lockHeld|lockWoken) != 0 {
			return
		}
		if l.state.CompareAndSwap(s, s-lockWaiter+lockWoken) {
			break
		}
	}
	var w *waiter
	n := len(l.waiters)
	l.served++
	if l.served%fifoEvery == 0 {
		w = l.waiters[l.head]
		l.waiters[l.head] = nil
		l.head++
	} else {
		w = l.waiters[n-1]
		l.waiters[n-1] = nil
		l.waiters = l.waiters[:n-1]
	}
	if l.head == len(l.waiters) {
		l.waiters, l.head = l.waiters[:0], 0
	} else if l.head > 1024 && 2*l.head > len(l.waiters) {
		m := copy(l.waiters, l.waiters[l.head:])
		clear(l.waiters[m:])
		l.waiters, l.head = l.waiters[:m], 0
	}
	w.ch <- struct{}{} // buffered: never blocks
}
