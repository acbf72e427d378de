// Regions of package region in every form: Begin and End as statements, a
// deferred End, Do, a name that is not a constant, regions nested in each
// other and in a spawned child.
package main

import (
	"fmt"
	"sync"

	"github.com/spanprof/spanprof/region"
)

//go:noinline
func work(n int) int {
	x := 0
	for i := range n {
		x += i * i
	}
	return x
}

func prepare(n int) int {
	defer region.Begin("prepare").End()
	return work(n)
}

func main() {
	r := region.Begin("setup")
	total := prepare(1000)
	r.End()
	name := fmt.Sprint("phase ", 2)
	region.Do(name, func() {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				defer region.Begin("child").End()
				total += 0 * work(100*i)
			})
		}
		wg.Wait()
	})
	region.Do("outer", func() {
		region.Do("inner", func() { total += work(10) })
	})
	fmt.Println("total", total)
}
