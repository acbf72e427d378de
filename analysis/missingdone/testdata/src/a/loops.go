package a

import "sync"

// The Add(1) and the spawn at the same loop depth: each goroutine is
// counted, and must call Done.
func perItem(xs []int) {
	var wg sync.WaitGroup
	for i := range xs {
		wg.Add(1)
		go func() {
			if xs[i] < 0 {
				return // want `goroutine spawned at loops.go:11 returns here without calling wg.Done\(\)`
			}
			wg.Done()
			xs[i] = 0
		}()
	}
	wg.Wait()
}

// A ready signal: one Add(1) before a loop of goroutines of which only the
// first signals. The Add is not at the spawn's loop depth, so it does not
// count the goroutines: nothing to report.
func firstReady(n int) {
	var ready sync.WaitGroup
	ready.Add(1)
	for i := range n {
		go func() {
			if i != 0 {
				return
			}
			ready.Done()
		}()
	}
	ready.Wait()
}

// One Add(1) per row, goroutines per cell, the last of a row signals:
// the Add counts rows, not goroutines.
func rows(grid [][]int) {
	var wg sync.WaitGroup
	for _, row := range grid {
		wg.Add(1)
		for j := range row {
			go func() {
				if j != len(row)-1 {
					return
				}
				wg.Done()
			}()
		}
	}
	wg.Wait()
}
