package shadow

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// runTest runs f on a goroutine of its own as the testing package runs a
// test, with the defer EndTest(BeginTest()) that the rewriter puts first in
// every test function, and waits for it.
func runTest(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer EndTest(BeginTest())
		f()
	}()
	<-done
}

// fakeRun is t.Run for TestRun: it runs f on a goroutine of its own and
// waits until f returns or pauses (fakeParallel).
type fakeRun struct {
	paused chan struct{}
	all    sync.WaitGroup // every subtest's goroutine, to its end
}

func (r *fakeRun) run(name string, f func(int)) bool {
	done := make(chan struct{})
	r.all.Add(1)
	go func() {
		defer r.all.Done()
		defer close(done)
		f(0)
	}()
	select {
	case <-done:
	case <-r.paused:
	}
	return true
}

func notProfiledFor(p *spanprofile.Profile, reason string) spanprofile.NotProfiled {
	for _, n := range p.NotProfiled {
		if n.Reason == reason {
			return n
		}
	}
	return spanprofile.NotProfiled{}
}

// TestStrayGoroutineNeverTakesOver (B2): a goroutine an earlier test left
// running calls instrumented code while the engine is free; it must not
// take the engine over, and the next test's events are profiled. On the
// old code the stray goroutine became the profiled one and the next
// test's spawn was lost.
func TestStrayGoroutineNeverTakesOver(t *testing.T) {
	forModes(t, func(t *testing.T, mode runMode) {
		if !goroutineCheck {
			t.Skip("no goroutine identity on this architecture")
		}
		m := &synthetic{}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode}, unwindTable())
		withEngine(t, e)
		release, strayDone := make(chan struct{}), make(chan struct{})
		runTest(func() { // TestA leaves a goroutine behind
			call(2, func() { m.now += 3 })
			go func() {
				defer close(strayDone)
				<-release
				call(3, func() {})
			}()
		})
		close(release)
		<-strayDone
		obj := unsafe.Pointer(new(wgStub))
		runTest(func() { // TestB
			m.now += 2
			spawn(0, obj, func() { m.now += 5 })
			join(obj)
		})
		p := e.stop()
		if p.Spawns != 1 || p.Work != 10 {
			t.Errorf("spawns %d, work %d; want the second test's spawn and work 10", p.Spawns, p.Work)
		}
		n := notProfiledFor(p, spanprofile.NotProfiledOtherGoroutine)
		if n.Events != 2 || n.Goroutines != 1 || len(n.Sites) != 1 || n.Sites[0].Site != 3 {
			t.Errorf("not profiled: %+v; want the stray goroutine's 2 events, at site 3", n)
		}
		if len(n.Creators) != 1 || !strings.Contains(n.Creators[0].Where, "TestStrayGoroutineNeverTakesOver") || !strings.Contains(n.Creators[0].Where, "hold_test.go:") {
			t.Errorf("creators %+v, want the test's closure with its file and line", n.Creators)
		}
	})
}

// TestSubtestIsACall (B3): a subtest started from an instrumented helper
// is profiled as a call at the t.Run site: its spawn is there, and the
// helper's local work is its own, not the time it spent blocked in t.Run.
func TestSubtestIsACall(t *testing.T) {
	forModes(t, func(t *testing.T, mode runMode) {
		if !goroutineCheck {
			t.Skip("no goroutine identity on this architecture")
		}
		m := &synthetic{}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode}, unwindTable())
		withEngine(t, e)
		obj := unsafe.Pointer(new(wgStub))
		r := &fakeRun{}
		runTest(func() {
			call(3, func() { // check(t, f), instrumented
				m.now += 1
				TestRun(2, r.run, "sub", func(int) {
					m.now += 2
					spawn(0, obj, func() { m.now += 5 })
					join(obj)
				})
				m.now += 1
			})
		})
		p := e.stop()
		if p.Spawns != 1 || p.Work != 9 || p.Span != 9 {
			t.Errorf("spawns %d, work %d, span %d; want 1, 9 and 9", p.Spawns, p.Work, p.Span)
		}
		for _, s := range p.BySite() {
			switch s.Index {
			case 3:
				if s.OnWork.Local.Work != 2 || s.OnWork.TopCallSite.Work != 9 {
					t.Errorf("the helper: local work %d, work %d; want 2 and 9", s.OnWork.Local.Work, s.OnWork.TopCallSite.Work)
				}
			case 2:
				if s.OnWork.TopCallSite.Work != 7 || s.OnWork.Local.Count != 1 {
					t.Errorf("the subtest: work %d in %d invocations; want 7 in 1", s.OnWork.TopCallSite.Work, s.OnWork.Local.Count)
				}
			}
		}
		if len(p.NotProfiled) != 0 {
			t.Errorf("not profiled: %+v", p.NotProfiled)
		}
	})
}

