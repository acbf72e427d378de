// FFT computes the discrete Fourier transform of a complex vector whose
// length is a power of two by the recursive radix-2 Cooley-Tukey algorithm,
// in the manner of the fft benchmark of the Cilk-5 distribution (fft.cilk),
// one of the benchmarks of the Cilkprof paper (Schardl et al., SPAA 2015,
// Figure 11, on 8,388,608 points).
//
// As in Cilk-5, every level of the recursion has three parallel phases: it
// unshuffles the input into its even- and odd-indexed halves (a parallel
// loop), transforms the two halves in parallel (parlib.Do), and combines them
// with the twiddle factors (another parallel loop); the table of twiddle
// factors is computed by a parallel loop too. Below -cutoff points a
// transform is an iterative radix-2 FFT in one strand, and the loops work in
// pieces of -cutoff points.
//
// The work is Θ(n log n) and the span Θ(log² n) above the cutoff: each of the
// log(n/cutoff) levels on the critical path has two loops whose span is a
// piece plus the log-depth splitting. A span profile of this program should
// show the call of fft with a parallelism of several hundred at the default
// size (about 600 counted in instructions; less by the clock on a busy
// machine); the whole program below 3, because generating the input and
// checking the result are serial and take about a third of the time, so
// check and randomVector are the top sites by local span on span (Amdahl's
// law); the base transforms at the cutoff holding about 40% of the
// transform's work, and the combine and unshuffle loops the rest; and, with
// strands of tens of microseconds, a burdened parallelism close to the
// parallelism.
//
// Usage:
//
//	fft [-n points] [-cutoff points] [-seed seed] [-serial]
//
// With -serial it runs the same recursion with no goroutines and plain
// loops, the sequential baseline for speedup measurements; both modes do the
// same arithmetic in the same order, so they compute the same transform bit
// for bit. Either way it checks the transform against Parseval's identity
// and against a direct evaluation of the DFT at a few frequencies, and
// prints one line, the same for both modes:
//
//	transformed 4194304 points, checksum 59f30a2aa0799fe6
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/cmplx"
	"math/rand/v2"
	"os"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fft:", err)
		os.Exit(1)
	}
}

// run parses args, transforms a random vector and writes the one-line
// result to stdout. It returns an error if the flags are invalid or the
// transform fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fft", flag.ExitOnError)
	n := fs.Int("n", 1<<22, "transform `n` random complex points; a power of two")
	cutoff := fs.Int("cutoff", 4096, "transform at most `n` points serially, and run loops in pieces of n points")
	seed := fs.Uint64("seed", 1, "random `seed` for the input and the check")
	serial := fs.Bool("serial", false, "transform with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *n < 1 || *n&(*n-1) != 0 {
		return fmt.Errorf("-n %d: must be a power of two", *n)
	}
	if *cutoff < 1 {
		return fmt.Errorf("-cutoff %d: must be positive", *cutoff)
	}

	r := rand.New(rand.NewPCG(*seed, *seed))
	x := randomVector(r, *n)
	in := make([]complex128, *n)
	copy(in, x)
	y := make([]complex128, *n)
	coarsening = *cutoff
	if *serial {
		serialFFT(x, y, serialTwiddles(*n), 1)
	} else {
		fft(x, y, twiddles(*n), 1)
	}
	if err := check(r, in, y); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "transformed %d points, checksum %016x\n", *n, checksum(y))
	return nil
}

// coarsening is the length at or below which fft transforms serially, and
// the length of the pieces of its loops.
var coarsening = 4096

// twiddles returns the twiddle factors for transforms of length n: w[k] =
// exp(-2πik/n) for k in [0, n/2), computed in parallel.
func twiddles(n int) []complex128 {
	w := make([]complex128, n/2)
	parlib.ForRange(0, len(w), coarsening, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			w[k] = twiddle(k, n)
		}
	})
	return w
}

// serialTwiddles is twiddles with no goroutines.
func serialTwiddles(n int) []complex128 {
	w := make([]complex128, n/2)
	for k := range w {
		w[k] = twiddle(k, n)
	}
	return w
}

// twiddle returns exp(-2πik/n).
func twiddle(k, n int) complex128 {
	s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
	return complex(c, s)
}

// fft stores the DFT of x in y, which must be as long as x, a power of two,
// and must not overlap it; it overwrites x. w[j*s] must be exp(-2πij/len(x))
// for j in [0, len(x)/2). It unshuffles x into y, transforms the halves of y
// into x in parallel, and combines them into y.
func fft(x, y, w []complex128, s int) {
	n := len(x)
	if n <= coarsening {
		base(x, y, w, s)
		return
	}
	h := n / 2
	parlib.ForRange(0, h, coarsening, func(lo, hi int) { unshuffle(x, y, lo, hi) })
	parlib.Do(
		func() { fft(y[:h], x[:h], w, 2*s) },
		func() { fft(y[h:], x[h:], w, 2*s) },
	)
	parlib.ForRange(0, h, coarsening, func(lo, hi int) { combine(x, y, w, s, lo, hi) })
}

// serialFFT is fft with no goroutines.
func serialFFT(x, y, w []complex128, s int) {
	n := len(x)
	if n <= coarsening {
		base(x, y, w, s)
		return
	}
	h := n / 2
	unshuffle(x, y, 0, h)
	serialFFT(y[:h], x[:h], w, 2*s)
	serialFFT(y[h:], x[h:], w, 2*s)
	combine(x, y, w, s, 0, h)
}

