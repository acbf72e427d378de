package a

import "sync"

const many = 1000

// Constant trip counts above 64 are reported like any other: a thousand
// tiny goroutines cost far more to start than their work.
func manyConstant(xs *[1000]int, ys []int) {
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() { xs[i]++ }) // want `wg.Go per loop iteration for a tiny body`
	}
	for i := range many {
		wg.Go(func() { ys[i]++ }) // want `wg.Go per loop iteration for a tiny body`
	}
	for i := range xs {
		wg.Go(func() { xs[i]-- }) // want `wg.Go per loop iteration for a tiny body`
	}
	for i := 0; i < 65; i++ {
		wg.Go(func() { ys[i]-- }) // want `wg.Go per loop iteration for a tiny body`
	}
	for i := 10; i < 10+many; i++ {
		wg.Go(func() { ys[i%len(ys)]++ }) // want `wg.Go per loop iteration for a tiny body`
	}
	wg.Wait()
}

// At 64 they are still few: not reported.
func sixtyFour(xs *[64]int) {
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() { xs[i]++ })
	}
	for i := range xs {
		wg.Go(func() { xs[i]-- })
	}
	for i := 10; i < 74; i++ {
		wg.Go(func() { _ = i })
	}
	wg.Wait()
}
