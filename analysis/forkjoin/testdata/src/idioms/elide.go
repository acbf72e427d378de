package idioms

import (
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func channels(ch chan int, done chan struct{}) {
	var wg sync.WaitGroup
	wg.Go(func() { ch <- 1 })
	wg.Go(func() { <-ch })
	wg.Go(func() {
		select {
		case <-done:
		default:
		}
	})
	wg.Go(func() {
		for range ch {
		}
	})
	wg.Go(func() { time.Sleep(time.Millisecond); <-time.After(time.Millisecond) })
	wg.Wait()
}

func syncs(c *sync.Cond, flag *atomic.Bool) {
	var wg sync.WaitGroup
	wg.Go(func() { c.Wait() })
	wg.Go(func() { runtime.Gosched() })
	wg.Go(func() {
		for {
			work(1)
		}
	})
	wg.Go(func() {
		for {
			if work(2) > 1 {
				break
			}
		}
	})
	wg.Go(func() {
		for !flag.Load() {
		}
	})
	wg.Go(func() { runtime.Goexit() })
	wg.Wait()
}

// waits: a child waiting on its parent's object, and on its own.
func waits(outer *sync.WaitGroup, ch chan int) {
	var wg sync.WaitGroup
	wg.Go(func() { outer.Wait() })
	wg.Go(func() {
		var inner sync.WaitGroup
		inner.Go(func() { work(1) })
		inner.Wait()
	})
	wg.Go(func() {
		var inner sync.WaitGroup
		inner.Go(func() { <-ch })
		inner.Wait()
	})
	wg.Wait()
}

// locks: a lock the spawner also takes, and one it does not.
func locks(mu, other *sync.Mutex, n *int) {
	var wg sync.WaitGroup
	mu.Lock()
	wg.Go(func() { mu.Lock(); *n++; mu.Unlock() })
	mu.Unlock()
	wg.Go(func() { other.Lock(); *n++; other.Unlock() })
	wg.Wait()
}

// values: code the analyzer cannot see, or sees only through a variable.
func values(f func(), ch chan int, sig chan os.Signal) {
	var wg sync.WaitGroup
	wg.Go(f)
	wg.Go(func() { f() })
	wg.Go(func() { signal.Notify(sig, os.Interrupt) })
	wg.Go(func() { fromVar(ch) })
	wg.Wait()
}

// fromVar is a package-level variable assigned one literal: calls of it
// are followed into the literal.
var fromVar = func(ch chan int) { <-ch }

// transitive: blocking through calls, with parameters bound to arguments.
func transitive(ch chan int) {
	var wg sync.WaitGroup
	wg.Go(func() { recv(ch) })
	wg.Go(func() { compute(3) })
	wg.Add(1)
	go deferrer(&wg)
	wg.Wait()
}

func recv(c chan int) int { return <-c }

func compute(n int) int {
	if n == 0 {
		return 0
	}
	return compute(n-1) + n
}

func deferrer(wg *sync.WaitGroup) {
	defer wg.Done()
	waitOn(wg)
}

func waitOn(wg *sync.WaitGroup) { wg.Wait() }

// mutual recursion: ping blocks only through pong.
func mutual(n int) {
	var wg sync.WaitGroup
	wg.Go(func() { pong(n) })
	wg.Wait()
}

func ping(n int, ch chan int) {
	if n > 0 {
		pong(n - 1)
	}
	<-ch
}

func pong(n int) { ping(n, nil) }
