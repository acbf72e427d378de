// LU factors a square matrix as A = L·U, L unit lower triangular and U upper
// triangular, by the recursive divide-and-conquer algorithm of the lu
// benchmark of the Cilk-5 distribution (lu.cilk), one of the benchmarks of
// the Cilkprof paper (Schardl et al., SPAA 2015, Figure 11, on a 2048×2048
// matrix; the default here is 1536×1536, in blocks of 48).
//
// With A split into quadrants, factor factors A00 = L00·U00, then in parallel
// computes U01 = L00⁻¹·A01 (lowerSolve) and L10 = A10·U00⁻¹ (upperSolve),
// then updates A11 -= L10·U01 (schur) and factors A11. The triangular solves
// split the right-hand side into independent halves solved in parallel, and
// schur computes its eight quadrant products in two parallel rounds of four,
// like matmul. Blocks of at most -cutoff rows are handled by serial loop
// nests. There is no pivoting: the input is diagonally dominant, so the
// factorization is stable without it, as in Cilk-5.
//
// The work is Θ(n³), and the span Θ(n log² n): the two recursive
// factorizations run one after the other, as do the solves and the update
// between them. A span profile of this program should show the call of
// factor with a parallelism of a few tens at the default size (about 45
// counted in instructions; less by the clock on a busy machine), and the
// whole program about half that, since generating the matrix, copying it
// and checking the factors are serial. baseSchur holds over 90% of the work
// and, although its calls on the critical path are a small fraction of
// them, the largest local span on span; the base cases of the triangular
// solves, chained down the diagonal, come next. Each base case is tens of
// microseconds or more, so the burdened parallelism is close to the
// parallelism.
//
// Usage:
//
//	lu [-n size] [-cutoff size] [-seed seed] [-serial]
//
// With -serial it runs the same recursion with no goroutines, the sequential
// baseline for speedup measurements (like matmul's, the recursion keeps the
// blocks it works on in cache). Both modes do the same arithmetic in the
// same order and compute the same factors bit for bit. Either way it checks
// that L·(U·x) = A·x, up to rounding, for a random vector x, and prints one
// line, the same for both modes:
//
//	factored 1536x1536 matrix, checksum 5b7735728b11b7cf
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lu:", err)
		os.Exit(1)
	}
}

// run parses args, factors a random matrix and writes the one-line result
// to stdout. It returns an error if the flags are invalid or the factors
// fail their check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("lu", flag.ExitOnError)
	n := fs.Int("n", 1536, "factor a `size`×size matrix; halving it must give even numbers down to the cutoff")
	cutoff := fs.Int("cutoff", 64, "handle blocks of at most `size`×size serially")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "factor with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *cutoff < 1 {
		return fmt.Errorf("-cutoff %d: must be positive", *cutoff)
	}
	if !halves(*n, *cutoff) {
		return fmt.Errorf("-n %d: must be a power of two times a number from 1 to the cutoff, %d", *n, *cutoff)
	}

	r := rand.New(rand.NewPCG(*seed, *seed))
	a := dominantMatrix(r, *n)
	lu := make([]float64, len(a))
	copy(lu, a)
	coarsening = *cutoff
	m := matrix{lu, *n}
	if *serial {
		serialLU(m, *n)
	} else {
		factor(m, *n)
	}
	if err := check(r, a, lu, *n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "factored %dx%d matrix, checksum %016x\n", *n, *n, checksum(lu))
	return nil
}

// coarsening is the size at or below which the recursions call their base
// cases.
var coarsening = 64

// halves reports whether n is positive and halving it gives an even number
// at every step until it is at most cutoff, so that the recursions can
// split it.
func halves(n, cutoff int) bool {
	for ; n > cutoff; n /= 2 {
		if n%2 != 0 {
			return false
		}
	}
	return n > 0
}

// A matrix is a block of a row-major matrix with dim columns: element (i, j)
// of the block is a[i*dim+j].
type matrix struct {
	a   []float64
	dim int
}

// at returns the element (i, j) of m.
func (m matrix) at(i, j int) float64 { return m.a[i*m.dim+j] }

// row returns elements [lo, hi) of row i of m.
func (m matrix) row(i, lo, hi int) []float64 { return m.a[i*m.dim+lo : i*m.dim+hi] }

// quad returns the quadrant (r, s) of m, whose blocks are h×h.
func (m matrix) quad(r, s, h int) matrix { return matrix{m.a[(r*m.dim+s)*h:], m.dim} }

// factor overwrites the n×n matrix m with its LU factors: U on and above the
// diagonal, L below it (its unit diagonal is implicit).
func factor(m matrix, n int) {
	if n <= coarsening {
		baseLU(m, n)
		return
	}
	h := n / 2
	m00, m01, m10, m11 := m.quad(0, 0, h), m.quad(0, 1, h), m.quad(1, 0, h), m.quad(1, 1, h)
	factor(m00, h)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lowerSolve(m01, m00, h)
	}()
	upperSolve(m10, m00, h)
	wg.Wait()
	schur(m11, m10, m01, h)
	factor(m11, h)
}

