package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1"},
		{"-n", "2", "-cutoff", "1"},
		{"-n", "37", "-cutoff", "3"},
		{"-n", "100", "-cutoff", "7", "-seed", "9"},
		{"-n", "128", "-cutoff", "128"},
		{"-n", "200"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var par, ser bytes.Buffer
			if err := run(args, &par); err != nil {
				t.Fatalf("parallel: %v", err)
			}
			if err := run(append(args, "-serial"), &ser); err != nil {
				t.Fatalf("serial: %v", err)
			}
			if par.String() != ser.String() {
				t.Errorf("parallel printed %q, serial printed %q", par.String(), ser.String())
			}
			if want := fmt.Sprintf("factored %[1]sx%[1]s matrix, checksum ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "-3"}, {"-cutoff", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestChol compares chol, for several cutoffs, with the textbook
// Cholesky–Banachiewicz loops: the recursion sums in a different order, so
// the two agree to rounding, not bit for bit.
func TestChol(t *testing.T) {
	const n = 45
	a := randomSPD(rand.New(rand.NewPCG(1, 2)), n)
	want := textbookCholesky(a, n)
	defer func(c int) { coarsening = c }(coarsening)
	for _, cutoff := range []int{1, 2, 5, 16, 45} {
		coarsening = cutoff
		l := slices.Clone(a)
		chol(l, n, n)
		ser := slices.Clone(a)
		serialChol(ser, n, n)
		for i := range n {
			for j := range i + 1 {
				if got := l[i*n+j]; math.Abs(got-want[i*n+j]) > 1e-12*math.Abs(want[i*n+j]) {
					t.Fatalf("cutoff %d: L[%d][%d] = %g, want %g", cutoff, i, j, got, want[i*n+j])
				}
				if l[i*n+j] != ser[i*n+j] {
					t.Fatalf("cutoff %d: chol and serialChol differ at L[%d][%d]: %g and %g", cutoff, i, j, l[i*n+j], ser[i*n+j])
				}
			}
		}
	}
}

// TestGemm compares gemm on blocks of a larger matrix, with sizes that
// make it split each dimension, with the definition of the product.
func TestGemm(t *testing.T) {
	const dim = 40
	r := rand.New(rand.NewPCG(5, 6))
	m := make([]float64, dim*dim)
	for i := range m {
		m[i] = float64(r.IntN(9) - 4) // small integers: the sums are exact
	}
	defer func(c int) { coarsening = c }(coarsening)
	coarsening = 3
	for _, size := range [][3]int{{13, 5, 4}, {4, 17, 6}, {5, 4, 19}, {1, 1, 1}} {
		mm, nn, kk := size[0], size[1], size[2]
		c := slices.Clone(m)
		a, b := m[20*dim:], m[20*dim+20:] // disjoint from c's block at the origin
		gemm(c, a, b, dim, mm, nn, kk)
		for i := range mm {
			for j := range nn {
				want := m[i*dim+j]
				for p := range kk {
					want -= a[i*dim+p] * b[j*dim+p]
				}
				if c[i*dim+j] != want {
					t.Fatalf("%v: c[%d][%d] = %g, want %g", size, i, j, c[i*dim+j], want)
				}
			}
		}
	}
}

func TestCheck(t *testing.T) {
	const n = 30
	a := randomSPD(rand.New(rand.NewPCG(3, 4)), n)
	l := slices.Clone(a)
	chol(l, n, n)
	if err := check(rand.New(rand.NewPCG(7, 8)), l, a, n); err != nil {
		t.Errorf("check of a correct factor: %v", err)
	}
	for _, bad := range []struct {
		i, j  int
		delta float64
	}{{17, 4, 1e-6}, {29, 29, -1e-6}, {0, 0, math.NaN()}} {
		wrong := slices.Clone(l)
		wrong[bad.i*n+bad.j] += bad.delta
		if err := check(rand.New(rand.NewPCG(7, 8)), wrong, a, n); err == nil {
			t.Errorf("check accepted a factor with L[%d][%d] off by %g", bad.i, bad.j, bad.delta)
		}
	}
	notSPD := slices.Clone(a)
	notSPD[5*n+5] = -1
	chol(notSPD, n, n)
	if err := check(rand.New(rand.NewPCG(7, 8)), notSPD, a, n); err == nil {
		t.Error("check accepted the factorization of a matrix that is not positive definite")
	}
}

// textbookCholesky returns the Cholesky factor of the matrix whose lower
// triangle is a, by the Cholesky–Banachiewicz loops.
func textbookCholesky(a []float64, n int) []float64 {
	l := make([]float64, n*n)
	for i := range n {
		for j := range i + 1 {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			if i == j {
				l[i*n+i] = math.Sqrt(s)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
	}
	return l
}
