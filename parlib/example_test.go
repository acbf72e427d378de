package parlib_test

import (
	"fmt"
	"sync/atomic"

	"github.com/spanprof/spanprof/parlib"
)

// fib computes Fibonacci numbers the Cilk way: spawn one recursive call, make
// the other on the calling goroutine, then sync.
func fib(n int) int {
	if n < 2 {
		return n
	}
	var g parlib.Group
	var x int
	g.Spawn(func() { x = fib(n - 1) })
	y := fib(n - 2)
	g.Sync()
	return x + y
}

func ExampleGroup() {
	fmt.Println(fib(20))
	// Output: 6765
}

func ExampleGroup_panic() {
	defer func() {
		p := recover().(*parlib.PanicError)
		fmt.Println("recovered:", p.Value)
	}()
	var g parlib.Group
	g.Spawn(func() { panic("out of range") })
	g.Spawn(func() {})
	g.Sync() // waits for both children, then re-panics
	// Output: recovered: out of range
}

func ExampleSpawn() {
	var fib func(n int) int
	fib = func(n int) int {
		if n < 2 {
			return n
		}
		x := parlib.Spawn(func() int { return fib(n - 1) })
		y := fib(n - 2)
		return x.Wait() + y
	}
	fmt.Println(fib(20))
	// Output: 6765
}

func ExampleDo() {
	data := []int{3, 1, 4, 1, 5, 9, 2, 6}
	var lo, hi int
	parlib.Do(
		func() {
			for _, v := range data[:4] {
				lo += v
			}
		},
		func() {
			for _, v := range data[4:] {
				hi += v
			}
		},
	)
	fmt.Println(lo, hi, lo+hi)
	// Output: 9 22 31
}

func ExampleFor() {
	squares := make([]int, 10)
	parlib.For(0, len(squares), 2, func(i int) {
		squares[i] = i * i
	})
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

func ExampleForRange() {
	// Sum 1..1000 with one local sum per piece, so that the shared total is
	// touched once per piece rather than once per index.
	var total atomic.Int64
	parlib.ForRange(1, 1001, 100, func(lo, hi int) {
		s := 0
		for i := lo; i < hi; i++ {
			s += i
		}
		total.Add(int64(s))
	})
	fmt.Println(total.Load())
	// Output: 500500
}

func ExampleForEach() {
	words := []string{"fork", "join", "spawn", "sync"}
	lengths := make([]int, len(words))
	parlib.ForEach(words, 1, func(i int, w *string) {
		lengths[i] = len(*w)
		*w += "!"
	})
	fmt.Println(words, lengths)
	// Output: [fork! join! spawn! sync!] [4 4 5 4]
}

func ExampleReady() {
	square := func(n int) *parlib.Task[int] {
		if n < 2 {
			return parlib.Ready(n) // nothing worth a goroutine
		}
		return parlib.Spawn(func() int { return n * n })
	}
	a, b := square(1), square(12)
	fmt.Println(a.Wait(), b.Wait())
	// Output: 1 144
}
