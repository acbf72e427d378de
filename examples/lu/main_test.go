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
		{"-n", "3"},
		{"-n", "64"},
		{"-n", "192", "-cutoff", "16", "-seed", "7"},
		{"-n", "32", "-cutoff", "1"},
		{"-n", "160", "-cutoff", "5"},
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
			if want := fmt.Sprintf("factored %sx%s matrix, checksum ", args[1], args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"},
		{"-n", "-64"},
		{"-n", "200", "-cutoff", "16"}, // 200, 100, 50, 25: 25 is odd and above 16
		{"-cutoff", "0"},
	} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestFactor compares the factors at several cutoffs with those of plain
// Gaussian elimination over the whole matrix, and checks that L·U gives the
// matrix back.
func TestFactor(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	const n = 96
	a := dominantMatrix(rand.New(rand.NewPCG(3, 3)), n)
	want := slices.Clone(a)
	coarsening = n
	baseLU(matrix{want, n}, n)
	if d := maxDiff(multiplyLU(want, n), a); d > 1e-12 {
		t.Fatalf("L·U from Gaussian elimination differs from A by %g", d)
	}
	for _, c := range []int{3, 4, 12, 48} { // each a valid cutoff for 96
		coarsening = c
		got := slices.Clone(a)
		factor(matrix{got, n}, n)
		if d := maxDiff(got, want); d > 1e-12 {
			t.Errorf("cutoff %d: factors differ from Gaussian elimination by %g", c, d)
		}
		serial := slices.Clone(a)
		serialLU(matrix{serial, n}, n)
		if !slices.Equal(got, serial) {
			t.Errorf("cutoff %d: factor and serialLU differ", c)
		}
	}
}

// TestSolves checks the triangular solves and the Schur update on their own
// against products computed directly, at a cutoff that makes them recurse.
func TestSolves(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	coarsening = 4
	const n = 32
	r := rand.New(rand.NewPCG(4, 4))
	lu := dominantMatrix(r, n)
	baseLU(matrix{lu, n}, n)
	b := dominantMatrix(r, n)

	// lowerSolve: L·X = B.
	x := slices.Clone(b)
	lowerSolve(matrix{x, n}, matrix{lu, n}, n)
	if d := maxDiff(mul(lower(lu, n), x, n), b); d > 1e-12 {
		t.Errorf("lowerSolve: L·X differs from B by %g", d)
	}
	// upperSolve: X·U = B.
	x = slices.Clone(b)
	upperSolve(matrix{x, n}, matrix{lu, n}, n)
	if d := maxDiff(mul(x, upper(lu, n), n), b); d > 1e-9 {
		t.Errorf("upperSolve: X·U differs from B by %g", d)
	}
	// schur: M - V·W.
	m := slices.Clone(b)
	schur(matrix{m, n}, matrix{lu, n}, matrix{b, n}, n)
	want := mul(lu, b, n)
	for i := range want {
		want[i] = b[i] - want[i]
	}
	if d := maxDiff(m, want); d > 1e-9 {
		t.Errorf("schur differs from M - V·W by %g", d)
	}
}

func TestCheck(t *testing.T) {
	const n = 64
	a := dominantMatrix(rand.New(rand.NewPCG(1, 1)), n)
	lu := slices.Clone(a)
	serialLU(matrix{lu, n}, n)
	if err := check(rand.New(rand.NewPCG(2, 2)), a, lu, n); err != nil {
		t.Fatalf("check of correct factors: %v", err)
	}
	for _, idx := range []int{0, 5*n + 2, 2*n + 5, n*n - 1} {
		bad := slices.Clone(lu)
		bad[idx] += 1e-6
		if err := check(rand.New(rand.NewPCG(2, 2)), a, bad, n); err == nil {
			t.Errorf("check accepted factors with element %d off by 1e-6", idx)
		}
	}
	if err := check(rand.New(rand.NewPCG(2, 2)), a, slices.Clone(a), n); err == nil {
		t.Error("check accepted the unfactored matrix")
	}
}

// lower returns the unit lower triangular factor held in lu.
func lower(lu []float64, n int) []float64 {
	l := make([]float64, n*n)
	for i := range n {
		copy(l[i*n:i*n+i], lu[i*n:i*n+i])
		l[i*n+i] = 1
	}
	return l
}

// upper returns the upper triangular factor held in lu.
func upper(lu []float64, n int) []float64 {
	u := make([]float64, n*n)
	for i := range n {
		copy(u[i*n+i:i*n+n], lu[i*n+i:i*n+n])
	}
	return u
}

func multiplyLU(lu []float64, n int) []float64 {
	return mul(lower(lu, n), upper(lu, n), n)
}

// mul returns the product of the n×n matrices a and b.
func mul(a, b []float64, n int) []float64 {
	c := make([]float64, n*n)
	for i := range n {
		for k := range n {
			for j := range n {
				c[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
	return c
}

func maxDiff(a, b []float64) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}
