// Quicksort is the parallel quicksort of the Cilkprof paper (Schardl et al.,
// SPAA 2015, Figure 1): partition the array serially, sort the lower part on
// a new goroutine and the upper part on the current one, then wait.
//
// The paper's case study (Figure 2) sorts 10 million integers and finds a
// parallelism of only 5.6, although the work is Θ(n log n): the call of
// partition at every level is serial, and the partitions along one root-to-leaf
// path add up to Θ(n), so the parallelism is O(log n). Cilkprof shows this
// without that analysis: the partition call site has by far the largest local
// span on span, and its instances on the critical path are serial (parallelism
// on span 1).
//
// A span profile of this program tells the same story of the sort: among
// its sites, partition has by far the largest local span on span, serial
// on the critical path, and the sort itself (the pqsort call in run) has a
// parallelism of about 8. The serial set-up holds about as much of the
// span: measured with the cpu measure on a 2-vCPU VM, partition held 37%
// of the span, randomInts (making the input) 35%, and the whole program's
// parallelism read 3.64, so speedup levels off after a few cores.
// randomInts' share is mostly the page faults of its new 40 MB array: on a
// day when that VM took 12 µs a fault instead of 2, it held 63%. With the
// default cutoff of 32 elements (the paper's COARSENING) the average strand
// is about half a microsecond, and a spawn's burden (about 0.36 µs) leaves
// the burdened parallelism close to the parallelism.
//
// Usage:
//
//	quicksort [-n elements] [-cutoff elements] [-seed seed] [-serial]
//
// With -serial it sorts with slices.Sort, the sequential baseline for speedup
// measurements. Either way it checks that the result is sorted and is a
// permutation of the input, and prints one line, the same for both modes:
//
//	sorted 5000000 elements, checksum 14c77d8c7c356290
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quicksort:", err)
		os.Exit(1)
	}
}

// run parses args, sorts a random array and writes the one-line result to
// stdout. It returns an error if the flags are invalid or the result fails
// its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("quicksort", flag.ExitOnError)
	n := fs.Int("n", 5_000_000, "sort `n` random 64-bit integers")
	cutoff := fs.Int("cutoff", 32, "sort ranges shorter than `n` elements serially, by insertion sort")
	seed := fs.Uint64("seed", 1, "random `seed` for the input")
	serial := fs.Bool("serial", false, "sort with slices.Sort, the sequential baseline")
	fs.Parse(args)
	if *n < 0 {
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	if *cutoff < 2 {
		return fmt.Errorf("-cutoff %d: must be at least 2", *cutoff)
	}

	a := randomInts(*n, *seed)
	want := fingerprint(a)
	if *serial {
		slices.Sort(a)
	} else {
		coarsening = *cutoff
		pqsort(a)
	}
	if err := check(a, want); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sorted %d elements, checksum %016x\n", len(a), checksum(a))
	return nil
}

// coarsening is the length below which pqsort stops recursing and sorts
// serially (COARSENING in the paper).
var coarsening = 32

// pqsort sorts a in increasing order, sorting the two sides of each partition
// in parallel.
func pqsort(a []int64) {
	if len(a) < coarsening {
		insertionSort(a)
		return
	}
	p := partition(a)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pqsort(a[:p])
	}()
	pqsort(a[p:])
	wg.Wait()
}

// partition rearranges a, which must have at least two elements, around a
// pivot and returns p with 0 < p < len(a) such that every element of a[:p]
// is at most every element of a[p:]. It is Hoare's scheme, as in the paper,
// with a median-of-three pivot instead of a random one so that runs are
// repeatable.
func partition(a []int64) int {
	pivot := medianOfThree(a[0], a[len(a)/2], a[len(a)-1])
	l, r := -1, len(a)
	for {
		for l++; a[l] < pivot; l++ {
		}
		for r--; a[r] > pivot; r-- {
		}
		if l >= r {
			break
		}
		a[l], a[r] = a[r], a[l]
	}
	// l == 0 only when a[0] is the pivot and everything after it is larger;
	// keep the pivot alone on the left so that neither side is empty.
	if l == 0 {
		return 1
	}
	return l
}

func medianOfThree(x, y, z int64) int64 {
	if x > y {
		x, y = y, x
	}
	if y > z {
		y = z
	}
	return max(x, y)
}

func insertionSort(a []int64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
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
