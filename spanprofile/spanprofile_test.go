package spanprofile_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with the named file in testdata, or rewrites the file
// under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDerived(t *testing.T) {
	t.Parallel()
	p := &spanprofile.Profile{Work: 1_000_000, Span: 40_000, BurdenedSpan: 50_000, Spawns: 100, Syncs: 99}
	if got := p.Parallelism(); !near(got, 25) {
		t.Errorf("Parallelism() = %v, want 25", got)
	}
	if got := p.BurdenedParallelism(); !near(got, 20) {
		t.Errorf("BurdenedParallelism() = %v, want 20", got)
	}
	if got, want := p.AverageStrand(), 1_000_000.0/300; !near(got, want) {
		t.Errorf("AverageStrand() = %v, want %v", got, want)
	}
	got := p.SpeedupEstimate([]int{1, 2, 16, 64})
	want := []spanprofile.Bound{
		{Procs: 1, Lower: 1_000_000 / (1_000_000 + 1.7*50_000), Upper: 1},
		{Procs: 2, Lower: 1_000_000 / (500_000 + 1.7*50_000), Upper: 2},
		{Procs: 16, Lower: 1_000_000 / (62_500 + 1.7*50_000), Upper: 16},
		{Procs: 64, Lower: 1_000_000 / (15_625 + 1.7*50_000), Upper: 25},
	}
	if len(got) != len(want) {
		t.Fatalf("SpeedupEstimate = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Procs != want[i].Procs || !near(got[i].Lower, want[i].Lower) || !near(got[i].Upper, want[i].Upper) {
			t.Errorf("SpeedupEstimate[%d] = %+v, want %+v", i, got[i], want[i])
		}
		if got[i].Lower > got[i].Upper {
			t.Errorf("SpeedupEstimate[%d]: lower %v above upper %v", i, got[i].Lower, got[i].Upper)
		}
	}
}

func TestDerivedEmpty(t *testing.T) {
	t.Parallel()
	var p spanprofile.Profile
	for name, v := range map[string]float64{
		"Parallelism":         p.Parallelism(),
		"BurdenedParallelism": p.BurdenedParallelism(),
		"AverageStrand":       p.AverageStrand(),
	} {
		if v != 0 {
			t.Errorf("%s() of an empty profile = %v, want 0", name, v)
		}
	}
	for _, b := range p.SpeedupEstimate([]int{0, 2}) {
		if b.Lower != 0 || b.Upper != 0 {
			t.Errorf("SpeedupEstimate of an empty profile: %+v, want zero bounds", b)
		}
	}
	// A burdened span below the span (a corrupt profile) must not give a
	// lower bound above the upper one.
	q := spanprofile.Profile{Work: 100, Span: 50, BurdenedSpan: 1}
	for _, b := range q.SpeedupEstimate([]int{64}) {
		if b.Lower > b.Upper {
			t.Errorf("lower %v above upper %v", b.Lower, b.Upper)
		}
	}
}

func TestDefaultProcs(t *testing.T) {
	t.Parallel()
	procs := spanprofile.DefaultProcs()
	if !slices.IsSorted(procs) {
		t.Errorf("DefaultProcs() = %v, not sorted", procs)
	}
	for _, n := range []int{2, 4, 8, 16, 32, 64, runtime.NumCPU()} {
		if !slices.Contains(procs, n) {
			t.Errorf("DefaultProcs() = %v, missing %d", procs, n)
		}
	}
	if len(slices.Compact(slices.Clone(procs))) != len(procs) {
		t.Errorf("DefaultProcs() = %v has duplicates", procs)
	}
}

func TestBySite(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	sites := p.BySite()
	if len(sites) != len(p.Sites) {
		t.Fatalf("BySite() has %d entries, want %d", len(sites), len(p.Sites))
	}
	// Site 1 (partition) is the leaf of three contexts.
	part := sites[1]
	if part.Index != 1 || part.Site != p.Sites[1] {
		t.Errorf("BySite()[1] = site %d %+v, want site 1 %+v", part.Index, part.Site, p.Sites[1])
	}
	wantLocal := spanprofile.Triple{Count: 1 + 4_259 + 4_259, Work: 12_300_000 + 200_925_264 + 194_925_264, Span: 12_300_000 + 200_925_264 + 194_925_264}
	if part.OnWork.Local != wantLocal {
		t.Errorf("partition local on work = %+v, want %+v", part.OnWork.Local, wantLocal)
	}
	if got, want := part.OnSpan.Local.Span, int64(12_300_000+64_795_645+64_795_646); got != want {
		t.Errorf("partition local span on span = %d, want %d", got, want)
	}
	if sites[7].Executed() {
		t.Errorf("the region site was never executed, BySite says %+v", sites[7])
	}
	if !sites[0].Executed() {
		t.Errorf("site 0 was executed, BySite says %+v", sites[0])
	}

	// Every context is counted once: by its leaf site or as the root.
	root := p.Root()
	if root.Index != -1 || root.Site.Kind != spanprofile.KindRoot || root.Site.Func != spanprofile.RootName {
		t.Errorf("Root() = %+v, want index -1, kind root, func %q", root, spanprofile.RootName)
	}
	work, span := root.OnWork.Local.Work, root.OnSpan.Local.Span
	for _, s := range sites {
		work += s.OnWork.Local.Work
		span += s.OnSpan.Local.Span
	}
	if work != p.Work || span != p.Span {
		t.Errorf("local work, span summed over sites and root = %d, %d; want the profile's %d, %d", work, span, p.Work, p.Span)
	}
}

func TestRootSite(t *testing.T) {
	t.Parallel()
	p := &spanprofile.Profile{Sites: []spanprofile.Site{
		{File: "a.go", Line: 1, Func: "main.f", Kind: spanprofile.KindCall},
		{File: "main.go", Line: 5, Func: "main.main", Kind: spanprofile.KindRoot},
	}}
	if got := p.RootSite(); got != p.Sites[1] {
		t.Errorf("RootSite() = %+v, want the root site %+v", got, p.Sites[1])
	}
}
