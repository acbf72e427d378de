package idioms

import (
	"sync"

	"golang.org/x/sync/errgroup"
)

// fib spawns a literal that calls fib: each call has its own group g, so
// the child's wait on g is not on the parent's g, and the spawn is elidable.
func fib(n int) int {
	if n < 2 {
		return n
	}
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = fib(n - 1)
		return nil
	})
	y := fib(n - 2)
	g.Wait()
	return x + y
}

// pqsort passes nothing down: the WaitGroup is local to each call.
func pqsort(xs []int) {
	if len(xs) < 2 {
		return
	}
	p := partition(xs)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pqsort(xs[:p])
	}()
	pqsort(xs[p+1:])
	wg.Wait()
}

func partition(xs []int) int {
	last := len(xs) - 1
	i := 0
	for j := range last {
		if xs[j] < xs[last] {
			xs[i], xs[j] = xs[j], xs[i]
			i++
		}
	}
	xs[i], xs[last] = xs[last], xs[i]
	return i
}

// crash spawns the panic builtin.
func crash() {
	go panic("unreachable")
}
