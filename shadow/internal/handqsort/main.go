// Command handqsort is the parallel quicksort of the Cilkprof paper's
// Figure 1, instrumented by hand with the calls that spanprof's rewriter
// writes (rewrite/doc.go). It shows what instrumented code looks like and
// gives a real profile to read with `spanprof report` before any rewriting
// is involved:
//
//	SPANPROF_OUT=spanprof.pb.gz go run ./shadow/internal/handqsort -n 2000000
//	go run ./cmd/spanprof report spanprof.pb.gz
//
// As a rewritten program, it profiles only when asked to: with SPANPROF_OUT
// or SPANPROF_MODE set (which spanprof run sets). In serial mode every spawn
// runs inline (the serial elision) inside shadow.Go; the WaitGroup is still
// signalled so the program's own synchronization stays as written.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"

	"github.com/spanprof/spanprof/shadow"
	"github.com/spanprof/spanprof/spanprofile"
)

var sites = shadow.Init([]shadow.SiteInfo{
	{File: "shadow/internal/handqsort/main.go", Line: 65, Func: "main.partition", Caller: "main.pqsort", Kind: spanprofile.KindCall},
	{File: "shadow/internal/handqsort/main.go", Line: 72, Func: "main.pqsort.func1", Caller: "main.pqsort", Kind: spanprofile.KindSpawn},
	{File: "shadow/internal/handqsort/main.go", Line: 77, Func: "main.pqsort", Caller: "main.pqsort", Kind: spanprofile.KindCall},
	{File: "shadow/internal/handqsort/main.go", Line: 93, Func: "main.pqsort", Caller: "main.main", Kind: spanprofile.KindCall},
})

const (
	sitePartition = iota
	siteSpawnLeft
	siteCallRight
	siteMain
)

func partition(a []int64, pivot int64) int {
	l, r := 0, len(a)-1
	for l <= r {
		for l <= r && a[l] < pivot {
			l++
		}
		for l <= r && a[r] >= pivot {
			r--
		}
		if l < r {
			a[l], a[r] = a[r], a[l]
		}
	}
	return l
}

func pqsort(a []int64) {
	if len(a) < 64 {
		slices.Sort(a)
		return
	}
	pivot := a[len(a)/2]
	shadow.CallBegin(sites + sitePartition)
	mid := partition(a, pivot)
	shadow.CallEnd()
	if mid == 0 { // every element >= pivot: move the pivots out of the way
		mid = partition(a, pivot+1)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	shadow.Go(sites+siteSpawnLeft, func() {
		defer shadow.WaitGroupDone(&wg)
		pqsort(a[:mid])
	})
	shadow.CallBegin(sites + siteCallRight)
	pqsort(a[mid:])
	shadow.CallEnd()
	shadow.WaitGroupWait(&wg)
}

func main() {
	n := flag.Int("n", 2_000_000, "number of elements to sort")
	flag.Parse()
	shadow.StartIfNeeded()
	defer shadow.Finish()
	r := rand.New(rand.NewPCG(1, 2))
	a := make([]int64, *n)
	for i := range a {
		a[i] = r.Int64()
	}
	shadow.CallBegin(sites + siteMain)
	pqsort(a)
	shadow.CallEnd()
	if !slices.IsSorted(a) {
		fmt.Fprintln(os.Stderr, "handqsort: result is not sorted")
		os.Exit(shadow.BeforeExit(1))
	}
	fmt.Printf("sorted %d elements\n", *n)
}