// lowerSolve overwrites the n×n matrix m with L⁻¹·m, where L is the unit
// lower triangle of l. The left and right halves of m are independent and
// are solved in parallel.
func lowerSolve(m, l matrix, n int) {
	if n <= coarsening {
		baseLowerSolve(m, l, n)
		return
	}
	h := n / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lowerSolveHalf(m.quad(0, 0, h), m.quad(1, 0, h), l, h)
	}()
	lowerSolveHalf(m.quad(0, 1, h), m.quad(1, 1, h), l, h)
	wg.Wait()
}

// lowerSolveHalf solves for one column half [top; bottom] of lowerSolve's
// right-hand side, whose blocks are h×h: top = L00⁻¹·top, then
// bottom = L11⁻¹·(bottom - L10·top).
func lowerSolveHalf(top, bottom, l matrix, h int) {
	lowerSolve(top, l.quad(0, 0, h), h)
	schur(bottom, l.quad(1, 0, h), top, h)
	lowerSolve(bottom, l.quad(1, 1, h), h)
}

// upperSolve overwrites the n×n matrix m with m·U⁻¹, where U is the upper
// triangle of u, diagonal included. The top and bottom halves of m are
// independent and are solved in parallel.
func upperSolve(m, u matrix, n int) {
	if n <= coarsening {
		baseUpperSolve(m, u, n)
		return
	}
	h := n / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		upperSolveHalf(m.quad(0, 0, h), m.quad(0, 1, h), u, h)
	}()
	upperSolveHalf(m.quad(1, 0, h), m.quad(1, 1, h), u, h)
	wg.Wait()
}

// upperSolveHalf solves for one row half [left right] of upperSolve's
// right-hand side, whose blocks are h×h: left = left·U00⁻¹, then
// right = (right - left·U01)·U11⁻¹.
func upperSolveHalf(left, right, u matrix, h int) {
	upperSolve(left, u.quad(0, 0, h), h)
	schur(right, left, u.quad(0, 1, h), h)
	upperSolve(right, u.quad(1, 1, h), h)
}

// schur subtracts the product of the n×n matrices v and w from the n×n
// matrix m. It computes the four quadrant products that make up the first
// half of each quadrant of the product in parallel, waits, then the four
// that make up the second half.
func schur(m, v, w matrix, n int) {
	if n <= coarsening {
		baseSchur(m, v, w, n)
		return
	}
	h := n / 2
	for k := range 2 {
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			schur(m.quad(0, 0, h), v.quad(0, k, h), w.quad(k, 0, h), h)
		}()
		go func() {
			defer wg.Done()
			schur(m.quad(0, 1, h), v.quad(0, k, h), w.quad(k, 1, h), h)
		}()
		go func() {
			defer wg.Done()
			schur(m.quad(1, 0, h), v.quad(1, k, h), w.quad(k, 0, h), h)
		}()
		schur(m.quad(1, 1, h), v.quad(1, k, h), w.quad(k, 1, h), h)
		wg.Wait()
	}
}

// serialLU is factor with no goroutines: the same recursion, with the same
// order of updates to every element.
func serialLU(m matrix, n int) {
	if n <= coarsening {
		baseLU(m, n)
		return
	}
	h := n / 2
	m00, m01, m10, m11 := m.quad(0, 0, h), m.quad(0, 1, h), m.quad(1, 0, h), m.quad(1, 1, h)
	serialLU(m00, h)
	serialLowerSolve(m01, m00, h)
	serialUpperSolve(m10, m00, h)
	serialSchur(m11, m10, m01, h)
	serialLU(m11, h)
}

// serialLowerSolve is lowerSolve with no goroutines.
func serialLowerSolve(m, l matrix, n int) {
	if n <= coarsening {
		baseLowerSolve(m, l, n)
		return
	}
	h := n / 2
	for s := range 2 {
		top, bottom := m.quad(0, s, h), m.quad(1, s, h)
		serialLowerSolve(top, l.quad(0, 0, h), h)
		serialSchur(bottom, l.quad(1, 0, h), top, h)
		serialLowerSolve(bottom, l.quad(1, 1, h), h)
	}
}

// serialUpperSolve is upperSolve with no goroutines.
func serialUpperSolve(m, u matrix, n int) {
	if n <= coarsening {
		baseUpperSolve(m, u, n)
		return
	}
	h := n / 2
	for r := range 2 {
		left, right := m.quad(r, 0, h), m.quad(r, 1, h)
		serialUpperSolve(left, u.quad(0, 0, h), h)
		serialSchur(right, left, u.quad(0, 1, h), h)
		serialUpperSolve(right, u.quad(1, 1, h), h)
	}
}

