package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1"},
		{"-n", "2", "-cutoff", "1"},
		{"-n", "64", "-cutoff", "4"},
		{"-n", "128", "-cutoff", "6", "-seed", "9"},
		{"-n", "96", "-cutoff", "6"},
		{"-n", "128"},
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
			if want := fmt.Sprintf("multiplied %[1]sx%[1]s matrices, checksum ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "130"}, {"-n", "100", "-cutoff", "10"}, {"-cutoff", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestMM compares mm with the definition of the matrix product.
func TestMM(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 16
	a, b := randomMatrix(r, n), randomMatrix(r, n)
	defer func(c int) { coarsening = c }(coarsening)
	for _, cutoff := range []int{1, 2, 3, 8, 16} {
		coarsening = cutoff
		c := make([]float64, n*n)
		mm(c, a, b, n, n)
		for i := range n {
			for j := range n {
				var want float64
				for k := range n {
					want += a[i*n+k] * b[k*n+j]
				}
				if c[i*n+j] != want {
					t.Fatalf("cutoff %d: c[%d][%d] = %g, want %g", cutoff, i, j, c[i*n+j], want)
				}
			}
		}
	}
}

func TestCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 8
	a, b := randomMatrix(r, n), randomMatrix(r, n)
	c := make([]float64, n*n)
	base(c, a, b, n, n)
	if err := check(r, c, a, b, n); err != nil {
		t.Errorf("check of a correct product: %v", err)
	}
	c[3*n+5]++
	if err := check(r, c, a, b, n); err == nil {
		t.Error("check accepted a wrong product")
	}
}
