package sems

import "sync"

func work(int) {}

// before: the send before the spawn, wg.Add between, a deferred release.
func before(xs []int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, x := range xs {
		sem <- struct{}{} // acquire before
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }() // release before
			work(x)
		}()
	}
	wg.Wait()
}

// inChild: the send first in the child, the release its last statement.
func inChild(n, k int) {
	var wg sync.WaitGroup
	sem := make(chan bool, k)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			wg.Go(func() {
				sem <- true // acquire inChild
				work(i + j)
				<-sem // release inChild
			})
		}
	}
	wg.Wait()
}

// results: a send that is no semaphore's (the child never receives it).
func results(n int) {
	var wg sync.WaitGroup
	out := make(chan int, n)
	out <- 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		work(n)
	}()
	wg.Wait()
}

// other: the child receives from another channel: still not elidable.
func other(done chan struct{}) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 1)
	sem <- struct{}{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-done
		<-sem
	}()
	wg.Wait()
}