// serialSchur is schur with no goroutines.
func serialSchur(m, v, w matrix, n int) {
	if n <= coarsening {
		baseSchur(m, v, w, n)
		return
	}
	h := n / 2
	for k := range 2 {
		serialSchur(m.quad(0, 0, h), v.quad(0, k, h), w.quad(k, 0, h), h)
		serialSchur(m.quad(0, 1, h), v.quad(0, k, h), w.quad(k, 1, h), h)
		serialSchur(m.quad(1, 0, h), v.quad(1, k, h), w.quad(k, 0, h), h)
		serialSchur(m.quad(1, 1, h), v.quad(1, k, h), w.quad(k, 1, h), h)
	}
}

// baseLU is factor for a block, by Gaussian elimination: for each pivot, it
// scales the column below it and subtracts multiples of the pivot row from
// the rows below.
func baseLU(m matrix, n int) {
	for k := range n {
		pivot := m.at(k, k)
		pk := m.row(k, k+1, n)
		for i := k + 1; i < n; i++ {
			ri := m.row(i, k, n)
			lik := ri[0] / pivot
			ri[0] = lik
			ri = ri[1:]
			for j, u := range pk {
				ri[j] -= lik * u
			}
		}
	}
}

// baseLowerSolve is lowerSolve for a block, by forward substitution: row i
// of the solution is row i of m minus the multiples l[i][k] of the rows k < i
// of the solution, which are already computed.
func baseLowerSolve(m, l matrix, n int) {
	for i := 1; i < n; i++ {
		ri := m.row(i, 0, n)
		for k := range i {
			lik := l.at(i, k)
			rk := m.row(k, 0, n)
			for j := range ri {
				ri[j] -= lik * rk[j]
			}
		}
	}
}

// baseUpperSolve is upperSolve for a block, by substitution along each row
// of m: entry j of a row of the solution is the row's entry j, less the
// multiples of rows j' < j of U already applied, divided by u[j][j].
func baseUpperSolve(m, u matrix, n int) {
	for i := range n {
		ri := m.row(i, 0, n)
		for j := range n {
			x := ri[j] / u.at(j, j)
			ri[j] = x
			uj := u.row(j, j+1, n)
			rest := ri[j+1:]
			for k, v := range uj {
				rest[k] -= x * v
			}
		}
	}
}

// baseSchur is schur for a block. It is an i-k-j loop nest, so that the
// inner loop runs along rows, with four values of k per pass over a row of m
// to load and store it a quarter as often. The order of the updates to each
// element is the same as if the four were applied one after another in
// increasing k.
func baseSchur(m, v, w matrix, n int) {
	for i := range n {
		mi := m.row(i, 0, n)
		vi := v.row(i, 0, n)
		k := 0
		for ; k+4 <= n; k += 4 {
			v0, v1, v2, v3 := vi[k], vi[k+1], vi[k+2], vi[k+3]
			w0, w1, w2, w3 := w.row(k, 0, n), w.row(k+1, 0, n), w.row(k+2, 0, n), w.row(k+3, 0, n)
			for j := range mi {
				mi[j] = mi[j] - v0*w0[j] - v1*w1[j] - v2*w2[j] - v3*w3[j]
			}
		}
		for ; k < n; k++ {
			vik := vi[k]
			wk := w.row(k, 0, n)
			for j := range mi {
				mi[j] -= vik * wk[j]
			}
		}
	}
}

// dominantMatrix returns an n×n matrix with entries uniform in [-1, 1) and n
// added to the diagonal: diagonally dominant by rows, so that elimination
// without pivoting is stable.
func dominantMatrix(r *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := range a {
		a[i] = 2*r.Float64() - 1
	}
	for i := range n {
		a[i*n+i] += float64(n)
	}
	return a
}

// check reports, as an error, whether lu, which holds L below the diagonal
// and U on and above it, fails to factor a: it compares L·(U·x) with A·x
// for a random vector x.
func check(r *rand.Rand, a, lu []float64, n int) error {
	x := make([]float64, n)
	for i := range x {
		x[i] = 2*r.Float64() - 1
	}
	// ux = U·x, then lux = L·ux, L with a unit diagonal.
	ux := make([]float64, n)
	for i := range n {
		var s float64
		for j := i; j < n; j++ {
			s += lu[i*n+j] * x[j]
		}
		ux[i] = s
	}
	for i := range n {
		lux := ux[i]
		for j := range i {
			lux += lu[i*n+j] * ux[j]
		}
		var ax float64
		for j := range n {
			ax += a[i*n+j] * x[j]
		}
		// (A·x)_i is about n, and rounding in the factors and in both
		// products leaves residuals below 1e-17·n² (1e-11 for n = 1536);
		// an element of L or U off by δ moves the result by about δ·n.
		if d := math.Abs(lux - ax); d > 1e-14*float64(n)*float64(n) {
			return fmt.Errorf("L·U differs from A: row %d of L·U·x is %g, want %g", i, lux, ax)
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
