package shadow

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// scaler follows the invocations open in a serial random program (inline
// children included) and shortens the strands that run inside one of a
// target's sites: the program whose targets really are faster.
type scaler struct {
	target []bool // per site
	factor int64  // 0: no time at all
	unit   int64  // every strand's length is a multiple of it
	open   []SiteID
	in     int // open invocations of target sites
}

func (s *scaler) begin(site SiteID) {
	s.open = append(s.open, site)
	if s.target[site] {
		s.in++
	}
}

func (s *scaler) end() {
	site := s.open[len(s.open)-1]
	s.open = s.open[:len(s.open)-1]
	if s.target[site] {
		s.in--
	}
}

func (s *scaler) CallBegin(site SiteID)   { s.begin(site) }
func (s *scaler) CallEnd()                { s.end() }
func (s *scaler) SpawnBegin(site SiteID)  { s.begin(site) }
func (s *scaler) SpawnEnd(unsafe.Pointer) { s.end() }
func (s *scaler) Done(unsafe.Pointer)     {}
func (s *scaler) Wait(unsafe.Pointer)     {}
func (s *scaler) scale(d int64) int64 {
	d *= s.unit
	switch {
	case s.in == 0:
		return d
	case s.factor == 0:
		return 0
	}
	return d / s.factor
}

// lcm of the factors: the unit of lengths that every factor divides. The
// engine divides a strand, the time between two events, and the program
// runs several pieces of work in one: with lengths in this unit, the
// pieces divided add up to the strand divided.
func lcm(factors []int64) int64 {
	l := int64(1)
	for _, f := range factors {
		if f > 0 {
			a, b := l, f
			for b != 0 {
				a, b = b, a%b
			}
			l = l / a * f
		}
	}
	return l
}

// randomTargets picks what-if targets for a random program: sites by
// file:line, functions by name (the sites that call or spawn them), and
// now and then one that matches nothing. It returns the targets and, for
// each, its sites, worked out from the program rather than by the
// engine's matching.
func randomTargets(r *rand.Rand, p *randProgram) ([]string, [][]bool) {
	var targets []string
	var sets [][]bool
	for n := 1 + r.IntN(3); len(targets) < n; {
		set := make([]bool, len(p.sites))
		var t string
		switch r.IntN(5) {
		case 0, 1:
			i := r.IntN(len(p.sites))
			t = "p.go:" + strconv.Itoa(p.sites[i].Line)
			set[i] = true
		case 2, 3:
			f := p.sites[r.IntN(len(p.sites))].Func
			t = f
			for i, s := range p.sites {
				set[i] = s.Func == f
			}
		default:
			t = "q.go:" + strconv.Itoa(1+r.IntN(9))
		}
		if !slices.Contains(targets, t) {
			targets = append(targets, t)
			sets = append(sets, set)
		}
	}
	return targets, sets
}

// TestWhatIfOracle: on random programs with random targets, every estimate
// of the what-if profile equals, exactly, the work, span and burdened span
// the engine measures on the same program with the target's strands
// really divided by the factor (or gone, for ∞), and the profile of the
// run itself is the oracle's, as without targets.
func TestWhatIfOracle(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		checkWhatIf(t, seed)
		if t.Failed() {
			return
		}
	}
}

func runRandom(p *randProgram, seed uint64, burden int64, cfg config, extra events, scale func(int64) int64) (*spanprofile.Profile, oResult) {
	r := rand.New(rand.NewPCG(seed, 99))
	tab := &siteTable{}
	tab.add(p.sites)
	m := &synthetic{}
	cfg.Measure, cfg.MeasureName, cfg.Unit, cfg.Burden = m, "synthetic", "count", burden
	e := newEngine(cfg, tab)
	o := newOracle(p.sites, burden)
	ev := []events{e, o}
	if extra != nil {
		ev = append([]events{extra}, ev...) // first: it must see a begin before the strands inside
	}
	rn := &runner{p: p, ev: ev, m: m, o: o, fuel: 60 + r.IntN(200), scale: scale}
	rn.work(int64(r.IntN(3)))
	rn.run(0, nil, 0)
	rn.work(int64(r.IntN(3)))
	return e.stop(), o.solve()
}

