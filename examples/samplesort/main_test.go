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
		{"-n", "50000"},
		{"-n", "50000", "-block", "1000", "-seed", "7"},
		{"-n", "9999", "-block", "1"},
		{"-n", "30001", "-block", "4096"},
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
	for _, args := range [][]string{{"-n", "-1"}, {"-block", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestSampleSort sorts inputs that make buckets uneven or empty: many
// duplicates, runs, sorted and reversed input, and sizes around the block.
func TestSampleSort(t *testing.T) {
	inputs := map[string][]int64{
		"random":   randomInts(10000, 3),
		"equal":    make([]int64, 1000),
		"two":      cycle(1000, 2),
		"few":      cycle(5000, 7),
		"sorted":   ascending(3000),
		"reversed": descending(3000),
		"organ":    slices.Concat(ascending(1000), descending(1000)),
	}
	for n := 95; n < 105; n++ {
		inputs[fmt.Sprintf("random%d", n)] = randomInts(n, uint64(n))
	}
	for name, a := range inputs {
		for _, block := range []int{1, 7, 50, 100} {
			want := slices.Sorted(slices.Values(a))
			if got := sampleSort(slices.Clone(a), block, 1); !slices.Equal(got, want) {
				t.Errorf("%s, block %d: sampleSort did not sort", name, block)
			}
		}
	}
}

// TestCountBuckets checks the bucket boundaries: bucket j holds the
// elements above pivots[j-1] and up to pivots[j].
func TestCountBuckets(t *testing.T) {
	counts := make([]int, 4)
	countBuckets([]int64{1, 2, 3, 3, 4, 7, 8, 9}, []int64{3, 3, 8}, counts)
	if want := []int{4, 0, 3, 1}; !slices.Equal(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
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
