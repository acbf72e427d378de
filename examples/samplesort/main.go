// Samplesort sorts integers by the sample sort of the Problem Based
// Benchmark Suite (PBBS; Shun, Blelloch, Fineman, Gibbons, Kyrola, Simhadri
// and Tangwongsan, SPAA 2012), one of the programs whose profiling overhead
// the Cilkprof paper reports (Schardl et al., SPAA 2015, Figure 11). It
// picks pivots from a sorted random sample, which cut the value range into
// buckets of about -block elements each; cuts the input into blocks of
// -block elements and sorts each block; counts, by merging each sorted block
// with the pivots, how many of its elements fall in each bucket; computes
// from the counts where each block's share of each bucket goes; moves every
// block's shares there; and sorts each bucket. The blocks, the moves and the
// buckets are independent: each phase is a loop that starts one goroutine
// per block or bucket with `go func() { defer wg.Done(); … }()` and waits
// for them all with wg.Wait.
//
// Sorting the blocks first, as PBBS does, makes the counting and the moves
// sequential scans, at the price of more comparisons than one sort of the
// whole array: about n·log(block) for the blocks plus n·log(n/buckets) for
// the buckets, against n·log n, so that the parallel program on one core is
// slower than the sequential baseline by about that ratio.
//
// A span profile of this program should show the work split between the
// sorts of blocks and of buckets, each spawn site's instances serial, the
// largest bucket's on the critical path; a parallelism of about 100 for the
// sort itself (the call of sampleSort) at the default size, close to its
// number of blocks; and a whole-program parallelism of about 6, bounded by
// the serial parts around the sort: generating the random input
// (randomInts), the input's fingerprint and the output's checksum (the local
// work of run) and the check, each Θ(n), as in quicksort.
//
// Usage:
//
//	samplesort [-n elements] [-block elements] [-seed seed] [-serial]
//
// With -serial it sorts with slices.Sort, the sequential baseline for
// speedup measurements. Either way it checks that the result is sorted and
// is a permutation of the input, and prints one line, the same for both
// modes:
//
//	sorted 5000000 elements, checksum 14c77d8c7c356290
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "samplesort:", err)
		os.Exit(1)
	}
}

// run parses args, sorts a random array and writes the one-line result to
// stdout. It returns an error if the flags are invalid or the result fails
// its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("samplesort", flag.ExitOnError)
	n := fs.Int("n", 5_000_000, "sort `n` random 64-bit integers")
	block := fs.Int("block", 1<<15, "`elements` per block, and about per bucket (at least √n); arrays of fewer than two blocks are sorted serially")
	seed := fs.Uint64("seed", 1, "random `seed` for the input and the sample")
	serial := fs.Bool("serial", false, "sort with slices.Sort, the sequential baseline")
	fs.Parse(args)
	if *n < 0 {
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	if *block < 1 {
		return fmt.Errorf("-block %d: must be positive", *block)
	}

	a := randomInts(*n, *seed)
	want := fingerprint(a)
	if *serial {
		slices.Sort(a)
	} else {
		a = sampleSort(a, *block, *seed)
	}
	if err := check(a, want); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sorted %d elements, checksum %016x\n", len(a), checksum(a))
	return nil
}

// oversampling is the number of sample elements per bucket: the more, the
// more even the buckets.
const oversampling = 32

// sampleSort returns the elements of a in increasing order, in a new slice
// or, for arrays of fewer than two blocks, in a itself. It sorts a's blocks
// in place. The sample is drawn with the given seed. Blocks of fewer than
// √n elements are made √n long, so that the table of counts, blocks times
// buckets, has at most n entries.
func sampleSort(a []int64, block int, seed uint64) []int64 {
	n := len(a)
	block = max(block, int(math.Sqrt(float64(n))))
	if n < 2*block {
		slices.Sort(a)
		return a
	}
	buckets := n / block
	blocks := (n + block - 1) / block
	pivots := choosePivots(a, buckets, seed)

	// counts[b*buckets+j] is the number of elements of block b in bucket j.
	counts := make([]int, blocks*buckets)
	var wg sync.WaitGroup
	for b := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blk := a[b*block : min((b+1)*block, n)]
			slices.Sort(blk)
			countBuckets(blk, pivots, counts[b*buckets:(b+1)*buckets])
		}()
	}
	wg.Wait()

	// offsets[b*buckets+j] is where block b's share of bucket j goes: after
	// the buckets before j, and in bucket j after the shares of the blocks
	// before b. starts[j] is where bucket j starts.
	offsets := make([]int, blocks*buckets)
	starts := make([]int, buckets+1)
	sum := 0
	for j := range buckets {
		starts[j] = sum
		for b := range blocks {
			offsets[b*buckets+j] = sum
			sum += counts[b*buckets+j]
		}
	}
	starts[buckets] = sum

	out := make([]int64, n)
	for b := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blk := a[b*block : min((b+1)*block, n)]
			for j, c := range counts[b*buckets : (b+1)*buckets] {
				copy(out[offsets[b*buckets+j]:], blk[:c])
				blk = blk[c:]
			}
		}()
	}
	wg.Wait()

	for j := range buckets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.Sort(out[starts[j]:starts[j+1]])
		}()
	}
	wg.Wait()
	return out
}

// choosePivots returns buckets-1 pivots, in increasing order, from a sorted
// sample of a's elements at pseudo-random positions: every oversampling-th
// element of the sample. Bucket j holds the elements x with
// pivots[j-1] < x <= pivots[j], the first and last being open-ended.
func choosePivots(a []int64, buckets int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, ^seed))
	sample := make([]int64, buckets*oversampling)
	for i := range sample {
		sample[i] = a[r.IntN(len(a))]
	}
	slices.Sort(sample)
	pivots := make([]int64, buckets-1)
	for j := range pivots {
		pivots[j] = sample[(j+1)*oversampling]
	}
	return pivots
}

// countBuckets sets counts[j] to the number of elements of the sorted block
// blk in bucket j, by merging blk with the sorted pivots.
func countBuckets(blk, pivots []int64, counts []int) {
	clear(counts)
	j := 0
	for _, x := range blk {
		for j < len(pivots) && pivots[j] < x {
			j++
		}
		counts[j]++
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
