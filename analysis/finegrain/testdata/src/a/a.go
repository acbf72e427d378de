package a

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/spanprof/spanprof/parlib"
	"golang.org/x/sync/errgroup"
)

func affine(xs, ys []float64) {
	n := len(xs)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { // want `wg.Go per loop iteration for a tiny body \(no loop, no costly call\): each costs more to start than it does work; give each goroutine a chunk of iterations, e.g. parlib.For\(lo, hi, grain, body\)`
			ys[i] = 2*xs[i] + 1
		})
	}
	wg.Wait()
}

func total(xs []int) int64 {
	var sum atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < len(xs); i++ {
		wg.Add(1)
		go func() { // want `go statement per loop iteration for a tiny body`
			defer wg.Done()
			sum.Add(int64(xs[i]))
		}()
	}
	wg.Wait()
	return sum.Load()
}

func square(i int) int { return i * i }

func squares(out []int) {
	var grp parlib.Group
	for i := range len(out) {
		grp.Spawn(func() { // want `spawn per loop iteration for a tiny body`
			out[i] = square(i)
		})
	}
	grp.Sync()
}

// Generics: a generic element type, bounds from a parameter.
func double[T ~int | ~float64](xs []T) {
	var wg sync.WaitGroup
	for i := range len(xs) {
		wg.Go(func() { // want `wg.Go per loop iteration for a tiny body`
			xs[i] *= 2
		})
	}
	wg.Wait()
}

// errgroup with WithContext and SetLimit: reported, no fix (the function
// returns an error that parlib.For's body cannot).
func mark(ctx context.Context, seen []bool) error {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range seen {
		g.Go(func() error { // want `g.Go per loop iteration for a tiny body`
			seen[i] = true
			return nil
		})
	}
	return g.Wait()
}

// A labelled loop: reported, no fix.
func labelled(xs []int) {
	var wg sync.WaitGroup
outer:
	for i := range len(xs) {
		if xs[i] < 0 {
			break outer
		}
		wg.Go(func() { xs[i]++ }) // want `wg.Go per loop iteration for a tiny body`
	}
	wg.Wait()
}

// A bound that changes: reported, no fix.
func shrinking(xs []int, n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Go(func() { xs[i] = 0 }) // want `wg.Go per loop iteration for a tiny body`
		n--
	}
	wg.Wait()
}

// Negative cases.

// Each goroutine runs a chunk: it has a loop.
func chunked(xs []int, grain int) {
	var wg sync.WaitGroup
	for lo := 0; lo < len(xs); lo += grain {
		wg.Go(func() {
			for i := lo; i < min(lo+grain, len(xs)); i++ {
				xs[i]++
			}
		})
	}
	wg.Wait()
}

// A few goroutines: the trip count is a small constant.
func few(xs *[4]int) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { xs[i]++ })
	}
	for i := range xs {
		wg.Go(func() { xs[i]-- })
	}
	for i := 0; i < 8; i++ {
		wg.Go(func() { _ = i })
	}
	wg.Wait()
}

// parlib's own loop chunks its work.
func parallelFor(xs []int) {
	for range 100 {
		parlib.For(0, len(xs), 0, func(i int) { xs[i]++ })
	}
}
