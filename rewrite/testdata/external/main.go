// Calls into other packages: instrumented in fork/join code, outside
// loops, when an operand is data; left as they are in loops, with only
// numbers for operands, in set-up code, and for output (fmt).
package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

func sortAll(xs [][]int) {
	var wg sync.WaitGroup
	for _, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.Sort(x)
		}()
	}
	wg.Wait()
}

func worker(s string, out *string, wg *sync.WaitGroup) {
	defer wg.Done()
	*out = strings.ToUpper(s)
	n := math.Abs(-2)
	for range 3 {
		_ = strings.Repeat(s, 2)
	}
	_ = n
}

func setup() string { return strings.TrimSpace(" x ") }

func main() {
	xs := [][]int{{3, 1, 2}, {9, 8}}
	sortAll(xs)
	var wg sync.WaitGroup
	var out string
	wg.Add(1)
	go worker(setup(), &out, &wg)
	wg.Wait()
	fmt.Println(xs, out)
}
