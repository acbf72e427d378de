// Command generics spawns generic functions and methods of generic types.
package main

import (
	"fmt"
	"sync"
)

type Pool[T any] struct {
	wg    sync.WaitGroup
	items []T
	out   []string
}

func (p *Pool[T]) Each() {
	p.out = make([]string, len(p.items))
	for i, it := range p.items {
		p.wg.Add(1)
		go visit(it, &p.out[i], &p.wg)
	}
	p.wg.Wait()
}

func visit[T any](x T, out *string, wg *sync.WaitGroup) {
	defer wg.Done()
	*out = show(x)
}

func show[T any](x T) string {
	s := ""
	for range 2 {
		s = fmt.Sprint(x)
	}
	return s
}

func main() {
	p := &Pool[int]{items: []int{1, 2, 3}}
	p.Each()
	q := &Pool[string]{items: []string{"a", "b"}}
	q.Each()
	fmt.Println(p.out, q.out, show[float64](1.5))
}
