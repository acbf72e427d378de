// Cholesky factors a dense symmetric positive-definite matrix A into L·Lᵀ,
// L lower triangular, by divide and conquer. It is a dense version of the
// Cilk-5 benchmark cholesky (Frigo, Leiserson and Randall, PLDI 1998), one of
// the programs whose profiling overhead the Cilkprof paper reports (Schardl
// et al., SPAA 2015, Figure 11); Cilk-5's program stores a sparse matrix in a
// quadtree, this one a dense matrix in rows, with the same recursion:
//
//	L11 = chol(A11)
//	L21 = A21·L11⁻ᵀ          (trsm: a triangular solve)
//	A22 = A22 − L21·L21ᵀ     (syrk: a symmetric rank-k update)
//	L22 = chol(A22)
//
// The four steps depend on each other, so chol itself never spawns: the
// parallelism is inside trsm, whose rows are independent, and syrk, which
// updates the three blocks of its lower triangle at once and splits its
// products (gemm) by rows and columns like a matrix multiply. All spawns use
// sync.WaitGroup.Go.
//
// A span profile of this program should show nine tenths of the work as
// the local work of the calls of gemmBase; a parallelism of about 70 for the
// factorization itself (the call of chol) at the default size, since the
// work is n³/3 and the span grows as n·log²n (down the diagonal: each
// cholBase, then a triangular solve whose columns are serial, then the
// update); and a whole-program parallelism of about 20, because the
// program's serial Θ(n²) parts, generating the matrix (randomSPD), copying
// it (the local work of run) and checking the factor (check), hold most of
// the span: they top the sites by local span on span, as the input's
// generation does in quicksort. A smaller cutoff shortens the serial
// cholBase calls on the diagonal at the price of more spawns.
//
// Usage:
//
//	cholesky [-n size] [-cutoff size] [-seed seed] [-serial]
//
// With -serial it runs the same recursion with no goroutines, the sequential
// baseline for speedup measurements (blocked, so that it keeps its operands
// in cache, unlike a plain triple loop). Both modes do the same arithmetic in
// the same order, so they compute the same L bit for bit. Either way it
// checks the factor by its residual on a random vector x, L·(Lᵀ·x) against
// A·x, and prints one line, the same for both modes:
//
//	factored 2048x2048 matrix, checksum c24ee31cf412ac2f
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cholesky:", err)
		os.Exit(1)
	}
}

// run parses args, factors a random positive-definite matrix and writes the
// one-line result to stdout. It returns an error if the flags are invalid or
// the factor fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cholesky", flag.ExitOnError)
	n := fs.Int("n", 2048, "factor a `size`×size matrix")
	cutoff := fs.Int("cutoff", 32, "solve blocks of at most `size`×size serially")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "factor with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *n < 1 {
		return fmt.Errorf("-n %d: must be positive", *n)
	}
	if *cutoff < 1 {
		return fmt.Errorf("-cutoff %d: must be positive", *cutoff)
	}

	r := rand.New(rand.NewPCG(*seed, *seed))
	a := randomSPD(r, *n)
	l := slices.Clone(a)
	coarsening = *cutoff
	if *serial {
		serialChol(l, *n, *n)
	} else {
		chol(l, *n, *n)
	}
	if err := check(r, l, a, *n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "factored %dx%d matrix, checksum %016x\n", *n, *n, checksum(l, *n))
	return nil
}

// coarsening is the size at or below which the recursions call their base
// cases.
var coarsening = 32

// All matrices are blocks of one n×n matrix stored row-major with dim
// columns: element (i, j) of a block m is m[i*dim+j]. Only the lower triangle
// of the matrix being factored is read or written; the factor replaces it.

// chol replaces the lower triangle of the n×n block a with its Cholesky
// factor.
func chol(a []float64, dim, n int) {
	if n <= coarsening {
		cholBase(a, dim, n)
		return
	}
	h := n / 2
	a21, a22 := a[h*dim:], a[h*dim+h:]
	chol(a, dim, h)
	trsm(a21, a, dim, n-h, h)
	syrk(a22, a21, dim, n-h, h)
	chol(a22, dim, n-h)
}

