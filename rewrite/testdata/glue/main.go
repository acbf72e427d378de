// Command glue ends calls right before waits and spawns children whose
// last action is a Done, which the rewrite glues (the runtime reads the
// measure once for two events, or takes no event for the Done), and near
// misses, which it does not. A function named glued... must have a glued
// end or a last Done in its rewrite, one named kept... none (TestGlue).
package main

import (
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// work loops, so that its calls are instrumented though it is small.
func work(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

// step has no result: its call is a statement between CallBegin and
// CallEnd. It loops, so that its calls are instrumented.
func step(out *int, n int) {
	for i := range 2 {
		*out += work(n + i)
	}
}

func gluedAssign(n int) int {
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = work(n)
		return nil
	})
	y := work(n + 1)
	g.Wait()
	return x + y
}

func gluedStmt(n int) int {
	var wg sync.WaitGroup
	var x, y int
	wg.Add(1)
	go func() {
		defer wg.Done()
		step(&x, n)
	}()
	step(&y, n+1)
	wg.Wait()
	return x + y
}

func gluedIfInit(n int) (int, error) {
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = work(n)
		return nil
	})
	y := work(n + 2)
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return x + y, nil
}

func gluedReturn(n int, x, y *int) error {
	var g errgroup.Group
	g.Go(func() error {
		*x = work(n)
		return nil
	})
	step(y, n)
	return g.Wait()
}

// gluedDoneLast's child does more than one call: its Done still runs last.
func gluedDoneLast(n int) int {
	var wg sync.WaitGroup
	var x int
	wg.Add(1)
	go func() {
		defer wg.Done()
		x = work(n)
		x += work(n + 1)
	}()
	wg.Wait()
	return x
}

func keptBetween(n int) int {
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = work(n)
		return nil
	})
	y := work(n + 3)
	y++
	g.Wait()
	return x + y
}

func keptIndexed(n int) int {
	var g errgroup.Group
	xs := make([]int, 2)
	g.Go(func() error {
		xs[0] = work(n)
		return nil
	})
	xs[1] = work(n + 4)
	g.Wait()
	return xs[0] + xs[1]
}

func keptExpr(n int) int {
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = work(n)
		return nil
	})
	y := work(n+5) + 1
	g.Wait()
	return x + y
}

func groupOf(g *errgroup.Group) *errgroup.Group { return g }

func keptWaitCalls(n int) int {
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = work(n)
		return nil
	})
	y := work(n + 6)
	groupOf(&g).Wait()
	return x + y
}

// gluedDoneAtEnd's child calls Done as its last statement and defers
// nothing: the Done is its last action.
func gluedDoneAtEnd(n int) int {
	var wg sync.WaitGroup
	var x int
	wg.Add(1)
	go func() {
		x = work(n)
		wg.Done()
	}()
	wg.Wait()
	return x
}

// keptDoneAtEndDeferring's child calls Done last but defers a call, which
// runs after the Done.
func keptDoneAtEndDeferring(n int) int {
	var wg sync.WaitGroup
	var x int
	wg.Add(1)
	go func() {
		if n > 0 {
			defer func() { x++ }()
		}
		x = work(n)
		wg.Done()
	}()
	wg.Wait()
	return x
}

// keptDoneNotFirst's Done is not deferred first: another deferred call
// runs after it.
func keptDoneNotFirst(n int) int {
	var wg sync.WaitGroup
	var x int
	wg.Add(1)
	go func() {
		defer func() { x++ }()
		defer wg.Done()
		x = work(n)
	}()
	wg.Wait()
	return x
}

// keptGoDone's child ends by signalling the group, and its Done is a
// second signal of another object.
func keptGoDone(n int) int {
	var wg sync.WaitGroup
	var g errgroup.Group
	var x int
	wg.Add(1)
	g.Go(func() error {
		defer wg.Done()
		x = work(n)
		return nil
	})
	g.Wait()
	wg.Wait()
	return x
}

func main() {
	a := gluedAssign(10)
	b := gluedStmt(11)
	c, err := gluedIfInit(12)
	if err != nil {
		panic(err)
	}
	var d, d2 int
	if err := gluedReturn(13, &d, &d2); err != nil {
		panic(err)
	}
	d += d2
	e := gluedDoneLast(14) + gluedDoneAtEnd(21)
	f := keptBetween(15) + keptIndexed(16) + keptExpr(17) + keptWaitCalls(18) + keptDoneNotFirst(19) + keptGoDone(20) + keptDoneAtEndDeferring(22)
	fmt.Println(a, b, c, d, e, f)
}
