// Command positions prints the positions that runtime.Caller and panics
// report around instrumented code: the rewritten program must print the
// same lines.
package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

func depth(n int) string {
	if n == 0 {
		return here()
	}
	return depth(n - 1)
}

func pair(n int) (string, int) {
	if n == 0 {
		return here(), n
	}
	return pair(n - 1)
}

// panicLine returns the line of the frame that panicked, from the stack.
func panicLine(f func()) (line string) {
	defer func() {
		recover()
		stack := string(debug.Stack())
		for _, l := range strings.Split(stack, "\n") {
			if strings.Contains(l, "positions/main.go:") && !strings.Contains(l, "panicLine") {
				line = strings.TrimSpace(l)
				if i := strings.Index(line, " +"); i >= 0 {
					line = line[:i]
				}
				break
			}
		}
	}()
	f()
	return ""
}

func crash(xs []int, i int) int {
	return xs[i]
}

func main() {
	fmt.Println(here())
	fmt.Println(depth(3))
	a, b := pair(2)
	fmt.Println(a, b)
	var wg sync.WaitGroup
	var got string
	wg.Add(1)
	go func() {
		defer wg.Done()
		got = depth(1)
	}()
	wg.Wait()
	fmt.Println(got)
	wg.Go(func() {
		got = here()
	})
	wg.Wait()
	fmt.Println(got)
	fmt.Println(panicLine(func() { crash(nil, 3) }))
	fmt.Println(panicLine(func() {
		var m map[string]bool
		m["x"] = depth(2) != "" && true == true && len(here()) > 0 && crash(nil, 1) > 0 && false == false && 1 > 0 && fmt.Sprint() == ""
	}))
	fmt.Println(here())
}
