// Strassen multiplies square matrices by Strassen's algorithm, the strassen
// benchmark of the Cilk-5 distribution (strassen.cilk), one of the
// benchmarks of the Cilkprof paper (Schardl et al., SPAA 2015, Figure 11, on
// 2048×2048 matrices).
//
// Split A, B and C = A·B into quadrants; Strassen's seven products
//
//	M1 = (A11+A22)(B11+B22)   M2 = (A21+A22)B11   M3 = A11(B12-B22)
//	M4 = A22(B21-B11)         M5 = (A11+A12)B22   M6 = (A21-A11)(B11+B12)
//	M7 = (A12-A22)(B21+B22)
//
// give C11 = M1+M4-M5+M7, C12 = M3+M5, C21 = M2+M4 and C22 = M1-M2+M3+M6,
// so that a multiplication of size n costs seven of size n/2 and eighteen
// additions, Θ(n^lg 7) = Θ(n^2.81) work. As in Cilk-5, the seven products
// run in parallel, each forming its own operand sums first, and the parent
// combines them serially once all seven are done; matrices of at most
// -cutoff rows are multiplied by a classic loop nest. Each product is a
// parlib.Spawn whose result is its matrix, collected with Task.Wait.
//
// The span is Θ(n²): on the critical path, every level adds the operand
// sums of one product and the serial combination, each Θ(n²) at size n, so
// the top level dominates. A span profile of this program should show the
// call of strassen with a parallelism of about 200 at the default size
// (counted in instructions; less by the clock on a busy machine), and the
// whole program about a tenth of that, because generating the matrices and
// checking the product are serial and are the top sites by local span on
// span. Within the multiplication, base holds about 90% of the work, but
// the serial combine has the largest local span on span, then the operand
// sums (add and sub) of the top level; base cases are hundreds of
// microseconds, so the burdened parallelism is close to the parallelism.
//
// Go's scheduler, unlike Cilk's, starts spawned goroutines first in, first
// out, so a parallel run starts many products before it finishes any, and
// their temporary matrices are live at once: at the default size a run with
// goroutines, even with GOMAXPROCS=1, peaks at more than twice the memory of a
// serial one, and spends the difference in page faults.
//
// Usage:
//
//	strassen [-n size] [-cutoff size] [-seed seed] [-serial]
//
// With -serial it runs the same recursion with no goroutines, the sequential
// baseline for speedup measurements. Either way it checks the
// product with Freivalds' test (A·(B·x) = C·x for a random vector x; the
// matrices hold small integers, so all the arithmetic, Strassen's
// subtractions included, is exact) and prints one line, the same for both
// modes:
//
//	multiplied 1024x1024 matrices, checksum 10e042c091013b0d
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "strassen:", err)
		os.Exit(1)
	}
}

// run parses args, multiplies two random matrices and writes the one-line
// result to stdout. It returns an error if the flags are invalid or the
// product fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("strassen", flag.ExitOnError)
	n := fs.Int("n", 1024, "multiply `size`×size matrices; halving it must give even numbers down to the cutoff")
	cutoff := fs.Int("cutoff", 64, "multiply matrices of at most `size`×size by the classic algorithm")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "multiply with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *cutoff < 1 {
		return fmt.Errorf("-cutoff %d: must be positive", *cutoff)
	}
	if !halves(*n, *cutoff) {
		return fmt.Errorf("-n %d: must be a power of two times a number from 1 to the cutoff, %d", *n, *cutoff)
	}

	r := rand.New(rand.NewPCG(*seed, *seed))
	a := randomMatrix(r, *n)
	b := randomMatrix(r, *n)
	c := newMatrix(*n)
	coarsening = *cutoff
	if *serial {
		serialStrassen(c, a, b, *n)
	} else {
		strassen(c, a, b, *n)
	}
	if err := check(r, c, a, b, *n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "multiplied %dx%d matrices, checksum %016x\n", *n, *n, checksum(c, *n))
	return nil
}

// coarsening is the size at or below which strassen calls base.
var coarsening = 64

