// Cilksort is the parallel mergesort of the Cilk-5 distribution
// (cilksort.cilk), one of the benchmarks of the Cilkprof paper (Schardl et
// al., SPAA 2015, Figure 11, sorting 10 million elements). It splits the
// array into quarters, sorts the four in parallel, merges them pairwise in
// parallel into a temporary array, and merges the two halves back. The merge
// is itself parallel: it takes the middle element of the longer input, finds
// where it falls in the shorter one by binary search, stores it at its final
// place and merges the two sides of the split in parallel.
//
// Unlike quicksort, whose serial partition puts Θ(n) on the critical path,
// cilksort has a polylogarithmic span, Θ(log³ n) down to the cutoff, so its
// parallelism grows almost linearly with n. Below the cutoff (Cilk-5's
// QUICKSIZE and MERGESIZE, both 2048) it sorts and merges serially, so the
// span is a few base sorts plus a few serial merges per level of recursion.
//
// A span profile of this program should show the call of cilksort with a
// parallelism in the hundreds at the default size (about 750 for 10 million
// elements), and the whole program far below that, because generating the
// input and checking the result are serial: randomInts is the top site by
// local span on span (Amdahl's law). Within the sort, the local work is
// split about evenly between the base sorts (in cilksort) and the serial
// merges at the cutoff (in merge), but the merge sites hold most of the
// sort's span: the critical path holds one base sort but two serial merges
// for every level of the recursion. Strands are a few microseconds, yet the span is so short
// that the burdened parallelism stays close to the parallelism.
//
// Usage:
//
//	cilksort [-n elements] [-cutoff elements] [-seed seed] [-serial]
//
// With -serial it sorts with slices.Sort, the sequential baseline for speedup
// measurements. Either way it checks that the result is sorted and is a
// permutation of the input, and prints one line, the same for both modes:
//
//	sorted 10000000 elements, checksum c2ee08a34e12f454
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cilksort:", err)
		os.Exit(1)
	}
}

// run parses args, sorts a random array and writes the one-line result to
// stdout. It returns an error if the flags are invalid or the result fails
// its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cilksort", flag.ExitOnError)
	n := fs.Int("n", 10_000_000, "sort `n` random 64-bit integers")
	cutoff := fs.Int("cutoff", 2048, "sort and merge fewer than `n` elements serially (QUICKSIZE and MERGESIZE in Cilk-5)")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "sort with slices.Sort, the sequential baseline")
	fs.Parse(args)
	if *n < 0 {
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	if *cutoff < 4 {
		// Below 4 elements the quarters of a range could be empty.
		return fmt.Errorf("-cutoff %d: must be at least 4", *cutoff)
	}

	a := randomInts(*n, *seed)
	want := fingerprint(a)
	if *serial {
		slices.Sort(a)
	} else {
		coarsening = *cutoff
		cilksort(a, make([]int64, len(a)))
	}
	if err := check(a, want); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sorted %d elements, checksum %016x\n", len(a), checksum(a))
	return nil
}

// coarsening is the length below which cilksort sorts and merge merges
// serially.
var coarsening = 2048

// cilksort sorts a in increasing order, using tmp, which must be as long as
// a, as scratch space.
func cilksort(a, tmp []int64) {
	if len(a) < coarsening {
		slices.Sort(a)
		return
	}
	q := len(a) / 4
	var g parlib.Group
	g.Spawn(func() { cilksort(a[:q], tmp[:q]) })
	g.Spawn(func() { cilksort(a[q:2*q], tmp[q:2*q]) })
	g.Spawn(func() { cilksort(a[2*q:3*q], tmp[2*q:3*q]) })
	cilksort(a[3*q:], tmp[3*q:])
	g.Sync()

	g.Spawn(func() { merge(tmp[:2*q], a[:q], a[q:2*q]) })
	merge(tmp[2*q:], a[2*q:3*q], a[3*q:])
	g.Sync()

	merge(a, tmp[:2*q], tmp[2*q:])
}

// merge merges the sorted slices x and y into dst, which must have room for
// exactly both and must not overlap them. It splits the longer input at its
// middle element, finds by binary search how many elements of the shorter
// one go before it, and merges the two sides in parallel.
func merge(dst, x, y []int64) {
	if len(x) < len(y) {
		x, y = y, x
	}
	if len(x)+len(y) < coarsening || len(y) == 0 {
		serialMerge(dst, x, y)
		return
	}
	i := len(x) / 2
	j, _ := slices.BinarySearch(y, x[i])
	// Everything in x[:i] and y[:j] is at most x[i], everything in x[i+1:]
	// and y[j:] at least x[i], so x[i] lands at i+j and the sides are
	// independent.
	dst[i+j] = x[i]
	var g parlib.Group
	g.Spawn(func() { merge(dst[:i+j], x[:i], y[:j]) })
	merge(dst[i+j+1:], x[i+1:], y[j:])
	g.Sync()
}

// serialMerge merges the sorted slices x and y into dst, which must have
// room for exactly both.
func serialMerge(dst, x, y []int64) {
	i, j, k := 0, 0, 0
	for i < len(x) && j < len(y) {
		if y[j] < x[i] {
			dst[k] = y[j]
			j++
		} else {
			dst[k] = x[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], x[i:])
	copy(dst[k:], y[j:])
}

// randomInts returns n pseudo-random integers determined by seed.
func randomInts(n int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, seed))
	a := make([]int64, n)
	for i := range a {
		a[i] = r.Int64()
	}
	return a
}

// fingerprint is a hash of the multiset of a's elements: it does not depend
// on their order, so sorting must not change it.
func fingerprint(a []int64) uint64 {
	var sum, xor uint64
	for _, v := range a {
		h := mix(uint64(v))
		sum += h
		xor ^= h
	}
	return sum ^ mix(xor)
}

// checksum is a hash of a that depends on the order of its elements.
func checksum(a []int64) uint64 {
	var h uint64
	for _, v := range a {
		h = mix(h ^ uint64(v))
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

// check reports, as an error, whether a is not sorted or is not a
// permutation of the input whose fingerprint was want.
func check(a []int64, want uint64) error {
	for i := 1; i < len(a); i++ {
		if a[i-1] > a[i] {
			return fmt.Errorf("result not sorted: a[%d] = %d > a[%d] = %d", i-1, a[i-1], i, a[i])
		}
	}
	if fingerprint(a) != want {
		return errors.New("result is not a permutation of the input")
	}
	return nil
}
