package shadow

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// treeProfile profiles a balanced fork/join tree with 2^depth leaves, leaf
// i taking leaf(i) units, and returns the profile and the leaf context.
func treeProfile(depth int, leaf func(i int) int64) (*spanprofile.Profile, int) {
	return treeProfileAfter(0, depth, leaf)
}

// treeProfileAfter is treeProfile after a serial strand of the given length.
func treeProfileAfter(serial int64, depth int, leaf func(i int) int64) (*spanprofile.Profile, int) {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "t.go", Line: 3, Func: "main.tree", Caller: "main.tree", Kind: spanprofile.KindSpawn},
		{File: "t.go", Line: 9, Func: "main.leaf", Caller: "main.tree", Kind: spanprofile.KindCall},
	})
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, tab)
	next := 0
	objs := make([]int, 1<<depth)
	var tree func(d int)
	tree = func(d int) {
		if d == 0 {
			e.CallBegin(1)
			m.now += uint64(leaf(next))
			next++
			e.CallEnd()
			return
		}
		obj := unsafe.Pointer(&objs[next])
		e.SpawnBegin(0)
		tree(d - 1)
		e.SpawnEnd(obj)
		tree(d - 1)
		e.Wait(obj)
	}
	m.now += uint64(serial)
	tree(depth)
	p := e.stop()
	for i, c := range p.Contexts {
		if len(c.Stack) > 0 && c.Stack[len(c.Stack)-1] == 1 {
			return p, i
		}
	}
	return p, -1
}

// TestOutliers checks the warning that noise chose the critical path: one
// slow leaf among alike ones is named, a divide and conquer whose levels
// differ by design is not, nor are alike leaves.
func TestOutliers(t *testing.T) {
	p, leafCtx := treeProfile(5, func(i int) int64 {
		if i == 13 {
			return 3000 // one strand slowed by something else
		}
		return 1000 + int64(i%3)
	})
	o := p.Trust.Outliers
	if len(o) != 1 || o[0].Context != leafCtx {
		t.Fatalf("one slow leaf of 32: outliers %+v, want the leaf context %d", o, leafCtx)
	}
	if o[0].PathMean != 3000 || o[0].Mean < 1000 || o[0].Mean > 1100 {
		t.Errorf("outlier %+v: want a path mean of 3000 against about 1060", o[0])
	}

	// The same slow leaf after a serial part 50 times as long: its excess
	// is a small part of the span, not worth a warning.
	p, _ = treeProfileAfter(100_000, 5, func(i int) int64 {
		if i == 13 {
			return 3000
		}
		return 1000 + int64(i%3)
	})
	if o := p.Trust.Outliers; len(o) != 0 {
		t.Errorf("a slow leaf that makes 2%% of the span: outliers %+v, want none", o)
	}

	p, _ = treeProfile(5, func(i int) int64 { return 1000 + int64(i%7) })
	if o := p.Trust.Outliers; len(o) != 0 {
		t.Errorf("alike leaves: outliers %+v, want none", o)
	}
	// Leaves whose sizes differ by design (a skewed split): the longest is
	// on the critical path, far above the mean, but so is the deviation.
	p, _ = treeProfile(5, func(i int) int64 { return int64(100 * (1 + i*i)) })
	if o := p.Trust.Outliers; len(o) != 0 {
		t.Errorf("leaves of different sizes: outliers %+v, want none", o)
	}
}

// TestTrustFigures checks what the machine readings say against a known
// start: CPU time used by this process is not other processes' load.
func TestTrustFigures(t *testing.T) {
	start := readMachine(0)
	if !start.ok {
		t.Skip("no machine counters on this platform")
	}
	sink := 0
	for i := range 20_000_000 {
		sink += i ^ sink>>3
	}
	_ = sink
	tr := trustFigures(start, false)
	if tr.CPUs < 1 || tr.OtherCPU < 0 || tr.Steal < 0 || tr.RunDelay < 0 {
		t.Fatalf("trust figures %+v: want CPUs and non-negative times", tr)
	}
	if moved := trustFigures(start, true); moved.RunDelay != -1 {
		t.Errorf("a run that moved threads: run delay %d, want -1 (unknown)", moved.RunDelay)
	}
}

// TestSubtractedNeverNegative: a reading behind the last (an unordered TSC
// read, a clock stepped back) must not make the subtracted total negative,
// as it did in 13 profiles of real test suites ("-301,142 ns in all").
func TestSubtractedNeverNegative(t *testing.T) {
	tab := &siteTable{}
	tab.add([]SiteInfo{{File: "t.go", Line: 3, Func: "main.f", Caller: "main.main", Kind: spanprofile.KindCall}})
	m := &synthetic{now: 1_000_000}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Overhead: 10}, tab)
	for range 100 {
		m.now -= 500 // backwards
		e.CallBegin(0)
		m.now += 100
		e.CallEnd()
	}
	p := e.stop()
	if p.Subtracted < 0 || p.Work < 0 {
		t.Errorf("subtracted %d, work %d: want neither negative", p.Subtracted, p.Work)
	}
}

// TestSizesOracle checks the compact records of invocation sizes against
// a full histogram per context, built by brute force, on random sequences
// of invocations: each context's histogram must be the brute-force one, and
// only contexts of more than outlierMin invocations hold a full one.
func TestSizesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	for trial := 0; trial < 200; trial++ {
		k := 1 + rng.IntN(40)
		e := &engine{}
		e.growContexts(k)
		want := make([][sizeBuckets]uint32, k)
		count := make([]int, k)
		for i, n := 0, rng.IntN(600); i < n; i++ {
			ctx := rng.IntN(k)
			if rng.IntN(3) == 0 {
				ctx = rng.IntN(1 + k/4) // some contexts far more often than others
			}
			var w int64
			switch rng.IntN(4) {
			case 0:
				w = -rng.Int64N(100)
			case 1:
				w = rng.Int64N(4)
			case 2:
				w = rng.Int64() >> rng.IntN(63)
			default:
				w = 1000 + rng.Int64N(1000)
			}
			e.countSize(&e.sizes[ctx], w)
			b := 0
			if w > 0 {
				b = bits.Len64(uint64(w))
			}
			want[ctx][b]++
			count[ctx]++
		}
		full := 0
		buf := make([]uint32, sizeBuckets)
		for ctx := 0; ctx < k; ctx++ {
			if count[ctx] > outlierMin {
				full++
			}
			got := e.sizes[ctx].histogram(e.hists, buf)
			if !slices.Equal(got, want[ctx][:]) {
				t.Fatalf("trial %d, context %d of %d invocations: histogram %v, want %v", trial, ctx, count[ctx], got, want[ctx])
			}
		}
		if len(e.hists) != full*sizeBuckets {
			t.Fatalf("trial %d: %d full histograms' worth, want %d (contexts of more than %d invocations)", trial, len(e.hists)/sizeBuckets, full, outlierMin)
		}
	}
}
