// Knapsack solves the 0/1 knapsack problem by branch and bound, after the
// Cilk-5 benchmark knapsack (Frigo, Leiserson and Randall, PLDI 1998), one of
// the programs whose profiling overhead the Cilkprof paper reports (Schardl
// et al., SPAA 2015, Figure 11): sort the items by value per unit of weight;
// at each item, search the choice that takes it and the one that leaves it
// in parallel, and prune a subtree whose upper bound is below the best value
// found so far, which all goroutines share. The branch that takes the item
// is spawned with parlib.Spawn and its value collected with Task.Wait.
//
// The printed result is the optimal value, which does not depend on the
// schedule; the work does. A goroutine prunes with whatever the others have
// found so far, so a parallel run can explore subtrees that the serial order
// would have pruned (speculative work), or fewer. Cilk-5's program spawns at
// every level; this one spawns in the top levels only (-depth) and searches
// below them with an explicit stack, a loop with no calls per node. It also
// starts from the greedy solution instead of nothing, so that how much the
// search prunes depends little on which branch a scheduler runs first: Go's
// runs the continuation first, the serial elision the spawned branch.
//
// A span profile of this program, which runs the serial elision, measures
// the search tree of the serial order. It should show nearly all the work as
// the local work of the calls of search, whose instances are serial
// (parallelism on span 1), the largest of them on the critical path; a
// parallelism of about 50 for the default input, limited by how unevenly
// pruning cuts the 4096 subtrees below the spawning levels (more levels
// split them further); and the check, a serial dynamic program, a small part
// of the span.
//
// Usage:
//
//	knapsack [-n items] [-depth levels] [-seed seed] [-serial]
//
// With -serial it runs the explicit-stack search from the root, the
// sequential baseline for speedup measurements. Either way it checks the
// optimal value against dynamic programming over capacities (O(n·capacity),
// a different algorithm) and prints one line, the same for both modes:
//
//	knapsack of 62 items, capacity 15367: best value 24813
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync/atomic"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "knapsack:", err)
		os.Exit(1)
	}
}

// maxWeight is the largest weight of an item. It keeps the capacity, and so
// the dynamic program of the check, small.
const maxWeight = 1000

// run parses args, solves a random instance and writes the one-line result
// to stdout. It returns an error if the flags are invalid or the result
// fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("knapsack", flag.ExitOnError)
	n := fs.Int("n", 62, "choose from `n` random items")
	depth := fs.Int("depth", 12, "spawn in the top `levels` of the search tree and search below them serially")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "search with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *n < 0 || *n > 1000 {
		return fmt.Errorf("-n %d: must be in [0, 1000]", *n)
	}
	if *depth < 0 {
		return fmt.Errorf("-depth %d: must not be negative", *depth)
	}

	p := newProblem(randomItems(*n, *seed))
	var best atomic.Int64
	best.Store(int64(p.greedy()))
	var got int
	if *serial {
		got = p.search(0, p.capacity, 0, &best)
	} else {
		got = p.knap(0, p.capacity, 0, *depth, &best)
	}
	if err := check(p, got); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "knapsack of %d items, capacity %d: best value %d\n", *n, p.capacity, got)
	return nil
}

// An item is a thing to put in the knapsack.
type item struct {
	weight, value int
}

// A problem is an instance of the knapsack problem, with its items in
// decreasing order of value per unit of weight.
type problem struct {
	items    []item
	capacity int
}

// randomItems returns n items with weights and values drawn independently
// from [1, maxWeight].
func randomItems(n int, seed uint64) []item {
	r := rand.New(rand.NewPCG(seed, seed))
	items := make([]item, n)
	for i := range items {
		items[i] = item{weight: 1 + r.IntN(maxWeight), value: 1 + r.IntN(maxWeight)}
	}
	return items
}

// newProblem returns the problem of choosing from items with half their
// total weight as the capacity.
func newProblem(items []item) *problem {
	items = slices.Clone(items)
	// a before b when a.value/a.weight > b.value/b.weight; ties by weight,
	// so that the order, and the search, depend only on the items.
	slices.SortStableFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(b.value*a.weight, a.value*b.weight), cmp.Compare(a.weight, b.weight))
	})
	total := 0
	for _, it := range items {
		total += it.weight
	}
	return &problem{items: items, capacity: total / 2}
}

// greedy returns the value of the greedy choice: each item in turn, if it
// fits.
func (p *problem) greedy() int {
	c, v := p.capacity, 0
	for _, it := range p.items {
		if it.weight <= c {
			c -= it.weight
			v += it.value
		}
	}
	return v
}

// infeasible is the value of a choice that does not fit.
const infeasible = math.MinInt

// knap returns the best value of a choice from p.items[i:] that fits in
// capacity c, plus v; or a smaller one, or infeasible, when it prunes a
// subtree that cannot beat best, the best value found so far by any
// goroutine, which it raises when it finds a better one. In the top depth
// levels it searches the choices that take and leave items[i] in parallel,
// spawning the first, so that the serial elision takes items while they
// fit, the greedy way, before it backtracks. (Cilk-5's program spawns both,
// leaving the item first.)
//
// The bound is Cilk-5's: v plus c times the value per unit of weight of
// items[i], the largest of the remaining items. It is weaker than the
// fractional knapsack's but costs one division, so the search visits many
// cheap nodes.
func (p *problem) knap(i, c, v, depth int, best *atomic.Int64) int {
	if c < 0 {
		return infeasible
	}
	if i == len(p.items) || c == 0 {
		raise(best, v)
		return v
	}
	if depth == 0 {
		return p.search(i, c, v, best)
	}
	it := p.items[i]
	if v+c*it.value/it.weight < int(best.Load()) {
		return infeasible
	}
	with := parlib.Spawn(func() int { return p.knap(i+1, c-it.weight, v+it.value, depth-1, best) })
	without := p.knap(i+1, c, v, depth-1, best)
	return max(with.Wait(), without)
}

// search is knap with no goroutines: a depth-first search in the same
// order with an explicit stack, so that a node costs a few loads, a
// division and no calls.
func (p *problem) search(i, c, v int, best *atomic.Int64) int {
	type node struct{ i, c, v int }
	stack := make([]node, 1, len(p.items)-i+2)
	stack[0] = node{i, c, v}
	found := infeasible
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case nd.c < 0:
			continue
		case nd.i == len(p.items) || nd.c == 0:
			found = max(found, nd.v)
			raise(best, nd.v)
			continue
		}
		it := p.items[nd.i]
		if nd.v+nd.c*it.value/it.weight < int(best.Load()) {
			continue
		}
		// Pushed last, popped first: take the item, then leave it.
		stack = append(stack, node{nd.i + 1, nd.c, nd.v}, node{nd.i + 1, nd.c - it.weight, nd.v + it.value})
	}
	return found
}

// raise sets best to v if v is larger.
func raise(best *atomic.Int64, v int) {
	for old := best.Load(); int64(v) > old; old = best.Load() {
		if best.CompareAndSwap(old, int64(v)) {
			return
		}
	}
}

// check reports, as an error, whether got is not the optimal value of p,
// which it computes by dynamic programming: best[w] is the largest value of
// a choice of the items seen so far that weighs at most w.
func check(p *problem, got int) error {
	best := make([]int, p.capacity+1)
	for _, it := range p.items {
		for w := p.capacity; w >= it.weight; w-- {
			best[w] = max(best[w], best[w-it.weight]+it.value)
		}
	}
	if want := best[p.capacity]; got != want {
		return fmt.Errorf("best value %d, want %d", got, want)
	}
	return nil
}
