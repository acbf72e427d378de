package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// holdsModule is a package whose tests do what real test suites do to the
// profiler (issue 13): a panic recovered outside the instrumented call it
// unwound (gonum's panics helper), a goroutine an earlier test left behind
// that calls instrumented code later, and a subtest started from a helper
// (esbuild's expectBundled).
var holdsModule = map[string]string{
	"m.go": `package m

import "sync"

//go:noinline
func mustPositive(x int) int {
	if x < 0 {
		panic("negative")
	}
	return x
}

func Sum(xs []int) int {
	var wg sync.WaitGroup
	parts := make([]int, 2)
	half := len(xs) / 2
	for i, s := range [][]int{xs[:half], xs[half:]} {
		wg.Go(func() { parts[i] = add(s) })
	}
	wg.Wait()
	return parts[0] + parts[1]
}

//go:noinline
func add(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
`,
	"m_test.go": `package m

import (
	"testing"
	"time"
)

var xs = make([]int, 1<<20)

// panics reports whether f panics, as gonum's test helper does.
func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return
}

func TestAPanic(t *testing.T) {
	if !panics(func() { mustPositive(-1) }) {
		t.Fatal("no panic")
	}
	Sum(xs)
}

func TestBSum(t *testing.T) { Sum(xs) }

var release, strayDone = make(chan struct{}), make(chan struct{})

// TestCLeaves leaves a goroutine behind that calls instrumented code once
// the next test has started.
func TestCLeaves(t *testing.T) {
	time.AfterFunc(time.Millisecond, func() {
		<-release
		Sum(xs[:1000])
		close(strayDone)
	})
}

func TestDSum(t *testing.T) {
	close(release)
	<-strayDone
	Sum(xs)
}

// check runs f in a subtest, as esbuild's expectBundled does.
func check(t *testing.T, f func()) {
	t.Run("sub", func(t *testing.T) { f() })
}

func TestESubtest(t *testing.T) {
	check(t, func() { Sum(xs) })
}

// FuzzSum runs its seed corpus, each input on a goroutine of its own.
func FuzzSum(f *testing.F) {
	f.Add(3)
	f.Add(5)
	f.Fuzz(func(t *testing.T, n int) { Sum(xs[:1000*n]) })
}
`,
}

// TestTestHoldsTheEngine (B1, B2, B3): on the old code the stray goroutine
// of TestCLeaves took the engine over and the profile read 0 spawns, with
// all the work in the panics helper's call; the subtest's spawns were
// missing. Now every test's Sum is profiled (12 spawns: the stray
// goroutine's are not), the helper's call holds only its own work, the
// subtest is a call at its t.Run site, so are the fuzz target's seed
// inputs, and the profile and the report say what was not profiled and
// where it came from.
func TestTestHoldsTheEngine(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, holdsModule)
	code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-count", "1", "-o", "prof.pb.gz", ".")
	if code != exitOK {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spawns != 12 {
		t.Errorf("%d spawns, want 12: two in each test's Sum and in each fuzz input's", p.Spawns)
	}
	// The subtest's call holds its Sum: as much work as TestBSum's and
	// TestDSum's Sums, give or take the machine. The smaller of the two is
	// the reference: under load one Sum has read 2.5 times the others.
	var subtest, bsum, dsum int64
	var sites []string
	for _, s := range p.BySite() {
		sites = append(sites, fmt.Sprintf("%s:%d %s %s %d", s.Site.File, s.Site.Line, s.Site.Func, s.Site.Kind, s.OnWork.TopCallSite.Work))
		switch {
		case s.Site.Func == "example.com/m.panics":
			if s.OnWork.TopCallSite.Work > p.Work/10 {
				t.Errorf("the panics helper's call holds %d of the work %d", s.OnWork.TopCallSite.Work, p.Work)
			}
		case s.Site.Func == "example.com/m.check.func1" && s.Site.Kind == spanprofile.KindCall:
			subtest = s.OnWork.TopCallSite.Work
		case s.Site.Func == "example.com/m.Sum" && s.Site.Line == 24:
			bsum = s.OnWork.TopCallSite.Work
		case s.Site.Func == "example.com/m.Sum" && s.Site.Line == 41:
			dsum = s.OnWork.TopCallSite.Work
		}
	}
	if ref := min(bsum, dsum); ref == 0 || subtest < ref/2 {
		t.Errorf("the subtest's call has work %d, TestBSum's Sum %d and TestDSum's %d:\n%s", subtest, bsum, dsum, strings.Join(sites, "\n"))
	}
	var stray bool
	for _, n := range p.NotProfiled {
		for _, c := range n.Creators {
			stray = stray || n.Reason == spanprofile.NotProfiledOtherGoroutine && strings.HasPrefix(c.Where, "time.goFunc")
		}
	}
	if !stray {
		t.Errorf("the profile does not name the stray goroutine: %+v", p.NotProfiled)
	}
	if out := strings.Join(strings.Fields(stdout+stderr), " "); !strings.Contains(out, "Not profiled: ") || !strings.Contains(out, "time.goFunc (sleep.go:") {
		t.Errorf("the report does not say what was not profiled:\n%s\n%s", stdout, stderr)
	}
}
