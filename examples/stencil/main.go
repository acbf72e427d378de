// Stencil runs the heat equation on a 2D grid by Jacobi iteration, a
// five-point stencil, in the two versions of the Cilkview paper's case study
// (He, Leiserson and Leiserson, SPAA 2010, Section 5, Figures 7–10).
//
// By default the parallelism is in the inner loop: for each row, one
// goroutine per chunk of a few dozen columns, so each goroutine does well
// under a microsecond of work. In the paper this version had a parallelism of
// 119 but a burdened parallelism of only 0.87, and ran slower on 2 or more
// cores than serially: the spawned tasks were too small to pay for the
// scheduling. With -outer the parallelism moves to the outer loop, over rows,
// through parlib.ForRange, the paper's fix: each piece is a band of rows,
// tens of microseconds of work, far more than a spawn costs.
//
// A span profile of the default version shows a burdened parallelism below
// 1, an average strand well under a microsecond, heatInner's own strands as
// the site to blame, and a speedup lower bound below 1. Its parallelism is
// far below the number of chunks per row (32), and below the paper's 119:
// Cilk's parallel loop spawns by divide and conquer, where this row's go
// statements come one after another from a serial loop, so a row's span is
// that loop plus one chunk. Measured with the cpu measure on a 2-vCPU VM
// (-steps 10, 327,040 spawns): parallelism 1.23, burdened 0.76, average
// strand 315 ns, heatInner 57% of the span. With -outer, parlib.ForRange
// splits the rows by divide and conquer: both parallelism and burdened
// parallelism are in the tens or more, and the speedup bounds close to
// linear.
//
// Usage:
//
//	stencil [-rows n] [-cols n] [-steps n] [-chunk columns] [-outer [-grain rows]] [-serial]
//
// With -serial it runs plain nested loops, the sequential baseline for speedup
// measurements. Every mode computes the same grid bit for bit. The initial
// grid is a mode of the discrete heat equation, which each step scales by a
// known factor; the program checks the result against that closed form and
// prints one line, the same for every mode:
//
//	heat 1024x1024 grid, 100 steps, sum 4.239815916e+05
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stencil:", err)
		os.Exit(1)
	}
}

// alpha is the diffusion number Δt·κ/h²; Jacobi iteration of the heat
// equation is stable for alpha <= 1/4.
const alpha = 0.2

// run parses args, iterates the heat equation and writes the one-line
// result to stdout. It returns an error if the flags are invalid or the
// result fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("stencil", flag.ExitOnError)
	rows := fs.Int("rows", 1024, "`n` rows in the grid, boundary included")
	cols := fs.Int("cols", 1024, "`n` columns in the grid, boundary included")
	steps := fs.Int("steps", 100, "`n` time steps")
	chunk := fs.Int("chunk", 32, "`columns` per goroutine in the inner loop (default version)")
	outer := fs.Bool("outer", false, "parallelize the outer loop, over rows, instead of the inner one")
	grain := fs.Int("grain", 16, "`rows` per piece of the outer loop with -outer; 0 for parlib's default")
	serial := fs.Bool("serial", false, "run plain loops with no goroutines, the sequential baseline")
	fs.Parse(args)
	switch {
	case *rows < 3 || *cols < 3:
		return fmt.Errorf("-rows %d -cols %d: the grid needs at least 3 rows and 3 columns", *rows, *cols)
	case *steps < 0:
		return fmt.Errorf("-steps %d: must not be negative", *steps)
	case *chunk < 1:
		return fmt.Errorf("-chunk %d: must be positive", *chunk)
	}

	g := newGrid(*rows, *cols)
	switch {
	case *serial:
		heatSerial(g, *steps)
	case *outer:
		heatOuter(g, *steps, *grain)
	default:
		heatInner(g, *steps, *chunk)
	}
	if err := check(g, *steps); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "heat %dx%d grid, %d steps, sum %.9e\n", *rows, *cols, *steps, g.sum())
	return nil
}

