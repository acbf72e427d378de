// Nqueens counts the ways to place n queens on an n×n chessboard so that no
// two attack each other, by backtracking search that spawns the subtree of
// every legal placement. It is the nqueens benchmark of the Cilk-5
// distribution (nqueens.cilk), one of the benchmarks of the Cilkprof paper
// (Schardl et al., SPAA 2015, Figure 11, on a 12×12 board).
//
// The search places one queen per row. Cilk-5 spawns a child for every
// legal square in every row and sums the children's counts after a sync;
// here the columns and diagonals under attack are bit masks, and the
// children are spawned only in the top rows (the -depth flag), below which
// the search runs serially: one spawn per node of a search tree of tens of
// millions of nodes would cost more than the nodes themselves. (The paper's
// Cilk-5 version, with no such cutoff, had a profiling overhead of 1.27,
// the highest of the Cilk-5 programs in its Figure 11 but fib and
// cholesky.)
//
// A span profile of this program should show ample parallelism, in the
// thousands for the default board and depth: the work is the whole search
// tree, the span the largest subtree below the cutoff plus the short path
// down to it. The call of serialQueens below the cutoff holds nearly all of
// the work and, serial in each invocation, nearly all of the span: it is
// the top site by local span on span. Each row added to -depth multiplies
// the number of tasks, and the parallelism, by several, at the cost of
// more spawns. Counting nodes on the 15×15 board (171,129,072 in all), the
// largest subtree below depth 3 has 148,978 and below depth 4 28,536:
// parallelism about 1,150 and about 6,000. Measured with the cpu measure
// on a 2-vCPU VM with other processes busy, depth 4 read 3,100 to 4,200:
// the span is the longest of thousands of subtrees of a few milliseconds,
// and noise lengthens some of them. At the default depth a task is still
// tens of microseconds or more, so the burdened parallelism is close to the
// parallelism.
//
// Usage:
//
//	nqueens [-n size] [-depth rows] [-serial]
//
// With -serial it runs the same bit-mask backtracking with no goroutines,
// the sequential baseline for speedup measurements. Either way it checks the
// count against the known number of solutions (OEIS A000170) and prints one
// line, the same for both modes:
//
//	15-queens: 2279184 solutions
package main

import (
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"

	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nqueens:", err)
		os.Exit(1)
	}
}

// run parses args, counts the solutions and writes the one-line result to
// stdout. It returns an error if the flags are invalid or the count is wrong.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nqueens", flag.ExitOnError)
	n := fs.Int("n", 15, "place `size` queens on a size×size board")
	depth := fs.Int("depth", 4, "spawn in the top `rows` of the search and search below them serially")
	serial := fs.Bool("serial", false, "search with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *n < 1 || *n >= len(solutions) {
		return fmt.Errorf("-n %d: must be in [1, %d]", *n, len(solutions)-1)
	}
	if *depth < 0 {
		return fmt.Errorf("-depth %d: must not be negative", *depth)
	}

	all := uint32(1)<<*n - 1
	var got int
	if *serial {
		got = serialQueens(all, 0, 0, 0)
	} else {
		got = queens(all, 0, 0, 0, *depth)
	}
	if err := check(*n, got); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d-queens: %d solutions\n", *n, got)
	return nil
}

// queens returns the number of ways to complete a placement of queens in the
// rows above the current one. all has one bit for every column of the board;
// cols has the bits of the columns already taken, and left and right those
// attacked in the current row along the two diagonals. In the top depth rows
// it searches the subtree of every legal square of the current row in
// parallel.
func queens(all, cols, left, right uint32, depth int) int {
	if depth == 0 {
		return serialQueens(all, cols, left, right)
	}
	if cols == all {
		return 1
	}
	free := all &^ (cols | left | right)
	// Each child writes its own slot, like the count array of Cilk-5.
	counts := make([]int, bits.OnesCount32(free))
	var g errgroup.Group
	for i := 0; free != 0; i++ {
		bit := free & -free
		free &^= bit
		g.Go(func() error {
			counts[i] = queens(all, cols|bit, (left|bit)<<1, (right|bit)>>1, depth-1)
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	total := 0
	for _, c := range counts {
		total += c
	}
	return total
}

// serialQueens is queens with no goroutines. It backtracks with an explicit
// stack, one frame per row, rather than by recursion: that is a little
// faster, and it keeps the millions of nodes below the cutoff from each
// being a call that spanprof instruments.
func serialQueens(all, cols, left, right uint32) int {
	if cols == all {
		return 1
	}
	// The current row lives in local variables; the stack holds the rows
	// above it, each with the squares still to try. There is one row for
	// each queen still to place, and a uint32 mask has at most 32 columns.
	type frame struct{ cols, left, right, free uint32 }
	// sp never reaches 32, so stack[sp&31] is stack[sp]; the mask lets the
	// compiler drop the bounds check in the innermost loop.
	var stack [32]frame
	sp := 0
	free := all &^ (cols | left | right)
	total := 0
	for {
		if free == 0 {
			if sp == 0 {
				break
			}
			sp--
			f := stack[sp&31]
			cols, left, right, free = f.cols, f.left, f.right, f.free
			continue
		}
		bit := free & -free
		free &^= bit
		c := cols | bit
		if c == all {
			total++
			continue
		}
		stack[sp&31] = frame{cols, left, right, free}
		sp++
		cols, left, right = c, (left|bit)<<1, (right|bit)>>1
		free = all &^ (cols | left | right)
	}
	return total
}

// solutions[n] is the number of ways to place n non-attacking queens on an
// n×n board (OEIS A000170), for every n whose columns fit in a uint32 mask
// and whose count is known.
var solutions = [...]int64{
	1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
	2279184, 14772512, 95815104, 666090624, 4968057848, 39029188884,
	314666222712, 2691008701644, 24233937684440, 227514171973736,
	2207893435808352, 22317699616364044, 234907967154122528,
}

// check reports, as an error, whether got is not the number of solutions
// for an n×n board.
func check(n, got int) error {
	if want := solutions[n]; int64(got) != want {
		return fmt.Errorf("%d-queens: counted %d solutions, want %d", n, got, want)
	}
	return nil
}
