package a

import "sync"

// Waits reached through calls of the package's functions, with the
// WaitGroup passed down as an argument: two and three calls deep.

func settle(wg *sync.WaitGroup) { wg.Wait() }

func level2(wg *sync.WaitGroup) { settle(wg) }

func level3(wg *sync.WaitGroup, n int) {
	if n > 0 {
		level2(wg)
	}
}

func twoDeep(xs []int) {
	var wg sync.WaitGroup
	for i := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			xs[i]++
			level2(&wg) // want `function spawned onto wg at deep.go:22 calls level2, which waits on wg \(at deep.go:8\): the Wait cannot return before the function itself returns \(deadlock\)`
		}()
	}
	wg.Wait()
}

func threeDeep(xs []int) {
	var wg sync.WaitGroup
	for i := range xs {
		wg.Go(func() {
			xs[i]--
			level3(&wg, i) // want `function spawned onto wg at deep.go:34 calls level3, which waits on wg \(at deep.go:8\)`
		})
	}
	wg.Wait()
}

// Another WaitGroup passed down: no cycle.
func otherDeep(xs []int) {
	var wg, inner sync.WaitGroup
	wg.Go(func() {
		inner.Add(1)
		go func() { defer inner.Done(); xs[0]++ }()
		level3(&inner, 1)
	})
	wg.Wait()
}
