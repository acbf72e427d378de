package rewrite

import (
	"strings"
	"testing"
)

// TestAddInstrumented checks which WaitGroup.Add calls become the runtime's
// WaitGroupAdd: those whose argument may be negative, a negative constant
// or any value not constant, since a negative delta is a join
// contribution; a positive constant only registers children and stays.
func TestAddInstrumented(t *testing.T) {
	needGo(t)
	t.Parallel()
	src := `package main

import "sync"

func run(xs []int, k int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = xs }()
	wg.Add(len(xs))
	for range xs {
		go func() { defer wg.Done() }()
	}
	wg.Add(k)
	wg.Add(-k)
	wg.Add(2 - 3)
	wg.Add(0)
	wg.Wait()
}

func main() { run([]int{1, 2}, 3) }
`
	res, ok := rewriteSource(t, t.TempDir(), []byte(src))
	if !ok {
		t.Fatal("the program does not rewrite")
	}
	got := rewritten(res)["main.go"]
	for _, want := range []string{
		"\twg.Add(1)\n",
		"\t_spanprof_shadow.WaitGroupAdd(&wg, len(xs))\n",
		"\t_spanprof_shadow.WaitGroupAdd(&wg, k)\n",
		"\t_spanprof_shadow.WaitGroupAdd(&wg, -k)\n",
		"\t_spanprof_shadow.WaitGroupAdd(&wg, 2-3)\n",
		"\twg.Add(0)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the rewrite has no line %q:\n%s", strings.TrimSpace(want), got)
		}
	}
	// Two Done calls and the four Adds that may be negative.
	if res.Stats.Signals != 6 {
		t.Errorf("%d join contributions instrumented, want 6", res.Stats.Signals)
	}
}
