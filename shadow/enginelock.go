package shadow

import (
	"sync"
	"sync/atomic"
)

// engineLock is the engine's lock in parallel accounting (parallel.go). It
// hands the engine to the goroutine that asked for it last, not first.
//
// Under load the lock is never free: every goroutine of a fork/join
// program that runs soon asks for it, and one that waits is parked, its
// processor starting the next runnable goroutine, which soon parks too.
// sync.Mutex, once a waiter has waited a millisecond, serves its waiters
// in order of arrival, and so takes the spawns and ends of the program's
// tree breadth first: parallel fib at GOMAXPROCS=2 had 36,000-46,000
// goroutines parked at once (8,000 at GOMAXPROCS=1), and their stacks,
// memory and garbage collection made most of its cost. The newest waiter
// is the one deepest in the tree, so serving it first takes the tree
// depth first, as a single processor runs it. So that a waiter cannot be
// passed over for ever (a goroutine that polls would keep a waiter that it
// waits for at the back), every fifoEvery-th hand-over goes to the oldest.
type engineLock struct {
	// state is 1 while the lock is held, plus 2 for each parked waiter:
	// taking and releasing a free lock is one compare-and-swap each, as
	// with sync.Mutex.
	state atomic.Int64
	mu    sync.Mutex // guards the waiters, held for a few instructions
	// waiters is a stack of the parked goroutines, oldest at head.
	waiters []*lockWaiter
	head    int
	served  uint32
}

// fifoEvery is how often a hand-over goes to the oldest waiter.
const fifoEvery = 16

// A lockWaiter is a parked goroutine's wake-up: a hand-over sends on ch.
type lockWaiter struct{ ch chan struct{} }

var lockWaiters = sync.Pool{New: func() any { return &lockWaiter{ch: make(chan struct{}, 1)} }}

// Lock takes the lock, waiting for a hand-over if it is held.
func (l *engineLock) Lock() {
	if l.state.CompareAndSwap(0, 1) {
		return
	}
	l.lockSlow()
}

func (l *engineLock) lockSlow() {
	l.mu.Lock()
	for {
		s := l.state.Load()
		if s&1 == 0 {
			if l.state.CompareAndSwap(s, s|1) {
				l.mu.Unlock()
				return
			}
			continue
		}
		// Held: count this goroutine as a waiter before the holder can
		// look (it takes mu to pop one), and park.
		if l.state.CompareAndSwap(s, s+2) {
			break
		}
	}
	w := lockWaiters.Get().(*lockWaiter)
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()
	<-w.ch // handed over: the lock stayed held
	lockWaiters.Put(w)
}

// TryLock takes the lock if it is free, and reports whether it did. A lock
// with waiters is held: they wait only while it is.
func (l *engineLock) TryLock() bool {
	return l.state.CompareAndSwap(0, 1)
}

// Unlock hands the lock to a waiter, the newest as a rule, or frees it.
func (l *engineLock) Unlock() {
	if l.state.CompareAndSwap(1, 0) {
		return
	}
	l.unlockSlow()
}

func (l *engineLock) unlockSlow() {
	if l.state.Load()&1 == 0 {
		panic("shadow: unlock of an unlocked engine")
	}
	// Some goroutine counted itself as a waiter, and only unlockSlow
	// takes waiters off, under mu: the stack holds at least one.
	l.mu.Lock()
	var w *lockWaiter
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
	l.state.Add(-2) // the lock stays held: it passes to w
	l.mu.Unlock()
	w.ch <- struct{}{}
}
