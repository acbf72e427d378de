// Command args calls its functions with arguments that make calls, joins
// and receives. The program makes them in the caller before the call, and
// so must the profile: stacks.txt has no site under consume, whose work is
// its own.
package main

import (
	"fmt"

	"github.com/spanprof/spanprof/parlib"
)

// work does n steps of real work.
//
//go:noinline
func work(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i % 7
	}
	return x
}

// consume does next to nothing.
//
//go:noinline
func consume(x int) int { return x + 1 }

//go:noinline
func pair(x int) (int, int) { return x, x + 1 }

//go:noinline
func both(a, b int) int { return a + b }

//go:noinline
func many(xs ...int) []int { return xs }

//go:noinline
func positive(ok bool) bool { return ok }

type acc struct{ total int }

//go:noinline
func (a *acc) self(n int) *acc {
	a.total += work(n)
	return a
}

//go:noinline
func (a *acc) add(xs ...int) {
	for _, x := range xs {
		a.total += x
	}
}

func main() {
	x := consume(work(1_000_000))
	y := consume(work(10) + work(20))
	a := &acc{}
	a.self(30).add(work(40), 1)
	a.self(50).add()
	a.add(many(work(60), 2)...)
	p, q := pair(work(70))
	ok := positive(work(80) > 0)
	accs := make([]acc, 2)
	accs[consume(0)].add(5)
	ch := make(chan int, 1)
	ch <- 7
	r := consume(<-ch)
	n := consume(len(many(1, 2)))
	for i, j := 0, 1; i < 3; i, j = pair(consume(i)) {
		n += j
	}
	t := parlib.Spawn(func() int { return work(1_000_000) })
	z := consume(t.Wait())
	s := both(pair(3))
	fmt.Println(x, y, a.total, p, q, ok, accs[1].total, r, n, z, s)
}
