// Command goclosure spawns literals with go statements and waits for them
// with a WaitGroup.
package main

import (
	"fmt"
	"sync"
)

func square(i int) int {
	s := 0
	for j := 0; j < i; j++ {
		s += i
	}
	return s
}

func main() {
	var wg sync.WaitGroup
	results := make([]int, 8)
	for i := range results {
		wg.Add(1)
		// Each child fills one slot.
		go func() {
			defer wg.Done()
			results[i] = square(i)
		}()
	}
	wg.Wait()
	fmt.Println(results)

	// A child that signals explicitly, and one spawned with an argument.
	wg.Add(1)
	total := 0
	go func() {
		total += square(3)
		wg.Done()
	}()
	wg.Wait()
	wg.Add(1)
	go func(n int) {
		defer wg.Done()
		total += n
	}(square(4))
	wg.Wait()
	fmt.Println("total", total)
}
