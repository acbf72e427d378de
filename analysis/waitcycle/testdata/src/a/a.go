package a

import (
	"context"
	"iter"
	"sync"

	"github.com/spanprof/spanprof/parlib"
	"golang.org/x/sync/errgroup"
)

type Node struct {
	Value    int
	Children []*Node
}

// A recursive walker that passes its WaitGroup down and waits on it.
func (n *Node) walk(wg *sync.WaitGroup, visit func(*Node)) {
	defer wg.Done()
	visit(n)
	for _, c := range n.Children {
		wg.Add(1)
		go c.walk(wg, visit)
	}
	wg.Wait() // want `c.walk spawned onto wg at a.go:23 waits on wg: the Wait cannot return before c.walk itself returns \(deadlock\)`
}

// An errgroup child that returns the group's own Wait.
func crawl(ctx context.Context, urls []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, u := range urls {
		g.Go(func() error {
			if ctx.Err() != nil || u == "" {
				return ctx.Err()
			}
			return g.Wait() // want `function spawned onto g at a.go:33 waits on g: the Wait cannot return before the function itself returns \(deadlock\)`
		})
	}
	return g.Wait()
}

// wg.Go with a WaitGroup in a struct field, waited on through a helper.
type batch struct {
	wg   sync.WaitGroup
	out  []int
	todo []int
}

func (b *batch) flush() { b.wg.Wait() }

func (b *batch) run() {
	for i, x := range b.todo {
		b.wg.Go(func() {
			b.out[i] = x * x
			b.flush() // want `function spawned onto b.wg at a.go:54 calls b.flush, which waits on b.wg \(at a.go:50\): the Wait cannot return`
		})
	}
	b.wg.Wait()
}

// parlib: a child that syncs the group it was spawned into.
func tree(n *Node) int {
	var grp parlib.Group
	sum := n.Value
	for _, c := range n.Children {
		grp.Spawn(func() {
			sum += c.Value
			grp.Sync() // want `function spawned onto grp at a.go:67 waits on grp`
		})
	}
	grp.Sync()
	return sum
}

// Generics: a generic worker by pointer, waiting in a deferred literal.
func drain[T any](items []T, wg *sync.WaitGroup) {
	defer wg.Done()
	defer func() {
		wg.Wait() // want `drain\[T\] spawned onto wg at a.go:89 waits on wg`
	}()
	_ = items
}

func drainAll[T any](batches [][]T) {
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Add(1)
		go drain[T](b, &wg)
	}
	wg.Wait()
}

// Range-over-func: spawns in the loop body, each waiting on the shared group.
func each(seq iter.Seq[int]) {
	var wg sync.WaitGroup
	for x := range seq {
		wg.Go(func() {
			_ = x
			wg.Wait() // want `function spawned onto wg at a.go:98 waits on wg`
		})
	}
	wg.Wait()
}

// Negative cases.

// A child that waits on its own children.
func nested(n *Node) {
	var wg sync.WaitGroup
	for _, c := range n.Children {
		wg.Go(func() {
			var inner sync.WaitGroup
			for _, cc := range c.Children {
				inner.Go(func() { _ = cc.Value })
			}
			inner.Wait()
		})
	}
	wg.Wait()
}

// A child that waits on another group than the one it signals.
func other(ready *sync.WaitGroup) {
	var wg sync.WaitGroup
	wg.Go(func() { ready.Wait() })
	wg.Wait()
}

// A barrier: Done before Wait, not deferred.
func barrier(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			wg.Done()
			wg.Wait()
		}()
	}
	wg.Wait()
}

// The parent passes its group to a child that only signals it.
func signalOnly(wg *sync.WaitGroup) {
	defer wg.Done()
}

func parent() {
	var wg sync.WaitGroup
	wg.Add(1)
	go signalOnly(&wg)
	wg.Wait()
}

// A group per element of a slice: the index makes identity unknown.
func perSlot(wgs []sync.WaitGroup) {
	for i := range wgs {
		wgs[i].Go(func() { wgs[i].Wait() })
	}
}

// Recursion through a literal: each call of fib has its own group.
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

// Recursion with wg.Go and two rounds on one WaitGroup.
func mm(c []float64, n int) {
	if n <= 1 {
		c[0]++
		return
	}
	h := n / 2
	var wg sync.WaitGroup
	wg.Go(func() { mm(c[:h], h) })
	mm(c[h:], h)
	wg.Wait()
	wg.Go(func() { mm(c[h:], h) })
	mm(c[:h], h)
	wg.Wait()
}
