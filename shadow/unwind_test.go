package shadow

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestDepthProbe: the frame-pointer depth works on the architectures that
// have gdepth, so that recovered panics are found (depth.go).
func TestDepthProbe(t *testing.T) {
	if goroutineCheck && depthOff != 0 {
		t.Fatal("gdepth does not measure the caller's depth on this build: unwound invocations go unnoticed")
	}
}

// unwindTable: site 0 a spawn, 1 mustPositive's call, 2 a later call, 3
// the helper that recovers.
func unwindTable() *siteTable {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "u.go", Line: 1, Func: "child", Caller: "test", Kind: spanprofile.KindSpawn},
		{File: "u.go", Line: 2, Func: "mustPositive", Caller: "helper", Kind: spanprofile.KindCall},
		{File: "u.go", Line: 3, Func: "sum", Caller: "test", Kind: spanprofile.KindCall},
		{File: "u.go", Line: 4, Func: "helper", Caller: "test", Kind: spanprofile.KindCall},
	})
	return tab
}

//go:noinline
func mustPositive(m *synthetic, x int) int {
	m.now += 5
	if x < 0 {
		panic("negative")
	}
	return x
}

// panicky makes an instrumented call that panics, as rewritten code does.
//
//go:noinline
func panicky(m *synthetic) {
	CallBegin(1)
	mustPositive(m, -1)
	CallEnd()
}

// recovering recovers the panic of panicky outside the call it unwound
// (gonum's panics(func(){...}), testify's assert.Panics).
//
//go:noinline
func recovering(m *synthetic) (r any) {
	defer func() { r = recover() }()
	panicky(m)
	return nil
}

// siteWork returns the work on work (top-call-site) of site i and the
// root's local work.
func siteWork(p *spanprofile.Profile, i int) (site, root int64) {
	for _, s := range p.BySite() {
		if s.Index == i {
			site = s.OnWork.TopCallSite.Work
		}
	}
	return site, p.Root().OnWork.Local.Work
}

// TestRecoveredPanicClosesTheCall (B1): a panic recovered outside the
// instrumented call it unwound leaves the invocation open; the next event,
// from a function above it, closes it, and what runs afterwards is not
// charged to it. On the old code the later call and the root's work were
// charged to mustPositive's call (its work read 123, the root's 0).
func TestRecoveredPanicClosesTheCall(t *testing.T) {
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	withEngine(t, e)
	if recovering(m) == nil {
		t.Fatal("no panic")
	}
	m.now += 100 // the panic and the recover: the strand ends at the next event
	CallBegin(2)
	m.now += 7
	CallEnd()
	m.now += 11
	p := e.stop()
	if w, root := siteWork(p, 1); w != 105 || root != 11 {
		t.Errorf("mustPositive's call has work %d and the root %d; want 105 (its strand up to the next event) and 11", w, root)
	}
	if w, _ := siteWork(p, 2); w != 7 {
		t.Errorf("the later call has work %d, want 7", w)
	}
	if p.Work != 123 {
		t.Errorf("work %d, want 123", p.Work)
	}
}

// helperCall calls recovering inside an instrumented call of its own: the
// CallEnd of that call finds mustPositive's invocation above its own,
// closes it and ends the right one.
//
//go:noinline
func helperCall(m *synthetic) {
	CallBegin(3)
	recovering(m)
	m.now += 3
	CallEnd()
}

// TestRecoveredPanicEndsTheRightCall (B1): the end of the call around the
// recover ends that call, not the one the panic left open.
func TestRecoveredPanicEndsTheRightCall(t *testing.T) {
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	withEngine(t, e)
	helperCall(m)
	m.now += 11
	p := e.stop()
	if w, root := siteWork(p, 3); w != 8 || root != 11 {
		t.Errorf("the helper's call has work %d and the root %d; want 8 and 11", w, root)
	}
	if w, _ := siteWork(p, 1); w != 8 {
		t.Errorf("mustPositive's call has work %d, want 8 (its strand up to the helper's end)", w)
	}
}

// spawnPanics spawns a child that panics: the inline child and its spawn
// are unwound.
//
//go:noinline
func spawnPanics(m *synthetic) (r any) {
	defer func() { r = recover() }()
	var obj wgStub
	spawn(0, unsafe.Pointer(&obj), func() { panicky(m) })
	return nil
}

// TestRecoveredPanicClosesTheSpawn (B1): a panic out of an inline child,
// recovered above the spawn, closes the child and its task.
func TestRecoveredPanicClosesTheSpawn(t *testing.T) {
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	withEngine(t, e)
	if spawnPanics(m) == nil {
		t.Fatal("no panic")
	}
	CallBegin(2)
	m.now += 7
	CallEnd()
	m.now += 11
	p := e.stop()
	if w, root := siteWork(p, 2); w != 7 || root != 11 {
		t.Errorf("the later call has work %d and the root %d; want 7 and 11", w, root)
	}
	// The child never returned: its path is a sink of its own.
	if p.Work != 23 || p.Span != 18 {
		t.Errorf("work %d, span %d; want 23 and 18", p.Work, p.Span)
	}
}