// halves reports whether n is positive and halving it gives an even number
// at every step until it is at most cutoff, so that strassen can split it.
func halves(n, cutoff int) bool {
	for ; n > cutoff; n /= 2 {
		if n%2 != 0 {
			return false
		}
	}
	return n > 0
}

// A matrix is a square block of a row-major matrix with stride columns:
// element (i, j) of the block is a[i*stride+j].
type matrix struct {
	a      []float64
	stride int
}

// newMatrix returns an n×n matrix of zeros, stored compactly.
func newMatrix(n int) matrix { return matrix{make([]float64, n*n), n} }

// row returns the first n elements of row i of m.
func (m matrix) row(i, n int) []float64 { return m.a[i*m.stride : i*m.stride+n] }

// quad returns the quadrant (r, s) of m, whose blocks are h×h.
func (m matrix) quad(r, s, h int) matrix { return matrix{m.a[(r*m.stride+s)*h:], m.stride} }

// strassen stores the product of the n×n matrices a and b in the n×n matrix
// c, computing Strassen's seven products in parallel. n must pass
// halves(n, coarsening).
func strassen(c, a, b matrix, n int) {
	if n <= coarsening {
		base(c, a, b, n)
		return
	}
	h := n / 2
	a11, a12, a21, a22 := a.quad(0, 0, h), a.quad(0, 1, h), a.quad(1, 0, h), a.quad(1, 1, h)
	b11, b12, b21, b22 := b.quad(0, 0, h), b.quad(0, 1, h), b.quad(1, 0, h), b.quad(1, 1, h)

	m1 := parlib.Spawn(func() matrix { return product(add(a11, a22, h), add(b11, b22, h), h) })
	m2 := parlib.Spawn(func() matrix { return product(add(a21, a22, h), b11, h) })
	m3 := parlib.Spawn(func() matrix { return product(a11, sub(b12, b22, h), h) })
	m4 := parlib.Spawn(func() matrix { return product(a22, sub(b21, b11, h), h) })
	m5 := parlib.Spawn(func() matrix { return product(add(a11, a12, h), b22, h) })
	m6 := parlib.Spawn(func() matrix { return product(sub(a21, a11, h), add(b11, b12, h), h) })
	m7 := product(sub(a12, a22, h), add(b21, b22, h), h)
	p1, p2, p3, p4, p5, p6 := m1.Wait(), m2.Wait(), m3.Wait(), m4.Wait(), m5.Wait(), m6.Wait()
	combine(c, p1, p2, p3, p4, p5, p6, m7, h)
}

// product returns the product of the n×n matrices a and b in a new matrix.
func product(a, b matrix, n int) matrix {
	c := newMatrix(n)
	strassen(c, a, b, n)
	return c
}

// serialStrassen is strassen with no goroutines.
func serialStrassen(c, a, b matrix, n int) {
	if n <= coarsening {
		base(c, a, b, n)
		return
	}
	h := n / 2
	a11, a12, a21, a22 := a.quad(0, 0, h), a.quad(0, 1, h), a.quad(1, 0, h), a.quad(1, 1, h)
	b11, b12, b21, b22 := b.quad(0, 0, h), b.quad(0, 1, h), b.quad(1, 0, h), b.quad(1, 1, h)
	p := func(a, b matrix) matrix {
		c := newMatrix(h)
		serialStrassen(c, a, b, h)
		return c
	}
	m1 := p(add(a11, a22, h), add(b11, b22, h))
	m2 := p(add(a21, a22, h), b11)
	m3 := p(a11, sub(b12, b22, h))
	m4 := p(a22, sub(b21, b11, h))
	m5 := p(add(a11, a12, h), b22)
	m6 := p(sub(a21, a11, h), add(b11, b12, h))
	m7 := p(sub(a12, a22, h), add(b21, b22, h))
	combine(c, m1, m2, m3, m4, m5, m6, m7, h)
}