// trsm replaces the m×n block b with X such that X·Lᵀ = b, where l is an n×n
// lower-triangular block. Rows of X are independent, so it splits b by rows
// in parallel; columns depend on the ones before them, so splitting by
// columns is serial, with a gemm in between.
func trsm(b, l []float64, dim, m, n int) {
	switch {
	case m <= coarsening && n <= coarsening:
		trsmBase(b, l, dim, m, n)
	case m >= n:
		h := m / 2
		var wg sync.WaitGroup
		wg.Go(func() { trsm(b, l, dim, h, n) })
		trsm(b[h*dim:], l, dim, m-h, n)
		wg.Wait()
	default:
		// [X1 X2]·[L11ᵀ L21ᵀ; 0 L22ᵀ] = [B1 B2]: X1·L11ᵀ = B1, then
		// X2·L22ᵀ = B2 − X1·L21ᵀ.
		h := n / 2
		trsm(b, l, dim, m, h)
		gemm(b[h:], b, l[h*dim:], dim, m, n-h, h)
		trsm(b[h:], l[h*dim+h:], dim, m, n-h)
	}
}

// syrk subtracts a·aᵀ from the lower triangle of the n×n block c, where a is
// n×k. The three blocks of c's lower triangle are independent.
func syrk(c, a []float64, dim, n, k int) {
	switch {
	case n <= coarsening && k <= coarsening:
		syrkBase(c, a, dim, n, k)
	case n <= coarsening:
		h := k / 2
		syrk(c, a, dim, n, h)
		syrk(c, a[h:], dim, n, k-h)
	default:
		h := n / 2
		var wg sync.WaitGroup
		wg.Go(func() { syrk(c, a, dim, h, k) })
		wg.Go(func() { gemm(c[h*dim:], a[h*dim:], a, dim, n-h, h, k) })
		syrk(c[h*dim+h:], a[h*dim:], dim, n-h, k)
		wg.Wait()
	}
}

// gemm subtracts a·bᵀ from the m×n block c, where a is m×k and b is n×k. It
// splits the largest dimension: rows or columns of c in parallel, the inner
// dimension serially, so that every element of c receives its terms in an
// order that depends only on the sizes.
func gemm(c, a, b []float64, dim, m, n, k int) {
	switch {
	case m <= coarsening && n <= coarsening && k <= coarsening:
		gemmBase(c, a, b, dim, m, n, k)
	case m >= n && m >= k:
		h := m / 2
		var wg sync.WaitGroup
		wg.Go(func() { gemm(c, a, b, dim, h, n, k) })
		gemm(c[h*dim:], a[h*dim:], b, dim, m-h, n, k)
		wg.Wait()
	case n >= k:
		h := n / 2
		var wg sync.WaitGroup
		wg.Go(func() { gemm(c, a, b, dim, m, h, k) })
		gemm(c[h:], a, b[h*dim:], dim, m, n-h, k)
		wg.Wait()
	default:
		h := k / 2
		gemm(c, a, b, dim, m, n, h)
		gemm(c, a[h:], b[h:], dim, m, n, k-h)
	}
}

// serialChol is chol with no goroutines.
func serialChol(a []float64, dim, n int) {
	if n <= coarsening {
		cholBase(a, dim, n)
		return
	}
	h := n / 2
	a21, a22 := a[h*dim:], a[h*dim+h:]
	serialChol(a, dim, h)
	serialTrsm(a21, a, dim, n-h, h)
	serialSyrk(a22, a21, dim, n-h, h)
	serialChol(a22, dim, n-h)
}

