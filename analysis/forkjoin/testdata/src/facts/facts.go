// Package facts exercises the per-function facts of forkjoin: Serial,
// Outside and StartedBy.
package facts

import (
	"context"
	"sync"
	"time"

	"example.com/sem"
)

func acquire(s *sem.Weighted) { s.Acquire(context.Background(), 1) }

func viaCall(s *sem.Weighted) { acquire(s) }

func viaLit(s *sem.Weighted) {
	f := func() { s.Release(1); acquire(s) }
	f()
}

func release(s *sem.Weighted) { s.Release(1) }

func spawns(s *sem.Weighted) {
	var wg sync.WaitGroup
	wg.Go(func() { viaCall(s) })
	wg.Go(func() { release(s) })
	wg.Wait()
	go s.Acquire(context.Background(), 1)
}

func sum(n int) int {
	if n == 0 {
		return 0
	}
	return n + sum(n-1)
}

func forks(n int) int {
	var wg sync.WaitGroup
	wg.Go(func() {})
	wg.Wait()
	return forks(n - 1)
}

func callsForks(n int) int { return forks(n) }

func callsValue(f func()) { f() }

func timers() {
	time.AfterFunc(time.Second, func() { go func() {}() })
	time.AfterFunc(time.Second, tick)
}

func tick() {}
