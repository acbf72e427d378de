package main

import (
	"bytes"
	"fmt"
	"math"
	"math/cmplx"
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
		{"-n", "2"},
		{"-n", "1024"},
		{"-n", "65536", "-cutoff", "256", "-seed", "7"},
		{"-n", "1024", "-cutoff", "1"},
		{"-n", "4096", "-cutoff", "100000"},
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
			if want := fmt.Sprintf("transformed %s points, checksum ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "-4"}, {"-n", "96"}, {"-cutoff", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestFFT compares fft at several cutoffs with the DFT computed from its
// definition, and checks that every cutoff, the serial recursion and one
// base transform of the whole vector agree bit for bit, as the package
// documentation promises.
func TestFFT(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	r := rand.New(rand.NewPCG(5, 5))
	for n := 1; n <= 256; n *= 2 {
		x := randomVector(r, n)
		want := naiveDFT(x)
		w := twiddles(n)

		y := make([]complex128, n)
		coarsening = n
		base(slices.Clone(x), y, w, 1)
		for k := range want {
			if cmplx.Abs(y[k]-want[k]) > 1e-9 {
				t.Fatalf("n = %d: base gives %v at frequency %d, want %v", n, y[k], k, want[k])
			}
		}
		for _, c := range []int{1, 2, 8, n} {
			coarsening = c
			got := make([]complex128, n)
			fft(slices.Clone(x), got, w, 1)
			if !slices.Equal(got, y) {
				t.Errorf("n = %d, cutoff %d: fft differs from base", n, c)
			}
			got = make([]complex128, n)
			serialFFT(slices.Clone(x), got, w, 1)
			if !slices.Equal(got, y) {
				t.Errorf("n = %d, cutoff %d: serialFFT differs from base", n, c)
			}
		}
	}
}

func TestTwiddles(t *testing.T) {
	w := twiddles(16)
	if !slices.Equal(w, serialTwiddles(16)) {
		t.Error("twiddles and serialTwiddles differ")
	}
	for k, v := range w {
		if want := cmplx.Exp(complex(0, -2*math.Pi*float64(k)/16)); cmplx.Abs(v-want) > 1e-15 {
			t.Errorf("w[%d] = %v, want %v", k, v, want)
		}
	}
}

// TestCheck checks that check accepts the transform and rejects transforms
// that are wrong in the ways a broken FFT would be.
func TestCheck(t *testing.T) {
	const n = 1024
	x := randomVector(rand.New(rand.NewPCG(1, 1)), n)
	y := make([]complex128, n)
	serialFFT(slices.Clone(x), y, serialTwiddles(n), 1)
	if err := check(rand.New(rand.NewPCG(2, 2)), x, y); err != nil {
		t.Fatalf("check of a correct transform: %v", err)
	}
	for name, corrupt := range map[string]func(y []complex128){
		"scaled":    func(y []complex128) { y[3] *= 2 },
		"swapped":   func(y []complex128) { y[1], y[2] = y[2], y[1] },
		"conjugate": func(y []complex128) { y[1], y[n-1] = cmplx.Conj(y[n-1]), cmplx.Conj(y[1]) },
		"rotated":   func(y []complex128) { y[n/2] *= complex(0, 1) },
	} {
		bad := slices.Clone(y)
		corrupt(bad)
		if err := check(rand.New(rand.NewPCG(2, 2)), x, bad); err == nil {
			t.Errorf("check accepted a %s transform", name)
		}
	}
}

// naiveDFT returns the DFT of x by its definition, in O(n²) time.
func naiveDFT(x []complex128) []complex128 {
	n := len(x)
	y := make([]complex128, n)
	for k := range y {
		for j, v := range x {
			y[k] += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%n)/float64(n)))
		}
	}
	return y
}
