package main

import "sync"

// sum adds fib over a range, half of it in a spawned goroutine.
func sum(n int) int {
	var wg sync.WaitGroup
	var lo, hi int
	wg.Add(1)
	go func() {
		defer wg.Done()
		lo = fib(n / 2)
	}()
	hi = fib(n - n/2)
	wg.Wait()
	return lo + hi
}

// fib is recursive, so the compiler does not inline it.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}
