// Command parlib uses every form of spanprof's parlib.
package main

import (
	"fmt"

	"github.com/spanprof/spanprof/parlib"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	x := parlib.Spawn(func() int { return fib(n - 1) })
	y := fib(n - 2)
	return x.Wait() + y
}

func main() {
	var g parlib.Group
	var a, b int
	g.Spawn(func() { a = fib(10) })
	g.Spawn(func() { b = fib(11) })
	g.Sync()
	fmt.Println(a, b)

	var c, d int
	parlib.Do(func() { c = fib(5) }, func() { d = fib(6) })
	fmt.Println(c, d)

	xs := make([]int, 100)
	parlib.For(0, len(xs), 10, func(i int) { xs[i] = i })
	sums := make([]int, 10)
	parlib.ForRange(0, 100, 10, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sums[lo/10] += xs[i]
		}
	})
	parlib.ForEach(xs, 25, func(i int, v *int) { *v *= 2 })
	fmt.Println(sums, xs[99])
	fmt.Println(parlib.Spawn(func() string { return "task" }).Wait())
}
