// Command waitgroupgo spawns with Go 1.25's WaitGroup.Go.
package main

import (
	"fmt"
	"sync"
)

type server struct{ jobs []int }

func (s *server) count() int { return len(s.jobs) }

func (s *server) run() {
	for range 100 {
		s.jobs = append(s.jobs, s.count())
	}
}

func main() {
	var wg sync.WaitGroup
	parts := make([]int, 4)
	for i := range parts {
		wg.Go(func() { parts[i] = i * 10 })
	}
	s := &server{}
	wg.Go(s.run)
	wg.Wait()
	fmt.Println(parts, len(s.jobs))
}