// serialTrsm is trsm with no goroutines.
func serialTrsm(b, l []float64, dim, m, n int) {
	switch {
	case m <= coarsening && n <= coarsening:
		trsmBase(b, l, dim, m, n)
	case m >= n:
		h := m / 2
		serialTrsm(b, l, dim, h, n)
		serialTrsm(b[h*dim:], l, dim, m-h, n)
	default:
		h := n / 2
		serialTrsm(b, l, dim, m, h)
		serialGemm(b[h:], b, l[h*dim:], dim, m, n-h, h)
		serialTrsm(b[h:], l[h*dim+h:], dim, m, n-h)
	}
}

// serialSyrk is syrk with no goroutines.
func serialSyrk(c, a []float64, dim, n, k int) {
	switch {
	case n <= coarsening && k <= coarsening:
		syrkBase(c, a, dim, n, k)
	case n <= coarsening:
		h := k / 2
		serialSyrk(c, a, dim, n, h)
		serialSyrk(c, a[h:], dim, n, k-h)
	default:
		h := n / 2
		serialSyrk(c, a, dim, h, k)
		serialGemm(c[h*dim:], a[h*dim:], a, dim, n-h, h, k)
		serialSyrk(c[h*dim+h:], a[h*dim:], dim, n-h, k)
	}
}

// serialGemm is gemm with no goroutines.
func serialGemm(c, a, b []float64, dim, m, n, k int) {
	switch {
	case m <= coarsening && n <= coarsening && k <= coarsening:
		gemmBase(c, a, b, dim, m, n, k)
	case m >= n && m >= k:
		h := m / 2
		serialGemm(c, a, b, dim, h, n, k)
		serialGemm(c[h*dim:], a[h*dim:], b, dim, m-h, n, k)
	case n >= k:
		h := n / 2
		serialGemm(c, a, b, dim, m, h, k)
		serialGemm(c[h:], a, b[h*dim:], dim, m, n-h, k)
	default:
		h := k / 2
		serialGemm(c, a, b, dim, m, n, h)
		serialGemm(c, a[h:], b[h:], dim, m, n, k-h)
	}
}

// cholBase factors the n×n block a in place, row by row (the
// Cholesky–Crout order), so that every inner loop runs along two rows. A
// matrix that is not positive definite leaves a NaN in the factor, which the
// check rejects.
func cholBase(a []float64, dim, n int) {
	for i := range n {
		ai := a[i*dim:][:i+1]
		for j := range i {
			aj := a[j*dim:][:j+1]
			ai[j] = (ai[j] - dot(ai[:j], aj[:j])) / aj[j]
		}
		ai[i] = math.Sqrt(ai[i] - dot(ai[:i], ai[:i]))
	}
}

// trsmBase solves X·Lᵀ = b for the m×n block b in place, l being n×n and
// lower triangular: each row of X by forward substitution.
func trsmBase(b, l []float64, dim, m, n int) {
	for i := range m {
		bi := b[i*dim:][:n]
		for j := range n {
			lj := l[j*dim:][:j+1]
			bi[j] = (bi[j] - dot(bi[:j], lj[:j])) / lj[j]
		}
	}
}

// syrkBase subtracts a·aᵀ from the lower triangle of the n×n block c, a
// being n×k.
func syrkBase(c, a []float64, dim, n, k int) {
	for i := range n {
		ci := c[i*dim:][:i+1]
		ai := a[i*dim:][:k]
		for j := range ci {
			ci[j] -= dot(ai, a[j*dim:][:k])
		}
	}
}

