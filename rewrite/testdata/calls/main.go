// Command calls calls its own functions in every position: expressions,
// statements, several results, conditions, returns and defers. Its main
// forks, so the calls in main's loops are sites; the one in divmod's loop,
// a function that neither forks nor joins, is not.
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// fib is recursive, so the compiler does not inline it.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func divmod(a, b int) (int, int) {
	for i := 0; i < 3; i++ {
		a += 0 * fib(i)
	}
	return a / b, a % b
}

func twice(a, b int) (int, int) { return divmod(a*2, b) }

func report(format string, args ...any) {
	var b strings.Builder
	for i := 0; i < 2; i++ {
		b.WriteString("")
	}
	fmt.Printf(format, args...)
}

func cleanup(name string) {
	for i := 0; i < 2; i++ {
		name += ""
	}
	report("cleanup %s\n", name)
}

func main() {
	defer cleanup("main")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fmt.Print("")
	}()
	wg.Wait()
	x := fib(10)
	q, r := divmod(17, 5)
	var q2, r2 = twice(17, 5)
	report("%d %d %d %d %d\n", x, q, r, q2, r2)
	if q, r := divmod(fib(7), 4); q > r {
		report("if %d %d\n", q, r)
	}
	for i := 0; i < fib(4); i++ {
		report("loop %d\n", fib(i))
	}
	switch fib(5) {
	case 5:
		report("switch\n")
	}
	func() {
		report("literal %d\n", fib(6))
	}()
	if len(os.Args) > 5 {
		os.Exit(3)
	}
}
