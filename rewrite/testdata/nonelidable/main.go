// Command nonelidable has spawns that cannot run inline: a worker that
// receives from a channel the continuation fills. They run as goroutines in
// serial mode too, profiled under parallel accounting.
package main

import (
	"fmt"
	"sync"
)

func process(x int) int {
	s := 0
	for i := 0; i < x; i++ {
		s += i
	}
	return s
}

func main() {
	jobs := make(chan int)
	results := make(chan int, 10)
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- process(j)
			}
		}()
	}
	for i := 0; i < 10; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	// An elidable spawn in the same program is profiled.
	wg.Add(1)
	go func() {
		defer wg.Done()
		sum += process(100)
	}()
	wg.Wait()
	fmt.Println("sum", sum)
}
