package shadow

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/spanprof/spanprof/spanprofile"
)

// countingSynthetic is goSynthetic that counts its readings.
type countingSynthetic struct {
	goSynthetic
	reads atomic.Int64
}

func (s *countingSynthetic) Read() uint64 {
	s.reads.Add(1)
	return s.goSynthetic.Read()
}

// glueFib is fib through the package's entry points, as the rewriter
// writes it: errgroup's Go at site 0, the call of fib(n-2) at site 1, the
// wait. With glue, the spawn and the call's end are the glued forms, as
// the rewriter writes them where no code comes between (glue.go).
// Internal nodes that run on a goroutine spawned for real (not on root)
// count into spawned.
type glueFib struct {
	m       *countingSynthetic
	glue    bool
	root    uintptr
	spawned atomic.Int64
}

func (f *glueFib) fib(n int) int {
	f.m.add(1)
	if n < 2 {
		return n
	}
	if getg() != f.root {
		f.spawned.Add(1)
	}
	var g errgroup.Group
	var x, y int
	site := SiteID(0)
	if f.glue {
		site = Glued(site)
	}
	GroupGo(site, &g, func() error {
		x = f.fib(n - 1)
		return nil
	})
	if f.glue {
		y = LeaveGlue(Enter(1), f.fib(n-2))
	} else {
		y = Leave(Enter(1), f.fib(n-2))
	}
	GroupWait(&g)
	f.m.add(1)
	return x + y
}

func glueFibRun(t *testing.T, mode runMode, glue bool, n int) (*spanprofile.Profile, int64, int64) {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "fib.go", Line: 10, Func: "fib", Caller: "fib", Kind: spanprofile.KindSpawn, Goroutine: true},
		{File: "fib.go", Line: 13, Func: "fib", Caller: "fib", Kind: spanprofile.KindCall},
	})
	m := &countingSynthetic{goSynthetic: goSynthetic{n: map[uintptr]uint64{}}}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: mode}, tab)
	old := current
	current = e
	defer func() { current = old }()
	f := &glueFib{m: m, glue: glue, root: getg()}
	if got, want := f.fib(n), iterativeFib(n); got != want {
		t.Fatalf("fib(%d) = %d, want %d", n, got, want)
	}
	p := e.stop()
	return p, m.reads.Load(), f.spawned.Load()
}

func iterativeFib(n int) int {
	a, b := 0, 1
	for range n {
		a, b = b, a+b
	}
	return a
}

// TestParallelGlueReadsOnce: in parallel accounting a glued spawn and a
// glued call end each save one reading of the measure on a goroutine
// spawned for real (two per internal node of fib there; the goroutine
// that holds the engine takes its events under the lock and reads as
// before), and the profile is the one the unglued events make, which is
// serial mode's.
func TestParallelGlueReadsOnce(t *testing.T) {
	const n = 12
	serial, _, _ := glueFibRun(t, serialMode, false, n)
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			plain, plainReads, _ := glueFibRun(t, parallelMode, false, n)
			glued, gluedReads, spawned := glueFibRun(t, parallelMode, true, n)
			if spawned == 0 {
				t.Fatal("no internal node ran on a spawned goroutine")
			}
			if saved := plainReads - gluedReads; saved != 2*spawned {
				t.Errorf("glue saved %d readings (%d against %d), want 2 for each of the %d internal nodes on spawned goroutines", saved, gluedReads, plainReads, spawned)
			}
			for _, c := range []struct {
				name string
				p    *spanprofile.Profile
			}{{"unglued", plain}, {"glued", glued}} {
				if c.p.Work != serial.Work || c.p.Span != serial.Span {
					t.Errorf("%s: work %d, span %d; serial mode: %d, %d", c.name, c.p.Work, c.p.Span, serial.Work, serial.Span)
				}
				got, want := c.p.BySite(), serial.BySite()
				if len(got) != len(want) {
					t.Fatalf("%s: %d sites, serial mode %d", c.name, len(got), len(want))
				}
				for i := range got {
					if got[i].OnWork != want[i].OnWork || got[i].OnSpan != want[i].OnSpan {
						t.Errorf("%s: site %d: on work %+v, on span %+v; serial mode %+v, %+v", c.name, i, got[i].OnWork, got[i].OnSpan, want[i].OnWork, want[i].OnSpan)
					}
				}
			}
		})
	}
}