// A grid holds the temperature at time t in cur and is scratch space for
// time t+1 in next. Both are row-major with cols columns; the boundary rows
// and columns stay at zero.
type grid struct {
	rows, cols int
	cur, next  []float64
}

// newGrid returns a grid holding the slowest-decaying mode of the discrete
// heat equation with zero boundary: sin(πi/(rows-1))·sin(πj/(cols-1)).
func newGrid(rows, cols int) *grid {
	g := &grid{rows: rows, cols: cols, cur: make([]float64, rows*cols), next: make([]float64, rows*cols)}
	x, y := sines(rows), sines(cols)
	for i := 1; i < rows-1; i++ {
		for j := 1; j < cols-1; j++ {
			g.cur[i*cols+j] = x[i] * y[j]
		}
	}
	return g
}

// sines returns sin(πi/(n-1)) for i in [0, n), with exact zeros at both ends.
func sines(n int) []float64 {
	s := make([]float64, n)
	for i := 1; i < n-1; i++ {
		s[i] = math.Sin(math.Pi * float64(i) / float64(n-1))
	}
	return s
}

// relax computes row i of next from cur for the columns [lo, hi), which must
// be interior.
func (g *grid) relax(i, lo, hi int) {
	c := g.cols
	up, mid, down := g.cur[(i-1)*c:i*c], g.cur[i*c:(i+1)*c], g.cur[(i+1)*c:(i+2)*c]
	out := g.next[i*c : (i+1)*c]
	for j := lo; j < hi; j++ {
		out[j] = mid[j] + alpha*(up[j]+down[j]+mid[j-1]+mid[j+1]-4*mid[j])
	}
}

// heatInner runs the stencil for steps time steps with the inner loop in
// parallel: one goroutine per chunk columns of each row.
func heatInner(g *grid, steps, chunk int) {
	for range steps {
		for i := 1; i < g.rows-1; i++ {
			var wg sync.WaitGroup
			for j := 1; j < g.cols-1; j += chunk {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g.relax(i, j, min(j+chunk, g.cols-1))
				}()
			}
			wg.Wait()
		}
		g.cur, g.next = g.next, g.cur
	}
}

// heatOuter runs the stencil for steps time steps with the outer loop in
// parallel: pieces of grain rows, each relaxed whole by one goroutine.
func heatOuter(g *grid, steps, grain int) {
	for range steps {
		parlib.ForRange(1, g.rows-1, grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				g.relax(i, 1, g.cols-1)
			}
		})
		g.cur, g.next = g.next, g.cur
	}
}

// heatSerial runs the stencil for steps time steps with no goroutines.
func heatSerial(g *grid, steps int) {
	for range steps {
		for i := 1; i < g.rows-1; i++ {
			g.relax(i, 1, g.cols-1)
		}
		g.cur, g.next = g.next, g.cur
	}
}

// sum returns the sum of the temperatures, in row-major order.
func (g *grid) sum() float64 {
	var s float64
	for _, v := range g.cur {
		s += v
	}
	return s
}

// check reports, as an error, whether g after steps steps differs from the
// closed form: each step multiplies the initial mode by
// λ = 1 - 2α(2 - cos(π/(rows-1)) - cos(π/(cols-1))).
func check(g *grid, steps int) error {
	lambda := 1 - 2*alpha*(2-math.Cos(math.Pi/float64(g.rows-1))-math.Cos(math.Pi/float64(g.cols-1)))
	scale := math.Pow(lambda, float64(steps))
	x, y := sines(g.rows), sines(g.cols)
	const tolerance = 1e-9
	for i := range g.rows {
		for j := range g.cols {
			want := scale * x[i] * y[j]
			if got := g.cur[i*g.cols+j]; math.Abs(got-want) > tolerance {
				return fmt.Errorf("wrong temperature at (%d, %d): %g, want %g", i, j, got, want)
			}
		}
	}
	return nil
}
