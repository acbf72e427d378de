// Package examples_test checks that spanprof tells the papers' stories
// (docs/examples.md) about the programs in this directory: each example is built
// instrumented and run by `spanprof run`, at a smaller input than its
// default, and its profile is checked for what the Cilkprof and Cilkview
// case studies found.
//
// The runs count instructions where the hardware counts them: a count of
// the instructions each strand executes does not depend on who else runs.
// Elsewhere (VMs, containers, CI) they measure with the default, cpu, which
// excludes the time other processes take from the profiled thread, over
// several runs that keep each strand's shortest time (-count): on a 2-core
// VM with both cores kept busy by other processes, the raw clock read
// matmul's multiply at parallelism 7 where it is 32. No test here skips for
// want of counters.
package examples_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

var spanprofBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "spanprof-acceptance")
	if err != nil {
		panic(err)
	}
	spanprofBin = filepath.Join(dir, "spanprof")
	// No automatic what-if run in the runs of spanprof run here, unless a
	// test asks with -whatif: it would double every run's time.
	os.Setenv("SPANPROF_WHATIF", "off")
	if runtime.GOOS == "windows" {
		spanprofBin += ".exe"
	}
	code := 0
	if out, err := exec.Command("go", "build", "-o", spanprofBin, "../cmd/spanprof").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		code = 1
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// profile runs `spanprof run ./examples/NAME -- ARGS` and reads the profile.
func profile(t *testing.T, name string, args ...string) *spanprofile.Profile {
	t.Helper()
	return profileWith(t, nil, name, args...)
}

