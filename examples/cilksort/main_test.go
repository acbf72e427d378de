package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"},
		{"-n", "1"},
		{"-n", "3", "-cutoff", "4"},
		{"-n", "50000"},
		{"-n", "5000", "-cutoff", "4", "-seed", "7"},
		{"-n", "65537", "-cutoff", "100"},
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
			if want := fmt.Sprintf("sorted %s elements, checksum ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-cutoff", "3"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestCilksort sorts inputs with duplicates, runs, sorted and reversed
// order, and every length around a small cutoff, so that the quarters and
// the merge splits take every uneven shape.
func TestCilksort(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	coarsening = 8
	inputs := map[string][]int64{
		"random":   randomInts(10000, 3),
		"equal":    make([]int64, 1000),
		"two":      cycle(1000, 2),
		"few":      cycle(5000, 7),
		"sorted":   ascending(3000),
		"reversed": descending(3000),
		"organ":    slices.Concat(ascending(1000), descending(1000)),
	}
	for n := range 5 * coarsening {
		inputs[fmt.Sprintf("random%d", n)] = randomInts(n, uint64(n))
	}
	for name, a := range inputs {
		want := slices.Sorted(slices.Values(a))
		cilksort(a, make([]int64, len(a)))
		if !slices.Equal(a, want) {
			t.Errorf("%s: cilksort did not sort", name)
		}
	}
}

// TestMerge merges pairs whose lengths differ widely, where the binary
// search lands at either end of the shorter input.
func TestMerge(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	coarsening = 4
	for _, tc := range []struct{ x, y []int64 }{
		{ascending(100), nil},
		{nil, ascending(100)},
		{ascending(100), []int64{-1}},
		{ascending(100), []int64{1000}},
		{cycle(50, 3), cycle(70, 2)},
		{ascending(37), ascending(64)},
	} {
		slices.Sort(tc.x)
		slices.Sort(tc.y)
		dst := make([]int64, len(tc.x)+len(tc.y))
		merge(dst, tc.x, tc.y)
		if want := slices.Sorted(slices.Values(slices.Concat(tc.x, tc.y))); !slices.Equal(dst, want) {
			t.Errorf("merge(%v, %v) = %v, want %v", tc.x, tc.y, dst, want)
		}
	}
}

func TestCheck(t *testing.T) {
	a := []int64{1, 2, 3}
	want := fingerprint(a)
	if err := check(a, want); err != nil {
		t.Errorf("check of a sorted permutation: %v", err)
	}
	if err := check([]int64{2, 1, 3}, want); err == nil {
		t.Error("check accepted an unsorted result")
	}
	if err := check([]int64{1, 2, 4}, want); err == nil {
		t.Error("check accepted a result that is not a permutation of the input")
	}
}

func cycle(n, k int) []int64 {
	a := make([]int64, n)
	for i := range a {
		a[i] = int64(i % k)
	}
	return a
}

func ascending(n int) []int64 {
	a := make([]int64, n)
	for i := range a {
		a[i] = int64(i)
	}
	return a
}

func descending(n int) []int64 {
	a := ascending(n)
	slices.Reverse(a)
	return a
}
