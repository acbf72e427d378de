// Command fuse spawns function literals made of one call, which the
// rewrite profiles as their spawns (the call is no site of its own, the
// spawn's site names the callee), and near misses, which keep the call as
// a site. A comment at each spawn says which (TestFuse checks them).
package main

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/spanprof/spanprof/parlib"
)

// work loops, so that its calls are instrumented though it is small.
func work(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func pair(n int) (int, error) {
	s := 0
	for i := range n {
		s += work(i)
	}
	if s < 0 {
		return 0, errors.New("negative")
	}
	return s, nil
}

func check(xs []int) error {
	for _, x := range xs {
		if x < 0 {
			return errors.New("negative")
		}
	}
	return nil
}

type tree struct {
	left, right *tree
	n           int
}

func (t *tree) walk() int {
	s := 0
	for ; t != nil; t = t.right {
		s += t.n + t.left.walk()
	}
	return s
}

func get(t *tree) *tree {
	for t != nil && t.n > 10 {
		t = t.left
	}
	return t
}

// half and (*tree).leftOf are leaf helpers: the compiler inlines them and
// they neither loop nor call, so a spawn's operands may call them.
func half(n int) int { return n / 2 }

func (t *tree) leftOf() *tree { return t.left }

// twice is inlined too, but calls.
func twice(n int) int { return work(n) + work(n) }

// first is inlined too, but receives.
func first(ch chan int) int { return <-ch }

func fib(n int) int {
	if n < 2 {
		return n
	}
	var g errgroup.Group
	var x int
	g.Go(func() error { x = fib(n - 1); return nil }) // fused main.fib
	y := fib(n - 2)
	g.Wait()
	return x + y
}

func quicksort(a []int) {
	for len(a) > 1 {
		p := partition(a)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); quicksort(a[:p]) }() // fused main.quicksort
		quicksort(a[p+1:])
		wg.Wait()
		return
	}
}

func partition(a []int) int {
	p := a[len(a)-1]
	i := 0
	for j := range a[:len(a)-1] {
		if a[j] < p {
			a[i], a[j] = a[j], a[i]
			i++
		}
	}
	a[i], a[len(a)-1] = a[len(a)-1], a[i]
	return i
}

func fused(t *tree, xs []int) {
	var wg sync.WaitGroup
	var a, b, c, d, e int
	var err error
	out := make([]int, 3)
	wg.Go(func() { t.walk() })                       // fused main.(*tree).walk
	wg.Go(func() { a = work(10) })                   // fused main.work
	wg.Go(func() { b, err = pair(20) })              // fused main.pair
	wg.Go(func() { out[len(xs)-4] = work(len(xs)) }) // fused main.work
	for i := range out[:2] {
		wg.Go(func() { out[i] += work(i) }) // fused main.work
	}
	wg.Go(func() { e = work(half(len(xs))) }) // fused main.work
	wg.Go(func() { t.leftOf().walk() })       // fused main.(*tree).walk
	wg.Add(3)
	go func(lo, hi int) { defer wg.Done(); c = work(hi - lo) }(2, 30) // fused main.work
	go func() { defer wg.Done(); slices.Sort(xs); return }()          // fused slices.Sort
	go func() {                                                       // fused main.work
		defer wg.Done()
		d = work(40)
	}()
	wg.Wait()
	fmt.Println(a, b, c, d, err, out, xs)

	var g errgroup.Group
	g.Go(func() error { return check(xs) })    // fused main.check
	g.TryGo(func() error { return check(xs) }) // fused main.check
	fmt.Println(g.Wait())

	var pg parlib.Group
	pg.Spawn(func() { a = work(50) }) // fused main.work
	pg.Sync()
	task := parlib.Spawn(func() int { return work(60) })        // fused main.work
	parlib.Do(func() { b = work(70) }, func() { e = work(80) }) // fused main.work main.work
	fmt.Println(a, b, e, task.Wait())
}

func kept(t *tree, xs []int) {
	var wg sync.WaitGroup
	var a, b, c, d, e int
	ch := make(chan int, 1)
	ch <- 5
	ch2 := make(chan int, 1)
	ch2 <- 6
	out := make([]int, 3)
	wg.Go(func() { work(1); work(2) })       // kept main.work main.work: two statements
	wg.Go(func() { a = work(work(3)) })      // kept main.work main.work: an argument calls
	wg.Go(func() { get(t).walk() })          // kept main.get main.(*tree).walk: the receiver calls
	wg.Go(func() { out[work(0)] = work(4) }) // kept main.work main.work: the left side calls
	wg.Go(func() { b = work(<-ch) })         // kept main.work: an argument receives
	wg.Go(func() { _ = work(twice(2)) })     // kept main.work: an argument's helper calls
	wg.Go(func() { _ = work(first(ch2)) })   // kept main.work: an argument's helper receives
	wg.Go(func() {                           // kept main.work: a call in a loop
		for i := range 3 {
			c += work(i)
		}
	})
	wg.Go(func() { d = 1; out[1] = work(6) }) // kept main.work: two statements
	wg.Add(2)
	go func() { // kept main.work: a deferred recover
		defer wg.Done()
		defer func() { _ = recover() }()
		e = work(7)
	}()
	go func() { out[2] = work(8); wg.Done() }() // kept main.work: Done not deferred
	wg.Wait()
	fmt.Println(a, b, c, d, e, out)
	var g errgroup.Group
	g.Go(func() error { work(9); return check(xs) })                 // kept main.work main.check: two calls
	g.Go(func() error { _ = work(10); return errors.New("ten") })    // kept main.work: returns an error it makes
	parlib.For(0, len(out), 1, func(i int) { out[i] = work(i + 1) }) // kept main.work: a loop body
	fmt.Println(out, g.Wait())
}

func main() {
	fmt.Println(fib(8))
	xs := []int{5, 3, 8, 1, 9, 2, 7}
	quicksort(xs)
	fmt.Println(xs)
	t := &tree{n: 1, left: &tree{n: 2}, right: &tree{n: 3}}
	fused(t, []int{3, 1, 2, 9, 8, 7})
	kept(t, xs)
}
