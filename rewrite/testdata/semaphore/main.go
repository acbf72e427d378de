// Buffered-channel semaphores around spawns: the send before the spawn or
// first in the child, the receive deferred or last.
package main

import (
	"fmt"
	"sync"
)

func square(x int) int { return x * x }

func main() {
	var wg sync.WaitGroup
	out := make([]int, 6)
	sem := make(chan struct{}, 2)
	for i := range 3 {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = square(i)
		}()
	}
	wg.Wait()
	slots := make(chan int, 1)
	for i := 3; i < 6; i++ {
		wg.Go(func() {
			slots <- i
			out[i] = square(i)
			<-slots
		})
	}
	wg.Wait()
	fmt.Println(out)
}
