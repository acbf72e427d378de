package main

import (
	"bytes"
	"fmt"
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
		{"-n", "5"},
		{"-n", "64"},
		{"-n", "256", "-cutoff", "32", "-seed", "7"},
		{"-n", "16", "-cutoff", "1"},
		{"-n", "96", "-cutoff", "12"},
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
			if want := fmt.Sprintf("multiplied %sx%s matrices, checksum ", args[1], args[1]); !strings.HasPrefix(par.String(), want) {
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

// TestStrassen compares both recursions, at several cutoffs, with the
// classic product by three nested loops, on blocks of a larger matrix so
// that the strides differ from the sizes. The inputs are small integers, so
// the results must be equal exactly.
func TestStrassen(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	const n, dim = 48, 50
	r := rand.New(rand.NewPCG(3, 3))
	big := randomMatrix(r, dim)
	a := matrix{big.a[dim+2:], dim}
	b := randomMatrix(r, n)
	want := newMatrix(n)
	for i := range n {
		for k := range n {
			for j := range n {
				want.a[i*n+j] += a.a[i*dim+k] * b.a[k*n+j]
			}
		}
	}
	for _, c := range []int{3, 4, 12, 48} { // each a valid cutoff for 48
		coarsening = c
		got := newMatrix(n)
		strassen(got, a, b, n)
		if !slices.Equal(got.a, want.a) {
			t.Errorf("cutoff %d: strassen differs from the classic product", c)
		}
		got = newMatrix(n)
		serialStrassen(got, a, b, n)
		if !slices.Equal(got.a, want.a) {
			t.Errorf("cutoff %d: serialStrassen differs from the classic product", c)
		}
	}
}

// TestBaseOverwrites checks that base stores the product rather than adding
// it to what c held, since strassen hands it the quadrants of c as they are.
func TestBaseOverwrites(t *testing.T) {
	a := matrix{[]float64{1, 2, 3, 4}, 2}
	b := matrix{[]float64{5, 6, 7, 8}, 2}
	c := matrix{[]float64{100, 100, 100, 100}, 2}
	base(c, a, b, 2)
	if want := []float64{19, 22, 43, 50}; !slices.Equal(c.a, want) {
		t.Errorf("base = %v, want %v", c.a, want)
	}
}

func TestCheck(t *testing.T) {
	const n = 32
	r := rand.New(rand.NewPCG(1, 1))
	a, b := randomMatrix(r, n), randomMatrix(r, n)
	c := newMatrix(n)
	serialStrassen(c, a, b, n)
	if err := check(rand.New(rand.NewPCG(2, 2)), c, a, b, n); err != nil {
		t.Fatalf("check of a correct product: %v", err)
	}
	for _, idx := range []int{0, 5*n + 2, n*n - 1} {
		bad := matrix{slices.Clone(c.a), n}
		bad.a[idx]++
		if err := check(rand.New(rand.NewPCG(2, 2)), bad, a, b, n); err == nil {
			t.Errorf("check accepted a product with element %d off by one", idx)
		}
	}
}