// profileWith is profile with flags for spanprof run.
func profileWith(t *testing.T, flags []string, name string, args ...string) *spanprofile.Profile {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and profiles an example")
	}
	flags = append(measureFlags(t), flags...)
	out := filepath.Join(t.TempDir(), name+".pb.gz")
	cmdArgs := append(append([]string{"run", "-o", out}, flags...), "./"+name, "--")
	cmd := exec.Command(spanprofBin, append(cmdArgs, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spanprof run ./%s: %v\n%s", name, err, b)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// measureFlags returns the measure the acceptance runs use: instructions
// where the hardware counts them, else the default measure over three runs.
func measureFlags(t *testing.T) []string {
	if !countsInstructions() {
		t.Logf("no instruction counter: measuring with cpu, the default, over 3 runs")
		return []string{"-count", "3"}
	}
	return []string{"-measure", "instructions"}
}

// countsInstructions reports whether this machine counts instructions.
func countsInstructions() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := perf.Open(perf.Instructions)
	if err != nil {
		return false
	}
	m.Close()
	return true
}

// site returns the measurements of the site whose Func is fn and whose
// source line contains text, failing the test if there is none.
func site(t *testing.T, p *spanprofile.Profile, fn string) spanprofile.SiteMeasurement {
	t.Helper()
	for _, s := range p.BySite() {
		if s.Site.Func == fn {
			return s
		}
	}
	t.Fatalf("no site calls %s; sites: %v", fn, p.Sites)
	return spanprofile.SiteMeasurement{}
}

func byLocalSpanOnSpan(p *spanprofile.Profile) []spanprofile.SiteMeasurement {
	s := p.BySite()
	slices.SortStableFunc(s, func(a, b spanprofile.SiteMeasurement) int {
		return int(b.OnSpan.Local.Span - a.OnSpan.Local.Span)
	})
	return s
}

// Cilkprof §2, Figure 2: in parallel quicksort the serial partition is where
// the critical path spends its time, and the parallelism is modest.
func TestQuicksortPartitionBoundsTheSpan(t *testing.T) {
	p := profile(t, "quicksort", "-n", "200000")
	// The program also generates its input and checks its output serially;
	// among the sites of the sort itself, partition must come first.
	sort := map[string]bool{"main.partition": true, "main.pqsort": true, "main.pqsort.func1": true, "main.insertionSort": true, "main.medianOfThree": true}
	for _, s := range byLocalSpanOnSpan(p) {
		if !sort[s.Site.Func] {
			continue
		}
		if s.Site.Func != "main.partition" {
			t.Errorf("top site of the sort by local span on span is %s (%s:%d), want main.partition", s.Site.Func, s.Site.File, s.Site.Line)
		}
		break
	}
	if par := p.Parallelism(); par < 1.5 || par > 40 {
		t.Errorf("parallelism %.1f, want the low tens or below", par)
	}
}

// Cilkprof Figure 7: the top-caller work of fib's two recursive sites is in
// the golden ratio.
//
// fib's strands hold a few instructions each, so in any time measure
// nearly all that is left after subtracting the instrumentation's cost is
// noise (GC assists, preemption, interrupts): the ratio wanders from 1.6 to
// 3.6 between runs of the clock even on an idle machine, and read 2.1 with
// cpu over 3 runs under load. Counted in instructions it is 1.59-1.62.
// Where no counter opens, the test gives fib a serial cutoff: each leaf is
// then a serial subtree of microseconds, and the ratio is φ all the same,
// since every leaf of the same n costs the same.
//
// A time measure on a busy machine still misses now and then: beside two
// busy loops and the other packages' tests, one profile of three runs read
// 2.02. So where no counter opens the test makes up to three profiles, and
// fails listing each when none is within 10% of φ.
func TestFibTopCallerRatioIsPhi(t *testing.T) {
	args := []string{"-n", "22"}
	tries := 1
	if !countsInstructions() {
		args = []string{"-n", "30", "-cutoff", "14"}
		tries = 3
	}
	phi := (1 + math.Sqrt(5)) / 2
	var ratios []string
	for range tries {
		p := profile(t, "fib", args...)
		var spawn, call float64
		for _, s := range p.BySite() {
			if s.Site.Caller != "main.fib" && s.Site.Caller != "main.fib.func1" {
				continue
			}
			switch s.Site.Kind {
			case spanprofile.KindSpawn:
				spawn += float64(s.OnWork.TopCaller.Work)
			case spanprofile.KindCall:
				if s.Site.Func == "main.fib" && s.Site.Caller == "main.fib" {
					call += float64(s.OnWork.TopCaller.Work)
				}
			}
		}
		r := spawn / call
		if math.Abs(r-phi)/phi <= 0.10 {
			return
		}
		ratios = append(ratios, fmt.Sprintf("%.3f (%.0f/%.0f)", r, spawn, call))
	}
	t.Errorf("top-caller work of the fib(n-1) spawn over the fib(n-2) call = %s, want φ = %.3f within 10%%", strings.Join(ratios, ", "), phi)
}

// Cilkprof Figures 9-10: base is never called from the top-level mm, so its
// top-caller work is zero, yet most of the work of the call of mm from the
// program's driver is local to base; that call has ample parallelism. (The
// program's serial set-up, making the matrices and checking the product, is
// outside that call.)
func TestMatmulWorkIsLocalToBase(t *testing.T) {
	p := profile(t, "matmul", "-n", "512", "-cutoff", "32")
	b := site(t, p, "main.base")
	var top spanprofile.SiteMeasurement
	for _, s := range p.BySite() {
		if s.Site.Func == "main.mm" && s.Site.Caller == "main.run" {
			top = s
		}
	}
	mm := top.OnWork.TopCallSite
	if mm.Work == 0 {
		t.Fatalf("no call of main.mm from main.run; sites: %v", p.Sites)
	}
	if frac := float64(b.OnWork.Local.Work) / float64(mm.Work); frac < 0.8 {
		t.Errorf("local work of base is %.0f%% of the work of mm, want most of it", 100*frac)
	}
	if b.OnWork.TopCaller.Work != 0 {
		t.Errorf("top-caller work of base = %d, want 0 (never called from a top-level mm)", b.OnWork.TopCaller.Work)
	}
	if par := float64(mm.Work) / float64(mm.Span); par < 20 {
		t.Errorf("parallelism of the call of mm = %.1f, want ample", par)
	}
}

// Cilkview §5: parallelizing the stencil's inner loop gives goroutines too
// small to pay for themselves (burdened parallelism below 1); moving the
// parallelism to the outer loop fixes it.
func TestStencilGrainInnerVersusOuter(t *testing.T) {
	// Chunks of 8 columns: some 150 instructions of work per goroutine
	// against a burden of about 2,500. (The default, 32 columns, is about
	// 500 instructions and reads 1.05 in instructions, below 1 on the clock.)
	args := []string{"-rows", "258", "-cols", "258", "-steps", "10", "-chunk", "8"}
	// The burden is a goroutine hand-off as measured on this machine when
	// idle (about 1 µs); calibrating it during the test would make the
	// outcome depend on the load.
	burden := []string{"-burden", "1us"}
	inner := profileWith(t, burden, "stencil", args...)
	outer := profileWith(t, burden, "stencil", append(args, "-outer")...)
	if bp := inner.BurdenedParallelism(); bp >= 1 {
		t.Errorf("inner loop: burdened parallelism %.2f, want below 1 (parallelism %.1f, burden %d ns)", bp, inner.Parallelism(), inner.Burden)
	}
	// The whole run's figure includes the serial set-up of the grid, whose
	// page faults the cpu measure counts (kernel time) and user-mode
	// instructions do not: 1.9 with cpu here, higher in instructions.
	if bp := outer.BurdenedParallelism(); bp < 1.5 || bp < 4*inner.BurdenedParallelism() {
		t.Errorf("outer loop: burdened parallelism %.2f, want well above the inner loop's %.2f", bp, inner.BurdenedParallelism())
	}
}

// The tree sum's serial construction bounds its span: build (the call from
// the driver and its two recursive calls) is the top site by local span on
// span, and its sites together hold most of the span.
func TestTreesumConstructionIsTheBottleneck(t *testing.T) {
	p := profile(t, "treesum", "-n", "100000", "-depth", "8")
	sites := byLocalSpanOnSpan(p)
	if top := sites[0]; top.Site.Func != "main.build" {
		t.Errorf("top site by local span on span is %s, want main.build", top.Site.Func)
	}
	var build int64
	for _, s := range sites {
		if s.Site.Func == "main.build" {
			build += s.OnSpan.Local.Span
		}
	}
	if frac := float64(build) / float64(p.Span); frac < 0.6 {
		t.Errorf("build is %.0f%% of the span, want most of it", 100*frac)
	}
}

// The what-if case study (TaskProf §4's tree sum, docs/what-if.md): the
// what-if profile of the construction predicts the parallelism of the
// program whose construction really is faster. At -cost 16 each node costs
// 16 rounds of a hash to construct; at -cost 8 the construction does about
// half the work (its allocation and linking do not halve), and main.build
// ÷2 on the first must predict the parallelism of the second within 10%;
// making the construction free (∞) must lift the parallelism far above
// the run's, as the sum's parallelism allows. The garbage collector is off:
// it charges its assists to whichever strand allocates, and a faster
// build allocates faster and pays more (with it on, 1.35 predicted and
// 1.16 measured on a busy 2-core VM).
//
// With other processes on both cores one pair of runs can part by noise
// alone (-cost 8 measured 1.28 to 1.49 from run to run there, with the
// prediction 1.24 to 1.37), so the test makes up to three pairs and
// passes when one agrees within 10%; a prediction that is wrong fails all
// three, and the message lists every pair.
func TestTreesumWhatIf(t *testing.T) {
	t.Setenv("GOGC", "off")
	args := []string{"-n", "200000", "-depth", "8"}
	var pairs []string
	for range 3 {
		p := profileWith(t, []string{"-whatif", "main.build"}, "treesum", append(args, "-cost", "16")...)
		if len(p.WhatIf) != 4 || p.WhatIf[0].Target != "main.build" || p.WhatIf[0].Factor != 2 || p.WhatIf[0].Sites == 0 {
			t.Fatalf("the what-if estimates: %+v", p.WhatIf)
		}
		if free := p.WhatIf[3]; free.Factor != 0 || free.Parallelism() < 3*p.Parallelism() {
			t.Fatalf("with the construction free (%+v) the parallelism is %.2f, the run's %.2f: want far above", free, free.Parallelism(), p.Parallelism())
		}
		half := profileWith(t, []string{"-whatif", "off"}, "treesum", append(args, "-cost", "8")...)
		got, want := p.WhatIf[0].Parallelism(), half.Parallelism()
		t.Logf("main.build ÷2 predicts parallelism %.2f (run %.2f); at -cost 8 it measures %.2f", got, p.Parallelism(), want)
		if math.Abs(got-want) <= 0.10*want {
			return
		}
		pairs = append(pairs, fmt.Sprintf("predicted %.2f, measured %.2f", got, want))
	}
	t.Errorf("main.build ÷2 against -cost 8, more than 10%% apart in every pair: %s", strings.Join(pairs, "; "))
}
