// Matmul multiplies square matrices by divide and conquer, as in the Cilkprof
// paper (Schardl et al., SPAA 2015, Figure 8): split each matrix into four
// quadrants, compute the four products that make up the first half of each
// quadrant of C in parallel, wait, then the four that make up the second
// half, and call base for matrices at most the cutoff in size.
//
// The paper uses this program to show what top-caller measurements miss and
// local measurements reveal (Figures 9 and 10): base is never called from the
// top-level call of mm, so its top-caller work is zero, yet the local work of
// the base call site is nearly all of the program's work. Local parallelism,
// on the other hand, is close to 1 at every site even where there is ample
// parallelism, because it excludes the children.
//
// A span profile of this program should show the base call site holding
// almost all of the work as local work, zero top-caller work for it, ample
// parallelism (the span is Θ(n) against Θ(n³) work), and a burdened
// parallelism close to the parallelism, since each base case is tens of
// microseconds of work.
//
// Usage:
//
//	matmul [-n size] [-cutoff size] [-seed seed] [-serial]
//
// With -serial it runs the same recursion with no goroutines, the sequential
// baseline for speedup measurements (for large matrices it beats a single
// loop nest, whose rows of B fall out of cache). Either way it checks the
// product with Freivalds' test (A·(B·x) = C·x for a random vector x; the
// matrices hold small integers, so the floating-point arithmetic is exact)
// and prints one line, the same for both modes:
//
//	multiplied 1280x1280 matrices, checksum 850bf7cb9d3b9f7b
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
		fmt.Fprintln(os.Stderr, "matmul:", err)
		os.Exit(1)
	}
}

// run parses args, multiplies two random matrices and writes the one-line
// result to stdout. It returns an error if the flags are invalid or the
// product fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("matmul", flag.ExitOnError)
	n := fs.Int("n", 1280, "multiply `size`×size matrices; halving it must give even numbers down to the cutoff")
	cutoff := fs.Int("cutoff", 64, "call base for matrices of at most `size`×size (COARSENING in the paper)")
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
	c := make([]float64, *n**n)
	coarsening = *cutoff
	if *serial {
		serialMM(c, a, b, *n, *n)
	} else {
		mm(c, a, b, *n, *n)
	}
	if err := check(r, c, a, b, *n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "multiplied %dx%d matrices, checksum %016x\n", *n, *n, checksum(c))
	return nil
}

// coarsening is the size at or below which mm calls base.
var coarsening = 32

// halves reports whether n is positive and halving it gives an even number
// at every step until it is at most cutoff, so that mm can split it.
func halves(n, cutoff int) bool {
	for ; n > cutoff; n /= 2 {
		if n%2 != 0 {
			return false
		}
	}
	return n > 0
}

// mm adds the product of the n×n matrices a and b to the n×n matrix c. All
// three are stored row-major in a larger matrix with dim columns: element
// (i, j) of c is c[i*dim+j]. n must pass halves(n, coarsening).
func mm(c, a, b []float64, dim, n int) {
	if n <= coarsening {
		base(c, a, b, dim, n)
		return
	}
	h := n / 2
	// x returns quadrant (r, s) of the matrix m.
	x := func(m []float64, r, s int) []float64 { return m[(r*dim+s)*h:] }

	var wg sync.WaitGroup
	wg.Go(func() { mm(x(c, 0, 0), x(a, 0, 0), x(b, 0, 0), dim, h) })
	wg.Go(func() { mm(x(c, 0, 1), x(a, 0, 0), x(b, 0, 1), dim, h) })
	wg.Go(func() { mm(x(c, 1, 0), x(a, 1, 0), x(b, 0, 0), dim, h) })
	mm(x(c, 1, 1), x(a, 1, 0), x(b, 0, 1), dim, h)
	wg.Wait()

	wg.Go(func() { mm(x(c, 0, 0), x(a, 0, 1), x(b, 1, 0), dim, h) })
	wg.Go(func() { mm(x(c, 0, 1), x(a, 0, 1), x(b, 1, 1), dim, h) })
	wg.Go(func() { mm(x(c, 1, 0), x(a, 1, 1), x(b, 1, 0), dim, h) })
	mm(x(c, 1, 1), x(a, 1, 1), x(b, 1, 1), dim, h)
	wg.Wait()
}

// serialMM is mm with no goroutines. The recursion, which keeps the blocks
// it works on in cache, makes it faster than one loop nest over the whole
// matrices, for all but small sizes.
func serialMM(c, a, b []float64, dim, n int) {
	if n <= coarsening {
		base(c, a, b, dim, n)
		return
	}
	h := n / 2
	x := func(m []float64, r, s int) []float64 { return m[(r*dim+s)*h:] }
	for _, k := range []int{0, 1} {
		serialMM(x(c, 0, 0), x(a, 0, k), x(b, k, 0), dim, h)
		serialMM(x(c, 0, 1), x(a, 0, k), x(b, k, 1), dim, h)
		serialMM(x(c, 1, 0), x(a, 1, k), x(b, k, 0), dim, h)
		serialMM(x(c, 1, 1), x(a, 1, k), x(b, k, 1), dim, h)
	}
}

// base adds the product of the n×n matrices a and b to c, laid out as for
// mm. It is an i-k-j loop nest, so that the inner loop runs along rows, with
// four values of k per pass over a row of c to load and store it a quarter as
// often.
func base(c, a, b []float64, dim, n int) {
	for i := range n {
		ci := c[i*dim:][:n]
		ai := a[i*dim:][:n]
		k := 0
		for ; k+4 <= n; k += 4 {
			a0, a1, a2, a3 := ai[k], ai[k+1], ai[k+2], ai[k+3]
			b0 := b[k*dim:][:n]
			b1 := b[(k+1)*dim:][:n]
			b2 := b[(k+2)*dim:][:n]
			b3 := b[(k+3)*dim:][:n]
			for j := range ci {
				ci[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
			}
		}
		for ; k < n; k++ {
			aik := ai[k]
			bk := b[k*dim:][:n]
			for j := range ci {
				ci[j] += aik * bk[j]
			}
		}
	}
}

// randomMatrix returns an n×n matrix of integers in [-8, 8]: small enough
// that every sum in the product and in check is exact.
func randomMatrix(r *rand.Rand, n int) []float64 {
	m := make([]float64, n*n)
	for i := range m {
		m[i] = float64(r.IntN(17) - 8)
	}
	return m
}

// check reports, as an error, whether c is not the product of a and b, by
// Freivalds' test with a random vector of small integers.
func check(r *rand.Rand, c, a, b []float64, n int) error {
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
func mulVec(m, x []float64, n int) []float64 {
	y := make([]float64, n)
	for i := range n {
		var s float64
		for j, mij := range m[i*n : i*n+n] {
			s += mij * x[j]
		}
		y[i] = s
	}
	return y
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