// unshuffle moves the even-indexed elements of x in [2lo, 2hi) to the first
// half of y and the odd-indexed ones to the second half.
func unshuffle(x, y []complex128, lo, hi int) {
	h := len(x) / 2
	even, odd := y[lo:hi], y[h+lo:h+hi]
	for i := range even {
		even[i] = x[2*(lo+i)]
		odd[i] = x[2*(lo+i)+1]
	}
}

// combine computes the butterflies [lo, hi) of the last radix-2 step: the
// halves of x hold the transforms of the even- and odd-indexed inputs, and
// y[k] and y[k+h] get their sum and difference with twiddle factor w[k*s].
func combine(x, y, w []complex128, s, lo, hi int) {
	h := len(x) / 2
	for k := lo; k < hi; k++ {
		t := w[k*s] * x[h+k]
		y[k] = x[k] + t
		y[h+k] = x[k] - t
	}
}

// base stores the DFT of x in y like fft, in one strand: it copies x into y
// in bit-reversed order and runs the radix-2 butterflies in place, level by
// level. Each butterfly is the one fft's combine computes, with the same
// twiddle factor, so the result is the same bit for bit.
func base(x, y, w []complex128, s int) {
	n := len(x)
	if n == 1 {
		y[0] = x[0]
		return
	}
	shift := bits.UintSize - bits.TrailingZeros(uint(n))
	for i, v := range x {
		y[bits.Reverse(uint(i))>>shift] = v
	}
	for size, step := 2, s*n/2; size <= n; size, step = 2*size, step/2 {
		h := size / 2
		for start := 0; start < n; start += size {
			lo, hi := y[start:start+h], y[start+h:start+size]
			for k := range lo {
				t := w[k*step] * hi[k]
				lo[k], hi[k] = lo[k]+t, lo[k]-t
			}
		}
	}
}

// randomVector returns n complex numbers with real and imaginary parts
// uniform in [-1, 1).
func randomVector(r *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(2*r.Float64()-1, 2*r.Float64()-1)
	}
	return x
}

// check reports, as an error, whether y is not the DFT of x. It checks
// Parseval's identity, Σ|y_k|² = n·Σ|x_j|², which a transform that loses or
// scales part of the signal fails, and compares y at the frequencies 0, 1,
// n/2, n-1 and a random one with the DFT evaluated directly, which a
// transform that mixes up frequencies or twiddle factors fails.
func check(r *rand.Rand, x, y []complex128) error {
	n := len(x)
	var ex, ey float64
	for j := range x {
		ex += real(x[j])*real(x[j]) + imag(x[j])*imag(x[j])
		ey += real(y[j])*real(y[j]) + imag(y[j])*imag(y[j])
	}
	if math.Abs(ey-float64(n)*ex) > 1e-9*float64(n)*ex {
		return fmt.Errorf("energy of the transform is %g, want n times the input's, %g", ey, float64(n)*ex)
	}

	// A wrong transform is off by about |y_k|, which is about √(Σ|x_j|²);
	// rounding in either computation adds at most about 1e-16·n·|x_j| per
	// term, and the tolerance, about 1e-9·n·|x_j|, lies far between the two.
	tolerance := 1e-9 * math.Sqrt(float64(n)*ex)
	ks := []int{0, min(1, n-1), n / 2, n - 1, r.IntN(n)}
	dft := newDirectDFT(n)
	for _, k := range ks {
		want := dft.at(x, k)
		if d := cmplx.Abs(y[k] - want); d > tolerance {
			return fmt.Errorf("wrong transform at frequency %d: %v, want %v", k, y[k], want)
		}
	}
	return nil
}

// A directDFT evaluates the DFT of length n at one frequency at a time,
// with roots of unity from two tables of about √n entries each, computed
// independently of the twiddle factors of fft: exp(-2πim/n) is
// hi[m>>shift]·lo[m&(len(lo)-1)].
type directDFT struct {
	shift  uint
	hi, lo []complex128
}

func newDirectDFT(n int) *directDFT {
	shift := uint(bits.Len(uint(n)) / 2)
	b := 1 << shift
	d := &directDFT{shift: shift, hi: make([]complex128, (n+b-1)/b), lo: make([]complex128, b)}
	for i := range d.hi {
		d.hi[i] = cmplx.Rect(1, -2*math.Pi*float64(i*b)/float64(n))
	}
	for i := range d.lo {
		d.lo[i] = cmplx.Rect(1, -2*math.Pi*float64(i)/float64(n))
	}
	return d
}

// at returns Σ x_j·exp(-2πijk/n), the DFT of x at frequency k.
func (d *directDFT) at(x []complex128, k int) complex128 {
	n := len(x)
	mask := len(d.lo) - 1
	var sum complex128
	m := 0 // j*k mod n
	for _, v := range x {
		sum += v * d.hi[m>>d.shift] * d.lo[m&mask]
		m += k
		if m >= n {
			m -= n
		}
	}
	return sum
}

// checksum is a hash of the elements of y in order.
func checksum(y []complex128) uint64 {
	var h uint64
	for _, v := range y {
		h = mix(h ^ math.Float64bits(real(v)))
		h = mix(h ^ math.Float64bits(imag(v)))
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
