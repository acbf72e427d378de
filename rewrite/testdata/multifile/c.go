package main

import "sync"

// pairs sums fib over n spawned goroutines, Add(n) before the loop.
func pairs(n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			v := fib(i) + sum(i)
			mu.Lock()
			total += v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}
