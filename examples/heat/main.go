// Heat solves the two-dimensional heat equation u_t = u_xx + u_yy on a
// rectangle by explicit finite differences, the heat benchmark of the Cilk-5
// distribution (heat.cilk), one of the benchmarks of the Cilkprof paper
// (Schardl et al., SPAA 2015, Figure 11, on a 4096×1024 grid for 40 time
// steps; the default here is that grid for 100 steps).
//
// Each time step computes a new grid from the old one with a five-point
// stencil whose weights along the two axes differ, since the grid spacing
// does. As in Cilk-5, a step divides the rows in halves recursively, spawning
// one half and computing the other, down to stripes of at most -cutoff rows;
// the step waits for all its stripes before the next one starts, so every
// step is a sync.
//
// A span profile of this program should show, for the call of step in the
// time loop, a parallelism close to the number of stripes per step
// (rows/cutoff, 256 at the default size; about 240 counted in
// instructions): the span is one stripe plus the recursion down to it, per
// step. Measured by the clock on a busy machine it reads lower, since the
// stripe that other processes delayed the most sets each step's span. The
// whole program is far lower, around 30 at the default size, because it
// sets up the grid and checks the result serially: newGrid (which also
// touches the grids' memory for the first time) and check are the top sites
// by local span on span. The stripes hold nearly all of the work; each is
// tens of microseconds, so the burdened parallelism is close to the
// parallelism.
//
// Usage:
//
//	heat [-rows n] [-cols n] [-steps n] [-cutoff rows] [-serial]
//
// With -serial it runs a plain loop nest over the grid for every step, the
// sequential baseline for speedup measurements; both modes compute every
// point with the same arithmetic, so the grids are equal bit for bit. The
// domain is [0, π]×[0, π] with zero boundary, and the initial temperature
// sin(x)·sin(y) is a mode of the discrete operator, which every step scales
// by a known factor: the program checks the result against that closed form
// and prints one line, the same for both modes:
//
//	heat 4096x1024 grid, 100 steps, checksum b6ad710fc0ec46bf
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "heat:", err)
		os.Exit(1)
	}
}

// run parses args, iterates the heat equation and writes the one-line
// result to stdout. It returns an error if the flags are invalid or the
// result fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("heat", flag.ExitOnError)
	rows := fs.Int("rows", 4096, "`n` grid points along x, boundary included")
	cols := fs.Int("cols", 1024, "`n` grid points along y, boundary included")
	steps := fs.Int("steps", 100, "`n` time steps")
	cutoff := fs.Int("cutoff", 16, "compute stripes of at most `rows` rows serially (leafmaxcol in Cilk-5)")
	serial := fs.Bool("serial", false, "run a plain loop nest with no goroutines, the sequential baseline")
	fs.Parse(args)
	switch {
	case *rows < 3 || *cols < 3:
		return fmt.Errorf("-rows %d -cols %d: the grid needs at least 3 rows and 3 columns", *rows, *cols)
	case *steps < 0:
		return fmt.Errorf("-steps %d: must not be negative", *steps)
	case *cutoff < 1:
		return fmt.Errorf("-cutoff %d: must be positive", *cutoff)
	}

	g := newGrid(*rows, *cols)
	coarsening = *cutoff
	for range *steps {
		if *serial {
			g.stripe(1, g.rows-1)
		} else {
			g.step(1, g.rows-1)
		}
		g.cur, g.next = g.next, g.cur
	}
	if err := check(g, *steps); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "heat %dx%d grid, %d steps, checksum %016x\n", *rows, *cols, *steps, checksum(g.cur))
	return nil
}

// coarsening is the number of rows at or below which step computes a stripe
// serially.
var coarsening = 16

// A grid holds the temperature at the current time in cur and is scratch
// space for the next time step in next. Both are row-major with cols
// columns; the boundary rows and columns stay at zero. cx and cy are the
// diffusion numbers Δt/Δx² and Δt/Δy².
type grid struct {
	rows, cols int
	cx, cy     float64
	cur, next  []float64
}

