// Deepchain is a fork chain as deep as it is long: each link spawns the
// next link and then does its own work, and one WaitGroup joins them all.
//
// It is the stress case for memory in serial mode. As written, a link's
// goroutine ends soon after it spawns the next, so only a few goroutines
// are ever alive. Profiled in serial mode, every spawn runs its child
// inline, so the serial elision of the chain is a recursion n links deep:
// the shadow runtime then holds n frames, n inline children and their path
// profiles at once, and the Go stack holds n calls. The memory spanprof
// needs is what the serial elision keeps live, and must stay proportional
// to it (Cilkprof's O(D·S) bound, with D the depth), never to the run's
// length.
//
// The span of the chain is the spawns alone, one per link: every link's own
// work is off the critical path but the last one's, so a span profile shows
// a parallelism of about n.
//
// Usage:
//
//	deepchain [-n links] [-work w] [-serial]
//
// With -serial it runs the links in a loop, the sequential baseline. Either
// way it checks the sum of the links' results and prints one line:
//
//	1000000 links, sum c097346ebc153732
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "deepchain:", err)
		os.Exit(1)
	}
}

// run parses args, runs the chain and writes the one-line result to stdout.
// It returns an error if the flags are invalid or the sum is wrong.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("deepchain", flag.ExitOnError)
	n := fs.Int("n", 1_000_000, "run a chain of `n` links")
	w := fs.Int("work", 200, "each link mixes `w` words")
	serial := fs.Bool("serial", false, "run the links in a loop, the sequential baseline")
	fs.Parse(args)
	if *n < 0 || *w < 0 {
		return fmt.Errorf("-n %d -work %d: must not be negative", *n, *w)
	}
	out := make([]uint64, *n)
	if *serial {
		for i := range out {
			out[i] = link(i, *w)
		}
	} else {
		var wg sync.WaitGroup
		chain(0, *w, out, &wg)
		wg.Wait()
	}
	var got, want uint64
	for i, v := range out {
		got += v
		want += link(i, *w)
	}
	if got != want {
		return fmt.Errorf("sum %x, want %x", got, want)
	}
	fmt.Fprintf(stdout, "%d links, sum %x\n", *n, got)
	return nil
}

// chain runs link i of the chain: it spawns the rest of the chain, then
// computes its own result.
func chain(i, w int, out []uint64, wg *sync.WaitGroup) {
	if i == len(out) {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		chain(i+1, w, out, wg)
	}()
	out[i] = link(i, w)
}

// link is one link's own work: w rounds of a 64-bit mix of i.
func link(i, w int) uint64 {
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	for range w {
		x ^= x >> 31
		x *= 0xBF58476D1CE4E5B9
		x ^= x >> 29
	}
	return x
}
