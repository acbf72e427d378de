// Fib computes Fibonacci numbers by the doubly recursive algorithm, spawning
// fib(n-1) and calling fib(n-2), as in the Cilkprof paper (Schardl et al.,
// SPAA 2015, Figure 5).
//
// The paper uses fib to explain its measurements for recursive code
// (Figures 6 and 7). Top-call-site values for the two recursive sites are
// inflated because one top-level call holds many top-call-site invocations of
// each; top-caller values, which count only calls made from a non-recursive
// instance of fib, compare the two sites fairly: the work of the fib(n-1)
// site over the work of the fib(n-2) site is about the golden ratio
// φ = 1.618 (the paper measured 1.63), since fib(n) does Θ(φⁿ) work.
//
// A span profile of this program should show that ratio for the top-caller
// work of the spawn of fib(n-1) and the call of fib(n-2); ample parallelism
// (thousands or more for the default n); and a very short average strand (a few
// additions between spawns), so that the burdened parallelism is far below
// the parallelism and the report warns about spawn overhead. The program has
// no serial cutoff on purpose: it is also the paper's worst case for
// profiling overhead (Figure 11).
//
// Usage:
//
//	fib [-n n] [-cutoff c] [-serial]
//
// With -cutoff c, fib(n) for n < c runs serialFib instead of spawning: the
// strands grow from a few additions to a serial subtree each, and the
// golden ratio of the two sites' top-caller work stays, since every leaf
// subtree of the same n costs the same. The default, 0, is the paper's
// fib, with no cutoff.
//
// With -serial it runs the same recursion with no goroutines, the sequential
// baseline for speedup measurements (a loop would compute fib(n) in O(n)
// steps, but speedup compares an algorithm with its own sequential form, as
// the papers do for fib). Either way it checks the result against
// an iterative computation and prints one line, the same for both modes:
//
//	fib(29) = 514229
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fib:", err)
		os.Exit(1)
	}
}

// run parses args, computes fib(n) and writes the one-line result to stdout.
// It returns an error if the flags are invalid or the result is wrong.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fib", flag.ExitOnError)
	n := fs.Int("n", 29, "compute fib(`n`)")
	serial := fs.Bool("serial", false, "run the recursion without goroutines, the sequential baseline")
	fs.IntVar(&cutoff, "cutoff", 0, "compute fib(n) for n below `c` serially, with no goroutines (0: spawn all the way down, as the paper does)")
	fs.Parse(args)
	if *n < 0 || *n > 92 {
		// fib(93) overflows an int64.
		return fmt.Errorf("-n %d: must be in [0, 92]", *n)
	}

	var got int
	if *serial {
		got = serialFib(*n)
	} else {
		got = fib(*n)
	}
	if want := iterativeFib(*n); got != want {
		return fmt.Errorf("fib(%d) = %d, want %d", *n, got, want)
	}
	fmt.Fprintf(stdout, "fib(%d) = %d\n", *n, got)
	return nil
}

// cutoff is the -cutoff flag: below it fib runs serially.
var cutoff int

// fib returns the nth Fibonacci number, computing fib(n-1) on a new goroutine
// while it computes fib(n-2).
func fib(n int) int {
	if n < 2 {
		return n
	}
	if n < cutoff {
		return serialFib(n)
	}
	var g errgroup.Group
	var x int
	g.Go(func() error {
		x = fib(n - 1)
		return nil
	})
	y := fib(n - 2)
	g.Wait() // the spawned function never fails
	return x + y
}

// serialFib is fib with no goroutines: its serial elision.
func serialFib(n int) int {
	if n < 2 {
		return n
	}
	return serialFib(n-1) + serialFib(n-2)
}

// iterativeFib returns the nth Fibonacci number in O(n) time.
func iterativeFib(n int) int {
	a, b := 0, 1
	for range n {
		a, b = b, a+b
	}
	return a
}
