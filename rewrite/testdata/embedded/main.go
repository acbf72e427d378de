// Command embedded signals a WaitGroup embedded in a struct, through a
// method expression, a pointer alias and a negative Add.
package main

import (
	"fmt"
	"sync"
)

type pool struct {
	sync.WaitGroup
	n int
}

type holder struct {
	*pool
}

func main() {
	p := &pool{}
	p.Add(1)
	go func() {
		defer p.Done()
		p.n++
	}()
	p.Wait()

	h := holder{p}
	h.Add(1)
	go func() {
		h.n++
		h.Done()
	}()
	h.Wait()

	var wg sync.WaitGroup
	q := &wg
	wg.Add(2)
	go func() { (*sync.WaitGroup).Done(&wg) }()
	go func() { defer q.Add(-1) }()
	q.Wait()
	fmt.Println("n", p.n)
}