// newGrid returns a rows×cols grid over [0, π]×[0, π] holding
// sin(x)·sin(y), with a time step at the safe side of the stability limit
// of the explicit scheme, cx + cy <= 1/2.
func newGrid(rows, cols int) *grid {
	dx, dy := math.Pi/float64(rows-1), math.Pi/float64(cols-1)
	dt := 0.4 / (1/(dx*dx) + 1/(dy*dy))
	g := &grid{
		rows: rows, cols: cols,
		cx: dt / (dx * dx), cy: dt / (dy * dy),
		cur: make([]float64, rows*cols), next: make([]float64, rows*cols),
	}
	sx, sy := sines(rows), sines(cols)
	for i := 1; i < rows-1; i++ {
		for j := 1; j < cols-1; j++ {
			g.cur[i*cols+j] = sx[i] * sy[j]
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

// step computes the interior rows [lo, hi) of next from cur, splitting them
// in halves and computing the halves in parallel down to stripes of at most
// coarsening rows.
func (g *grid) step(lo, hi int) {
	if hi-lo <= coarsening {
		g.stripe(lo, hi)
		return
	}
	mid := lo + (hi-lo)/2
	var wg sync.WaitGroup
	wg.Go(func() { g.step(lo, mid) })
	g.step(mid, hi)
	wg.Wait()
}

// stripe computes the interior rows [lo, hi) of next from cur.
func (g *grid) stripe(lo, hi int) {
	c := g.cols
	cx, cy := g.cx, g.cy
	for i := lo; i < hi; i++ {
		up, mid, down := g.cur[(i-1)*c:i*c], g.cur[i*c:(i+1)*c], g.cur[(i+1)*c:(i+2)*c]
		out := g.next[i*c : (i+1)*c]
		for j := 1; j < c-1; j++ {
			u := mid[j]
			out[j] = u + cx*(up[j]-2*u+down[j]) + cy*(mid[j-1]-2*u+mid[j+1])
		}
	}
}

// check reports, as an error, whether g after steps steps differs from the
// closed form. On the grid, the second difference along x of sin(x) is
// sin(x) times -4·sin²(Δx/2)/Δx², and likewise along y, so each step
// multiplies the initial temperature by λ = 1 - 4cx·sin²(Δx/2) -
// 4cy·sin²(Δy/2).
func check(g *grid, steps int) error {
	dx, dy := math.Pi/float64(g.rows-1), math.Pi/float64(g.cols-1)
	sx2, sy2 := math.Sin(dx/2), math.Sin(dy/2)
	lambda := 1 - 4*g.cx*sx2*sx2 - 4*g.cy*sy2*sy2
	scale := math.Pow(lambda, float64(steps))
	sx, sy := sines(g.rows), sines(g.cols)
	// Rounding adds well under 1e-16 per step to the error at any point
	// (the largest temperature is 1). A step skipped or computed wrongly at
	// a point changes its temperature u by about (1-λ)·u, and 1-λ is 4e-7 at
	// the default size: far above the tolerance except within a few points
	// of a corner, where u is tiny.
	tolerance := 1e-14 * float64(steps+1)
	for i := range g.rows {
		for j := range g.cols {
			want := scale * sx[i] * sy[j]
			if got := g.cur[i*g.cols+j]; math.Abs(got-want) > tolerance {
				return fmt.Errorf("wrong temperature at (%d, %d): %g, want %g", i, j, got, want)
			}
		}
	}
	return nil
}

// checksum is a hash of the elements of m in order.
func checksum(m []float64) uint64 {
	var h uint64
	for _, v := range m {
		h = mix(h ^ math.Float64bits(v))
	}
	return h
}

// mix is the SplitMix64 finalizer, a cheap bijective hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
