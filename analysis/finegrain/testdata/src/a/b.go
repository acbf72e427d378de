package a

import (
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
)

// Range-over-func: reported, and no fix without a parlib import.
func sumSeq(seq iter.Seq[int]) int64 {
	var total atomic.Int64
	var wg sync.WaitGroup
	for x := range seq {
		wg.Go(func() { total.Add(int64(x)) }) // want `wg.Go per loop iteration for a tiny body`
	}
	wg.Wait()
	return total.Load()
}

// A named tiny function by pointer.
func incr(p *int, wg *sync.WaitGroup) {
	defer wg.Done()
	*p++
}

func countAll(counts []int) {
	var wg sync.WaitGroup
	for i := range counts {
		wg.Add(1)
		go incr(&counts[i], &wg) // want `go statement per loop iteration for a tiny body`
	}
	wg.Wait()
}

// Negative cases.

// Calls that do real work.
func upper(words []string) {
	var wg sync.WaitGroup
	for i, w := range words {
		wg.Go(func() { words[i] = strings.ToUpper(w) })
	}
	wg.Wait()
}

func report(xs []int) {
	var wg sync.WaitGroup
	for _, x := range xs {
		wg.Go(func() { fmt.Println(x) })
	}
	wg.Wait()
}

// A call of a function of the package that loops.
func sumTo(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func sums(out []int) {
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i] = sumTo(i) })
	}
	wg.Wait()
}

// Channel communication, not computation.
func produce(ch chan<- int, n int) {
	for i := range n {
		go func() { ch <- i }()
	}
}

// The spawn is in a literal the loop calls, not in the loop's function.
func indirect(xs []int) {
	var wg sync.WaitGroup
	for i := range xs {
		spawn := func() { wg.Go(func() { xs[i]++ }) }
		spawn()
	}
	wg.Wait()
}

// Not in a loop.
func once(x *int) {
	var wg sync.WaitGroup
	wg.Go(func() { *x++ })
	wg.Wait()
}