// consistent reports what in p breaks the invariants of a profile: no
// span above its work, in the whole run and at any context.
func consistent(p *spanprofile.Profile) []string {
	var bad []string
	if p.Span > p.Work {
		bad = append(bad, fmt.Sprintf("span %d above work %d", p.Span, p.Work))
	}
	for i, c := range p.Contexts {
		for _, tr := range []spanprofile.Triple{c.OnWork.TopCallSite, c.OnWork.TopCaller, c.OnWork.Local, c.OnSpan.TopCallSite, c.OnSpan.TopCaller} {
			if tr.Span > tr.Work {
				bad = append(bad, fmt.Sprintf("context %d %v: span %d above work %d", i, c.Stack, tr.Span, tr.Work))
			}
		}
	}
	return bad
}

// TestWatchdogStopIsConsistent (B7): the watchdog stops a run whose inline
// child is blocked inside an instrumented call. The blocked time is no
// strand's, and the enclosing call, which waited for the child (the serial
// elision), holds the child's span: on the old code it read T1 6, T∞ 1,
// below the span of the spawn inside it (5).
func TestWatchdogStopIsConsistent(t *testing.T) {
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, unwindTable())
	e.CallBegin(3) // the enclosing call
	m.now += 1
	e.SpawnBegin(0) // the inline child
	m.now += 5
	e.CallBegin(1) // where it blocks for good
	m.now += 5_000_000_000
	e.freeze() // the watchdog
	p := e.stop()
	if p.Work != 6 || p.Span != 6 {
		t.Errorf("work %d, span %d; want 6 and 6: the blocked time is no strand's", p.Work, p.Span)
	}
	var call, spawn spanprofile.Triple
	for _, s := range p.BySite() {
		switch s.Index {
		case 3:
			call = s.OnWork.TopCallSite
		case 0:
			spawn = s.OnWork.TopCallSite
		}
	}
	if call.Work != 6 || call.Span != 6 || spawn.Span != 5 {
		t.Errorf("the enclosing call: T1 %d, T∞ %d; the spawn in it: T∞ %d; want 6, 6 and 5", call.Work, call.Span, spawn.Span)
	}
	if bad := consistent(p); len(bad) > 0 {
		t.Error(bad)
	}
}

// TestStopJoinsRunningGoroutines (B7): in parallel accounting a run that
// ends while a goroutine spawned inside a call still runs credits the
// goroutine's work to that call, and the call's span includes the
// goroutine's path up to its last event.
func TestStopJoinsRunningGoroutines(t *testing.T) {
	// A measure per goroutine, as a counter per thread.
	var child synthetic
	open := func() (reader, func(), error) { return &child, nil, nil }
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: parallelMode, PerThread: true, Open: open}, unwindTable())
	e.parCallBegin(3, noDepth)
	m.now += 1
	c, _ := e.parSpawn(0, true, noDepth)
	started := make(chan struct{})
	go func() {
		e.startG(c)
		child.now += 5
		e.parCallBegin(1, noDepth) // and never returns
		close(started)
	}()
	<-started
	m.now += 2
	p := e.stop()
	if p.Work != 8 || p.Span != 6 {
		t.Errorf("work %d, span %d; want 8 and 6", p.Work, p.Span)
	}
	for _, s := range p.BySite() {
		if s.Index == 3 && (s.OnWork.TopCallSite.Work != 8 || s.OnWork.TopCallSite.Span != 6) {
			t.Errorf("the call around the goroutine: T1 %d, T∞ %d; want 8 and 6", s.OnWork.TopCallSite.Work, s.OnWork.TopCallSite.Span)
		}
	}
	if bad := consistent(p); len(bad) > 0 {
		t.Error(bad)
	}
}

// TestStopWhileBuffering: a run stops while a goroutine spawned for real
// buffers calls as fast as it can. Stop takes the calls the goroutine had
// published, and none after; the goroutine, which goes on buffering and
// then ends, adds nothing to the profile, which stays consistent. Under
// the race detector the test checks that stop reads only what the
// goroutine published (callBuf).
func TestStopWhileBuffering(t *testing.T) {
	for range 20 {
		m := &goSynthetic{n: map[uintptr]uint64{}}
		e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: parallelMode}, unwindTable())
		c, _ := e.parSpawn(0, true, noDepth)
		var pairs atomic.Int64
		stopped := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.startG(c)
			for i := 0; ; i++ {
				m.add(1)
				e.parCallBegin(3, noDepth)
				m.add(1)
				e.parCallEnd(noDepth)
				pairs.Add(1)
				select {
				case <-stopped:
					if i%(3*callBufSize) == 0 {
						e.endG(c, nil)
						return
					}
				default:
				}
			}
		}()
		for pairs.Load() < 10 {
			runtime.Gosched()
		}
		p := e.stop()
		close(stopped)
		<-done
		n := pairs.Load()
		var calls int64
		for _, s := range p.BySite() {
			if s.Index == 3 {
				calls = s.OnWork.TopCallSite.Count
			}
		}
		if calls < 10 || calls > n {
			t.Fatalf("the profile counts %d calls of the goroutine, which made %d, at least 10 before the stop", calls, n)
		}
		if p.Work < 2*calls-1 || p.Work > 2*n {
			t.Fatalf("work %d for %d calls taken of %d made, each of 2 units", p.Work, calls, n)
		}
		if bad := consistent(p); len(bad) > 0 {
			t.Fatal(bad)
		}
	}
}