func checkWhatIf(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 23))
	p := genProgram(r)
	burden := int64(r.IntN(6))
	targets, sets := randomTargets(r, p)
	factors := []int64{2, 4, 8, 0, 1 + r.Int64N(5)}
	unit := lcm(factors)
	times := func(d int64) int64 { return d * unit }
	got, want := runRandom(p, seed, burden, config{WhatIf: targets, Factors: factors}, nil, times)
	compareWithOracle(t, seed, got, want)

	if len(targets) > 1 {
		all := make([]bool, len(p.sites))
		for _, set := range sets {
			for i, in := range set {
				all[i] = all[i] || in
			}
		}
		sets = append(sets, all)
	}
	if len(got.WhatIf) != len(sets)*len(factors) {
		t.Fatalf("seed %d: %d estimates for %d targets and %d factors", seed, len(got.WhatIf), len(targets), len(factors))
	}
	for k, w := range got.WhatIf {
		set, f := sets[k/len(factors)], factors[k%len(factors)]
		wantTarget := spanprofile.WhatIfAll
		if k/len(factors) < len(targets) {
			wantTarget = targets[k/len(factors)]
		}
		matched := 0
		for _, in := range set {
			if in {
				matched++
			}
		}
		if w.Target != wantTarget || w.Factor != f || w.Sites != matched {
			t.Errorf("seed %d: estimate %d is %q ×%d on %d sites, want %q ×%d on %d", seed, k, w.Target, w.Factor, w.Sites, wantTarget, f, matched)
		}
		s := &scaler{target: set, factor: f, unit: unit}
		real, _ := runRandom(p, seed, burden, config{}, s, s.scale)
		if w.Work != real.Work || w.Span != real.Span || w.BurdenedSpan != real.BurdenedSpan {
			t.Errorf("seed %d: %s ÷%d: estimate work/span/burdened %d/%d/%d, measured %d/%d/%d (run %d/%d/%d)",
				seed, w.Target, f, w.Work, w.Span, w.BurdenedSpan, real.Work, real.Span, real.BurdenedSpan, got.Work, got.Span, got.BurdenedSpan)
		}
	}
}

// TestWhatIfChangesSomething keeps the oracle test honest: over the random
// programs, estimates differ from the run they come from (a what-if that
// changed nothing would pass it).
func TestWhatIfChangesSomething(t *testing.T) {
	changed, same := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 23))
		p := genProgram(r)
		targets, _ := randomTargets(r, p)
		got, _ := runRandom(p, seed, 0, config{WhatIf: targets}, nil, nil)
		for _, w := range got.WhatIf {
			if w.Span < got.Span {
				changed++
			} else {
				same++
			}
		}
	}
	if changed < 100 || same < 100 {
		t.Errorf("%d estimates shorten the span, %d do not: the random targets do not exercise both", changed, same)
	}
}

// TestParseTargets: sites, names and what is neither.
func TestParseTargets(t *testing.T) {
	for _, c := range []struct {
		in        string
		file      string
		line, col int
		bad       bool
	}{
		{in: "main.prepare"},
		{in: "build tree"},
		{in: "main.go:12", file: "main.go", line: 12},
		{in: "pkg/main.go:12:7", file: "pkg/main.go", line: 12, col: 7},
		{in: "a:b"},
		{in: "main.go:0", file: "main.go", bad: true},
		{in: ":12", bad: true},
		{in: " main.prepare", bad: true},
		{in: "", bad: true},
	} {
		file, line, col, err := parseTarget(c.in)
		if (err != nil) != c.bad || file != c.file || line != c.line || col != c.col {
			t.Errorf("parseTarget(%q) = %q, %d, %d, %v; want %q, %d, %d, error %v", c.in, file, line, col, err, c.file, c.line, c.col, c.bad)
		}
	}
	if got, err := ParseTargets("main.prepare, a.go:3,main.prepare"); err != nil || fmt.Sprint(got) != "[main.prepare a.go:3]" {
		t.Errorf("ParseTargets = %q, %v", got, err)
	}
	if _, err := ParseTargets(" , "); err == nil {
		t.Error("ParseTargets of no target: no error")
	}
	s := &SiteInfo{File: "cmd/x/main.go", Line: 12, Column: 7, Func: "main.prepare"}
	for target, want := range map[string]bool{"main.go:12": true, "x/main.go:12:7": true, "cmd/x/main.go:12": true,
		"ain.go:12": false, "main.go:12:8": false, "main.go:13": false, "main.prepare": true, "main.prep": false} {
		if matches(target, s) != want {
			t.Errorf("matches(%q, %s:%d:%d) = %v", target, s.File, s.Line, s.Column, !want)
		}
	}
}