// TestParallelSubtestResumes: a subtest that calls t.Parallel gives the
// engine back to its parent, and takes it again when it resumes after the
// parent's test has ended.
func TestParallelSubtestResumes(t *testing.T) {
	forModes(t, func(t *testing.T, mode runMode) {
		if !goroutineCheck {
			t.Skip("no goroutine identity on this architecture")
		}
		m := &synthetic{}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode}, unwindTable())
		withEngine(t, e)
		r := &fakeRun{paused: make(chan struct{})}
		resume, childDone := make(chan struct{}), make(chan struct{})
		runTest(func() {
			TestRun(2, r.run, "sub", func(int) {
				defer close(childDone)
				m.now += 1
				TestParallel(func() { close(r.paused); <-resume })
				call(1, func() { m.now += 5 })
			})
			call(3, func() { m.now += 3 }) // the parent goes on while the subtest waits
		})
		close(resume) // the parent's test has ended: the paused subtest runs
		<-childDone
		r.all.Wait()
		p := e.stop()
		if p.Work != 9 || len(p.NotProfiled) != 0 {
			t.Errorf("work %d, not profiled %+v; want 9 and nothing", p.Work, p.NotProfiled)
		}
		for _, s := range p.BySite() {
			if s.Index == 1 && s.OnWork.TopCallSite.Work != 5 {
				t.Errorf("the call after t.Parallel has work %d, want 5", s.OnWork.TopCallSite.Work)
			}
		}
	})
}

// TestTestLeavesInvocationsOpen: what a test leaves open (t.Fatal's
// runtime.Goexit inside an instrumented call) is closed when it ends, and
// the next test starts at the root.
func TestTestLeavesInvocationsOpen(t *testing.T) {
	if !goroutineCheck {
		t.Skip("no goroutine identity on this architecture")
	}
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	withEngine(t, e)
	runTest(func() {
		CallBegin(3)
		m.now += 4
		fatal(m) // never returns
	})
	runTest(func() { call(2, func() { m.now += 7 }) })
	p := e.stop()
	if w, _ := siteWork(p, 2); w != 7 {
		t.Errorf("the next test's call has work %d, want 7", w)
	}
	if n := notProfiledFor(p, spanprofile.NotProfiledUnwound); n.Events != 1 {
		t.Errorf("unwound %+v, want 1 invocation", n)
	}
}

//go:noinline
func fatal(m *synthetic) {
	m.now++
	var wg sync.WaitGroup
	wg.Go(func() {})
	wg.Wait()
	runtime.Goexit()
}

// TestBusyEngineIsNotTaken: with tests in parallel (-parallel above 1), a
// test that starts while another holds the engine runs unprofiled.
func TestBusyEngineIsNotTaken(t *testing.T) {
	if !goroutineCheck {
		t.Skip("no goroutine identity on this architecture")
	}
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	withEngine(t, e)
	inA, bDone, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(aDone)
		runTest(func() {
			call(2, func() {
				m.now += 3
				close(inA)
				<-bDone
			})
		})
	}()
	<-inA
	runTest(func() { call(1, func() {}) })
	close(bDone)
	<-aDone
	p := e.stop()
	if n := notProfiledFor(p, spanprofile.NotProfiledOtherGoroutine); n.Events != 2 {
		t.Errorf("not profiled %+v, want the second test's 2 events", n)
	}
}

// threadMeasure is a synthetic measure of one goroutine, as a per-thread
// counter is of one thread: a read from another goroutine is out of order
// with the owner's, and is recorded.
type threadMeasure struct {
	g   uintptr
	m   *synthetic
	bad *int
}

func (t *threadMeasure) Read() uint64 {
	if getg() != t.g {
		*t.bad++
	}
	return t.m.now
}

// TestPerThreadMeasureReadOnItsThread (B9): where the measure counts one
// thread, the engine reads each holder's measure only on the holder's own
// goroutine. On the old code the run's end read the last test's measure
// from the goroutine that ended the run (a test binary's main), out of
// order with the test's readings: that is how the subtracted total went
// negative ("-301,142 ns in all") before it was clamped, and how the
// run's last strand went wrong after.
func TestPerThreadMeasureReadOnItsThread(t *testing.T) {
	if !goroutineCheck {
		t.Skip("no goroutine identity on this architecture")
	}
	m := &synthetic{}
	bad := 0
	open := func() (reader, func(), error) { return &threadMeasure{g: getg(), m: m, bad: &bad}, nil, nil }
	home, _, _ := open()
	e := newEngine(config{Measure: home, MeasureName: "synthetic", PerThread: true, Open: open}, unwindTable())
	withEngine(t, e)
	for range 3 {
		runTest(func() { call(2, func() { m.now += 7 }) })
	}
	m.now += 1000 // main, after the tests: no one's strand
	p := e.stop()
	if bad != 0 {
		t.Errorf("%d reads of a goroutine's measure from another goroutine", bad)
	}
	if p.Work != 21 || p.Subtracted < 0 {
		t.Errorf("work %d, subtracted %d; want 21 and not negative", p.Work, p.Subtracted)
	}
}

// forModes runs f in serial mode and in parallel accounting.
func forModes(t *testing.T, f func(t *testing.T, mode runMode)) {
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) { f(t, mode) })
	}
}
