// Command gonamed spawns named functions and methods with go statements,
// whose arguments are evaluated at the go statement.
package main

import (
	"fmt"
	"sync"
)

func worker(id int, wg *sync.WaitGroup, out []int) {
	defer wg.Done()
	out[id] = id * id
}

type server struct {
	wg   sync.WaitGroup
	sum  int
	jobs []int
}

func (s *server) loop(n int) {
	for i := range n {
		s.sum += s.jobs[i]
	}
	s.wg.Done()
}

func (s server) peek(k int, out *int, wg *sync.WaitGroup) {
	*out = s.jobs[k]
	wg.Done()
}

func main() {
	var wg sync.WaitGroup
	out := make([]int, 4)
	for i := 0; i < len(out); i++ {
		wg.Add(1)
		go worker(i, &wg, out)
	}
	wg.Wait()
	fmt.Println(out)

	s := &server{jobs: []int{1, 2, 3, 4}}
	s.wg.Add(1)
	go s.loop(3)
	s.wg.Wait()
	fmt.Println("sum", s.sum)

	// A value receiver is copied at the go statement.
	var got int
	v := server{jobs: []int{7, 8}}
	wg.Add(1)
	go v.peek(1, &got, &wg)
	v.jobs = nil
	wg.Wait()
	fmt.Println("peek", got)

	// A function value, and a variadic call.
	f := func(xs ...int) {
		defer wg.Done()
		for _, x := range xs {
			got += x
		}
	}
	wg.Add(2)
	go f(1, 2, 3)
	xs := []int{10, 20}
	go f(xs...)
	wg.Wait()
	fmt.Println("got", got)
}