// TestWhatIfGroupLimit: in a group with a limit, which slot frees first
// depends on the children's lengths, so each estimate must pick its own
// (whatif.go). Random groups whose children come from two sites, one the
// target: every estimate equals the run with the target's children really
// that much shorter.
func TestWhatIfGroupLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	const unit = 8 // lcm of the factors
	for trial := range 300 {
		n := 1 + r.IntN(10)
		k := 1 + r.IntN(4)
		gaps, works, at := make([]int64, n), make([]int64, n), make([]int, n)
		for i := range n {
			gaps[i], works[i], at[i] = r.Int64N(5), 1+r.Int64N(40), r.IntN(2)
		}
		tail, burden := r.Int64N(5), r.Int64N(3)
		run := func(whatIf []string, factor int64, scaled bool) *spanprofile.Profile {
			tab := &siteTable{}
			site := tab.add([]SiteInfo{
				{File: "g.go", Line: 1, Func: "a", Caller: "main", Kind: spanprofile.KindSpawn},
				{File: "g.go", Line: 2, Func: "b", Caller: "main", Kind: spanprofile.KindSpawn}})
			m := &goSynthetic{n: map[uintptr]uint64{}}
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: serialMode, Burden: burden, WhatIf: whatIf}, tab)
			old := current
			current = e
			defer func() { current = old }()
			var g errgroup.Group
			GroupSetLimit(&g, k)
			for i := range n {
				m.add(gaps[i] * unit)
				d := works[i] * unit
				if scaled && at[i] == 0 {
					d = 0
					if factor > 0 {
						d = works[i] * unit / factor
					}
				}
				GroupGo(site+SiteID(at[i]), &g, func() error { m.add(d); return nil })
			}
			m.add(tail * unit)
			if err := GroupWait(&g); err != nil {
				t.Fatal(err)
			}
			return e.stop()
		}
		got := run([]string{"g.go:1"}, 0, false)
		for _, w := range got.WhatIf {
			real := run(nil, w.Factor, true)
			if w.Work != real.Work || w.Span != real.Span || w.BurdenedSpan != real.BurdenedSpan {
				t.Errorf("trial %d (limit %d, gaps %v works %v sites %v): ÷%d: estimate %d/%d/%d, measured %d/%d/%d",
					trial, k, gaps, works, at, w.Factor, w.Work, w.Span, w.BurdenedSpan, real.Work, real.Span, real.BurdenedSpan)
			}
		}
	}
}

// TestWhatIfParallel: in parallel accounting, where spawned children run
// as goroutines of their own that start from their parent's estimates and
// active invocations, every estimate still equals the serial engine's
// measurement of the program with the target's strands divided.
func TestWhatIfParallel(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 100
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		checkWhatIfParallel(t, seed)
		if t.Failed() {
			return
		}
	}
}

func checkWhatIfParallel(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 17))
	p := genProgram(r)
	burden := int64(r.IntN(6))
	fuel := 60 + r.IntN(200)
	w0, w1 := int64(r.IntN(3)), int64(r.IntN(3))
	targets, sets := randomTargets(r, p)
	factors := []int64{2, 4, 8, 0}
	unit := lcm(factors)
	times := func(d int64) int64 { return d * unit }

	// As checkParallelAgainstOracle: a serial pass records the schedule,
	// then goroutines play it into an engine with the targets.
	rec := &prun{p: p, o: newOracle(p.sites, burden), fuel: fuel, tasks: []*ptask{{}}, scale: times}
	rec.work(w0)
	rec.exec(&pcursor{t: rec.tasks[0]}, 0, nil, 0)
	rec.work(w1)
	tab := &siteTable{}
	tab.add(p.sites)
	m := &goSynthetic{n: map[uintptr]uint64{}}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: parallelMode, Burden: burden, WhatIf: targets, Factors: factors}, tab)
	pl := &prun{p: p, play: true, e: e, m: m, tasks: rec.tasks, scale: times}
	pl.cond = sync.NewCond(&pl.mu)
	pl.work(w0)
	pl.exec(&pcursor{t: pl.tasks[0]}, 0, nil, 0)
	pl.work(w1)
	pl.wg.Wait()
	got := e.stop()

	if len(targets) > 1 {
		all := make([]bool, len(p.sites))
		for _, set := range sets {
			for i, in := range set {
				all[i] = all[i] || in
			}
		}
		sets = append(sets, all)
	}
	if len(got.WhatIf) != len(sets)*len(factors) {
		t.Fatalf("seed %d: %d estimates for %d targets", seed, len(got.WhatIf), len(targets))
	}
	for k, w := range got.WhatIf {
		s := &scaler{target: sets[k/len(factors)], factor: factors[k%len(factors)], unit: unit}
		sm := &synthetic{}
		se := newEngine(config{Measure: sm, MeasureName: "synthetic", Unit: "count", Burden: burden}, tab)
		o := newOracle(p.sites, burden)
		rn := &runner{p: p, ev: []events{s, se, o}, m: sm, o: o, fuel: fuel, scale: s.scale}
		rn.work(w0)
		rn.run(0, nil, 0)
		rn.work(w1)
		real := se.stop()
		if w.Work != real.Work || w.Span != real.Span || w.BurdenedSpan != real.BurdenedSpan {
			t.Errorf("seed %d: %s ÷%d in parallel: estimate %d/%d/%d, measured serially %d/%d/%d",
				seed, w.Target, w.Factor, w.Work, w.Span, w.BurdenedSpan, real.Work, real.Span, real.BurdenedSpan)
		}
	}
}

// BenchmarkFibWhatIf is BenchmarkFib with a what-if profile of the call
// site fib(n-2) (b.go:4): what every event pays with one target and the
// default factors, next to BenchmarkFib's cost without.
func BenchmarkFibWhatIf(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := perf.Open(perf.Default())
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(config{Measure: m, MeasureName: m.Name(), Unit: m.Unit(), PerThread: m.PerThread(), WhatIf: []string{"b.go:4"},
		Overhead: calibrateOverhead(m, m.Name(), serialMode, m.PerThread())}, benchTable())
	defer cpuTimer(b, fibEventCount(20))()
	for i := 0; i < b.N; i++ {
		fibEvents(e, 20)
	}
}
