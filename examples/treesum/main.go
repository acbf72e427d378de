// Treesum builds a balanced binary tree serially and then sums its values in
// parallel, spawning the left subtree with parlib.Spawn while the current
// goroutine sums the right one.
//
// It is the acceptance case for causal (what-if) profiles, in the manner of
// TaskProf (Yoga and Nagarakatte, FSE 2017, Section 4): the sum has ample
// parallelism, but the tree is built by one goroutine before the sum starts,
// so the whole build is on the critical path and bounds the speedup
// (Amdahl's law). Spawning more, or a finer grain in the sum, cannot help;
// only making the build faster or parallel can, and a causal profile that
// makes the build k times faster predicts how much.
//
// A span profile of this program should show the call of build as the top
// site by local span on span, with a parallelism on span of 1 and most of the
// program's span; a whole-program parallelism below 2, however many cores;
// and the spawn site in sum with ample parallelism of its own. A what-if
// profile that makes build k times faster should predict nearly all of the
// gain, the span shrinking by about (1-1/k) of the build's time, while making
// sum faster barely moves it.
//
// The what-if case study (docs/what-if.md): -cost gives the construction
// work of its own per node, rounds of a hash standing in for the parsing or
// decoding a real program does to make each node. The construction at
// -cost 8 does about half the work of -cost 16 (the allocation and linking
// of the nodes do not halve), so the what-if profile of main.build at ÷2
// at -cost 16 predicts the parallelism measured at -cost 8
// (examples/acceptance_test.go checks it within 10%).
//
// Usage:
//
//	treesum [-n nodes] [-depth levels] [-cost rounds] [-serial]
//
// With -serial it sums the tree with a plain recursive function, the
// sequential baseline for speedup measurements. Either way it checks the sum
// against a loop over the values the tree should hold and prints one line,
// the same for both modes:
//
//	summed 12000000 nodes, sum 14a12aacb3023fe7
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/spanprof/spanprof/parlib"
	"github.com/spanprof/spanprof/region"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "treesum:", err)
		os.Exit(1)
	}
}

// run parses args, builds and sums a tree and writes the one-line result to
// stdout. It returns an error if the flags are invalid or the sum is wrong.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("treesum", flag.ExitOnError)
	n := fs.Int("n", 12_000_000, "build a tree of `n` nodes")
	depth := fs.Int("depth", 12, "spawn in the top `levels` of the tree and sum below them serially")
	serial := fs.Bool("serial", false, "sum with no goroutines, the sequential baseline")
	cost := fs.Int("cost", 0, "make each node cost `rounds` of a hash more to construct")
	fs.Parse(args)
	if *n < 0 {
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	if *depth < 0 {
		return fmt.Errorf("-depth %d: must not be negative", *depth)
	}
	if *cost < 0 {
		return fmt.Errorf("-cost %d: must not be negative", *cost)
	}

	buildCost = *cost
	// The construction, marked as TaskProf's Figure 1 marks it: spanprof
	// run -whatif "build tree" asks what the run would have measured with
	// it faster (package region does nothing in a program not profiled).
	r := region.Begin("build tree")
	t := build(0, *n)
	r.End()
	var got uint64
	if *serial {
		got = serialSum(t)
	} else {
		got = sum(t, *depth)
	}
	var want uint64
	for k := range *n {
		want += value(k)
	}
	if got != want {
		return fmt.Errorf("sum of %d nodes is %016x, want %016x", *n, got, want)
	}
	fmt.Fprintf(stdout, "summed %d nodes, sum %016x\n", *n, got)
	return nil
}

// A node is a node of a binary tree of integers.
type node struct {
	val         uint64
	left, right *node
}

// buildCost is the rounds of hashing that constructing a node costs
// (-cost), and buildTag what they computed, kept so that they are not
// dropped; the nodes stay as small as without them.
var (
	buildCost int
	buildTag  uint64
)

// build returns a balanced tree with one node for each key in [lo, hi), in
// key order, holding value(key).
func build(lo, hi int) *node {
	if lo >= hi {
		return nil
	}
	mid := lo + (hi-lo)/2
	if buildCost > 0 {
		// Only then: a call of hash is an event of the profile, which
		// the tree of the other runs does not pay.
		buildTag ^= hash(uint64(mid), buildCost)
	}
	return &node{
		val:   value(mid),
		left:  build(lo, mid),
		right: build(mid+1, hi),
	}
}

// hash applies the finalizer of value to x rounds times: work that the
// compiler cannot drop, whose result is kept.
func hash(x uint64, rounds int) uint64 {
	for range rounds {
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
	}
	return x
}

// sum returns the sum of the values in t, summing the left and right
// subtrees in parallel in the top depth levels.
func sum(t *node, depth int) uint64 {
	if t == nil {
		return 0
	}
	if depth == 0 {
		return serialSum(t)
	}
	left := parlib.Spawn(func() uint64 { return sum(t.left, depth-1) })
	right := sum(t.right, depth-1)
	return t.val + left.Wait() + right
}

// serialSum returns the sum of the values in t.
func serialSum(t *node) uint64 {
	if t == nil {
		return 0
	}
	return t.val + serialSum(t.left) + serialSum(t.right)
}

// value is the value stored for key k: the SplitMix64 finalizer of k, so
// that the sum is not a closed form the compiler or a reader could shortcut.
func value(k int) uint64 {
	x := uint64(k)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