// gemmBase subtracts a·bᵀ from the m×n block c, a being m×k and b n×k. Each
// element of c is a dot product of a row of a and a row of b; it computes
// them two by two in each direction, so that every element loaded from a or
// b serves two products.
func gemmBase(c, a, b []float64, dim, m, n, k int) {
	i := 0
	for ; i+2 <= m; i += 2 {
		a0, a1 := a[i*dim:][:k], a[(i+1)*dim:][:k]
		c0, c1 := c[i*dim:][:n], c[(i+1)*dim:][:n]
		j := 0
		for ; j+2 <= n; j += 2 {
			b0, b1 := b[j*dim:][:k], b[(j+1)*dim:][:k]
			var s00, s01, s10, s11 float64
			for p, x0 := range a0 {
				x1, y0, y1 := a1[p], b0[p], b1[p]
				s00 += x0 * y0
				s01 += x0 * y1
				s10 += x1 * y0
				s11 += x1 * y1
			}
			c0[j] -= s00
			c0[j+1] -= s01
			c1[j] -= s10
			c1[j+1] -= s11
		}
		if j < n {
			bj := b[j*dim:][:k]
			c0[j] -= dot(a0, bj)
			c1[j] -= dot(a1, bj)
		}
	}
	if i < m {
		ai, ci := a[i*dim:][:k], c[i*dim:][:n]
		for j := range ci {
			ci[j] -= dot(ai, b[j*dim:][:k])
		}
	}
}

// dot returns the dot product of x and y, which have the same length,
// summed from the first element to the last.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// randomSPD returns the lower triangle of a random symmetric n×n matrix
// with off-diagonal elements in [-1, 1) and n+1 on the diagonal: strictly
// diagonally dominant with a positive diagonal, hence positive definite. The
// factorization reads only the lower triangle, so the upper one stays zero.
func randomSPD(r *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		ai := a[i*n : i*n+i+1]
		for j := range i {
			ai[j] = 2*r.Float64() - 1
		}
		ai[i] = float64(n + 1)
	}
	return a
}

// tolerance bounds the residual check's relative error. Cholesky is
// backward stable: the rounding errors of a correct factor give a relative
// residual of a few times n·2⁻⁵³ at most, below 1e-12 for any size this
// program handles in reasonable time, while a wrong element of L shows up
// in the residual at its own magnitude.
const tolerance = 1e-10

// check reports, as an error, whether the lower triangle of l is not the
// Cholesky factor of the symmetric matrix whose lower triangle is a: whether
// ‖L·(Lᵀ·x) − A·x‖∞ exceeds tolerance × ‖A‖∞·‖x‖∞ for a random vector x, or
// L has a diagonal element that is not positive. Only the lower triangles
// are read.
func check(r *rand.Rand, l, a []float64, n int) error {
	for i := range n {
		if d := l[i*n+i]; !(d > 0) {
			return fmt.Errorf("factor has diagonal element L[%d][%d] = %g, want positive", i, i, d)
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = 2*r.Float64() - 1
	}
	// y = Lᵀ·x, w = A·x and the absolute row sums of A, each row of the
	// lower triangles standing for itself and the column above it.
	y := make([]float64, n)
	w := make([]float64, n)
	rowSum := make([]float64, n)
	for i := range n {
		xi := x[i]
		for j, lij := range l[i*n : i*n+i+1] {
			y[j] += lij * xi
		}
		ai := a[i*n : i*n+i]
		w[i] += a[i*n+i] * xi
		rowSum[i] += math.Abs(a[i*n+i])
		for j, aij := range ai {
			w[i] += aij * x[j]
			w[j] += aij * xi
			rowSum[i] += math.Abs(aij)
			rowSum[j] += math.Abs(aij)
		}
	}
	var normA, normX, worst float64
	worstRow := 0
	for i := range n {
		normA = max(normA, rowSum[i])
		normX = max(normX, math.Abs(x[i]))
		z := dot(l[i*n:i*n+i+1], y[:i+1])
		if d := math.Abs(z - w[i]); d > worst || math.IsNaN(d) {
			worst, worstRow = d, i
		}
	}
	if rel := worst / (normA * normX); !(rel <= tolerance) {
		return fmt.Errorf("wrong factor: row %d of L·Lᵀ·x is off by %g, relative residual %g > %g", worstRow, worst, rel, tolerance)
	}
	return nil
}

// checksum is a hash of the lower triangle of the n×n matrix m, row by row.
func checksum(m []float64, n int) uint64 {
	var h uint64
	for i := range n {
		for _, v := range m[i*n : i*n+i+1] {
			h = mix(h ^ math.Float64bits(v))
		}
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
