//go:build !spanprof_never

// Command directives keeps build constraints, compiler directives and
// comments in odd places through rewriting.
package main

import (
	"fmt"
	"sync"
)

// Kept documents a constant.
const Kept = 1

//go:noinline
func leaf(x int) int { return x + Kept } // leaf's line comment

/* A block
   comment. */

// twice spawns leaf twice.
//
//go:noinline
func twice(x int) (a, b int) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = leaf(x) }() /* after */
	go func() {
		// inside
		defer wg.Done()
		b = leaf(x + 1)
	}()
	wg.Wait() // waits
	return
}

func main() {
	a, b := twice(1); fmt.Println(a, b)
	if x, y := twice(2); x < y {
		fmt.Println("less", leaf(x))
	}
	fmt.Println(generated(3))
}