// combine stores in the quadrants of c, whose blocks are h×h, the sums of
// Strassen's products m1 to m7 that make them up.
func combine(c, m1, m2, m3, m4, m5, m6, m7 matrix, h int) {
	c11, c12, c21, c22 := c.quad(0, 0, h), c.quad(0, 1, h), c.quad(1, 0, h), c.quad(1, 1, h)
	for i := range h {
		r11, r12, r21, r22 := c11.row(i, h), c12.row(i, h), c21.row(i, h), c22.row(i, h)
		p1, p2, p3, p4 := m1.row(i, h), m2.row(i, h), m3.row(i, h), m4.row(i, h)
		p5, p6, p7 := m5.row(i, h), m6.row(i, h), m7.row(i, h)
		for j := range r11 {
			r11[j] = p1[j] + p4[j] - p5[j] + p7[j]
			r12[j] = p3[j] + p5[j]
			r21[j] = p2[j] + p4[j]
			r22[j] = p1[j] - p2[j] + p3[j] + p6[j]
		}
	}
}

// add returns the sum of the n×n matrices x and y in a new matrix.
func add(x, y matrix, n int) matrix {
	s := newMatrix(n)
	for i := range n {
		si, xi, yi := s.row(i, n), x.row(i, n), y.row(i, n)
		for j := range si {
			si[j] = xi[j] + yi[j]
		}
	}
	return s
}

// sub returns the difference of the n×n matrices x and y in a new matrix.
func sub(x, y matrix, n int) matrix {
	s := newMatrix(n)
	for i := range n {
		si, xi, yi := s.row(i, n), x.row(i, n), y.row(i, n)
		for j := range si {
			si[j] = xi[j] - yi[j]
		}
	}
	return s
}

// base stores the product of the n×n matrices a and b in c by the classic
// algorithm. It is an i-k-j loop nest, so that the inner loop runs along
// rows, with four values of k per pass over a row of c to load and store it
// a quarter as often.
func base(c, a, b matrix, n int) {
	for i := range n {
		ci := c.row(i, n)
		clear(ci)
		ai := a.row(i, n)
		k := 0
		for ; k+4 <= n; k += 4 {
			a0, a1, a2, a3 := ai[k], ai[k+1], ai[k+2], ai[k+3]
			b0, b1, b2, b3 := b.row(k, n), b.row(k+1, n), b.row(k+2, n), b.row(k+3, n)
			for j := range ci {
				ci[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
			}
		}
		for ; k < n; k++ {
			aik := ai[k]
			bk := b.row(k, n)
			for j := range ci {
				ci[j] += aik * bk[j]
			}
		}
	}
}

// randomMatrix returns an n×n matrix of integers in [-8, 8]: small enough
// that every sum and product in Strassen's recursion and in check is exact.
func randomMatrix(r *rand.Rand, n int) matrix {
	m := newMatrix(n)
	for i := range m.a {
		m.a[i] = float64(r.IntN(17) - 8)
	}
	return m
}

// check reports, as an error, whether c is not the product of a and b, all
// n×n and stored compactly, by Freivalds' test with a random vector of small
// integers.
func check(r *rand.Rand, c, a, b matrix, n int) error {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(r.IntN(17) - 8)
	}
	bx := mulVec(b, x, n)
	abx := mulVec(a, bx, n)
	cx := mulVec(c, x, n)
	for i := range n {
		if abx[i] != cx[i] {
			return fmt.Errorf("wrong product: row %d of C·x is %g, want %g", i, cx[i], abx[i])
		}
	}
	return nil
}

// mulVec returns the product of the n×n matrix m and the vector x.
func mulVec(m matrix, x []float64, n int) []float64 {
	y := make([]float64, n)
	for i := range n {
		var s float64
		for j, mij := range m.row(i, n) {
			s += mij * x[j]
		}
		y[i] = s
	}
	return y
}

// checksum is a hash of the elements of the n×n matrix m in order.
func checksum(m matrix, n int) uint64 {
	var h uint64
	for i := range n {
		for _, v := range m.row(i, n) {
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
