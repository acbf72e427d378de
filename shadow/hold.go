package shadow

import (
	"runtime"
	"sync"
)

// Holding the engine in a test binary.
//
// The testing package runs each test, subtest and benchmark on a goroutine
// of its own, and only one of them at a time runs while the others wait
// (serial mode sets -test.parallel to 1): the one running is the one whose
// events the engine takes. No goroutine takes it over by itself: it is
// handed from goroutine to goroutine at the points where the testing
// package does the same, which the rewriter marks in the test's code:
//
//	func TestX(t *testing.T) {           defer EndTest(BeginTest()) first
//	t.Run(name, f)                        TestRun(S, t.Run, name, f)  (b.Run too)
//	t.Parallel()                          TestParallel(t.Parallel)
//	f.Fuzz(func(t *testing.T, ...) {...}) TestFuzz(S, f.Fuzz, ...), the function beginning as a test
//
// BeginTest makes the calling goroutine the holder if the engine is free:
// held by the goroutine that started the run (blocked in m.Run), by no one
// (between tests), or by a test blocked in t.Run, whose subtest the caller
// is. Otherwise (tests that run in parallel with -parallel above 1) the
// caller's events are not profiled. EndTest closes what the test left open
// (a panic, t.Fatal's runtime.Goexit) and gives the engine back: to the
// test blocked in t.Run, or to no one.
//
// TestRun is an instrumented call of the subtest, at the t.Run site: the
// parent's invocation stays open while the subtest runs on its goroutine,
// with the parent's shadow stack below its own (the floor, which the
// subtest's events never end or unwind), so its spawns and calls are the
// call's children, and the time the parent spends blocked in t.Run is no
// strand's. When t.Run returns, the parent holds the engine again, taking
// it back from a subtest that still holds it.
//
// TestParallel gives the engine back while t.Parallel waits, and takes it
// again, when free, once the test resumes (after its parent's function has
// returned, one test at a time).
//
// The goroutine that started the run holds the engine at first (package
// initialization, TestMain before m.Run) and takes it back at its first
// event after the tests (examples, TestMain after m.Run).
//
// In parallel accounting the holder's state is the root state, found by
// goroutine (parallel.go): a hand-over moves it. Goroutines that no one
// handed the engine to are not profiled in parallel mode either: their
// events are counted and ignored, as in serial mode; their own spawns run
// as written.

// hold is one goroutine's turn at holding the engine.
type hold struct {
	g    uintptr
	id   string // the goroutine's number, for the watchdog
	prev *hold  // who gets the engine back
	// floor is the number of the root state's frames that belong to prev.
	floor int
	// waiting says the goroutine is blocked in t.Run (TestRun), so that
	// the subtest may take the engine.
	waiting bool
	// paused says the test gave the engine back in t.Parallel.
	paused bool
	// m is the measure of the goroutine's thread where the measure counts
	// one thread (nil: the shared one), and closeM closes it.
	m      reader
	closeM func()
}

// handMu serializes hand-overs; the holder's events take no lock. Lock
// order: handMu, then the engine's parallel lock.
var handMu sync.Mutex

// TestHold is a test goroutine's claim on the engine, from BeginTest.
type TestHold struct {
	e *engine
	h *hold
}

// BeginTest makes the calling test goroutine hold the engine, if it is free
// (see above). The rewriter puts defer EndTest(BeginTest()) first in every
// test, benchmark and fuzz function, and in the subtest TestRun starts.
func BeginTest() *TestHold {
	e := current
	if e == nil {
		return nil
	}
	g := getg()
	if g == e.owner.Load() {
		return nil // it holds the engine already (a test function called as a subtest)
	}
	h := &hold{g: g}
	handMu.Lock()
	e.takeFree(h)
	handMu.Unlock()
	return &TestHold{e, h}
}

// EndTest ends the test that BeginTest began: if it holds the engine, what
// it left open is closed and the engine goes back (see above).
func EndTest(t *TestHold) {
	if t == nil {
		return
	}
	handMu.Lock()
	defer handMu.Unlock()
	if t.e.hold == t.h && t.e == current {
		t.e.release(t.h, true)
	}
}

// TestRun runs run(name, f), a t.Run or b.Run at site, as an instrumented
// call whose subtest holds the engine while it runs (see above).
//
//go:noinline
func TestRun[T any](site SiteID, run func(string, func(T)) bool, name string, f func(T)) bool {
	g, d := gdepth()
	d |= depthOff
	e, h := waitRun(g, site, d)
	ok := run(name, func(t T) {
		defer EndTest(BeginTest())
		f(t)
	})
	if h != nil {
		e.endRun(h, d)
	}
	return ok
}

// TestFuzz runs fuzz(ff), a fuzz target's f.Fuzz at site, as TestRun runs
// t.Run: each input of the seed corpus runs ff on a goroutine of its own,
// and the rewriter has put defer EndTest(BeginTest()) first in ff.
//
//go:noinline
func TestFuzz(site SiteID, fuzz func(any), ff any) {
	g, d := gdepth()
	d |= depthOff
	e, h := waitRun(g, site, d)
	fuzz(ff)
	if h != nil {
		e.endRun(h, d)
	}
}

// waitRun begins the call of a subtest at site on goroutine g, if g holds
// the engine, and marks g waiting in t.Run.
func waitRun(g uintptr, site SiteID, d uintptr) (*engine, *hold) {
	e := current
	if e == nil {
		return nil, nil
	}
	handMu.Lock()
	defer handMu.Unlock()
	if e != current || e.hold.g != g || e.owner.Load() != g || e.stopped {
		return nil, nil
	}
	locked := e.lockPar()
	e.cur = e.root
	e.tick()
	e.unwindTo(d)
	e.push(site, d)
	e.hold.waiting = true
	e.unlockPar(locked)
	return e, e.hold
}

// endRun ends the call of a subtest that waitRun began, on the goroutine
// that began it, which holds the engine again.
func (e *engine) endRun(h *hold, d uintptr) {
	handMu.Lock()
	defer handMu.Unlock()
	h.waiting = false
	if e != current || e.stopped {
		return
	}
	for e.hold != h {
		if e.hold.prev == nil {
			return // h is no longer in the chain: nothing to end
		}
		// A subtest that still holds the engine (paused without giving
		// it back) ends here; its later events are not profiled.
		e.release(e.hold, false)
	}
	locked := e.lockPar()
	e.setHolder(h)
	e.root.last = e.root.m.Read() // the time blocked in t.Run is no strand's
	e.cur = e.root
	e.tick()
	if e.endsCall(d) {
		e.callEnd()
	} else {
		e.note(whyUnmatched, 0, -1)
	}
	e.restart()
	e.unlockPar(locked)
}

// TestParallel runs parallel, a test's t.Parallel, giving the engine back
// while it waits and taking it again, when free, once the test resumes.
func TestParallel(parallel func()) {
	e := current
	var h *hold
	if e != nil {
		g := getg()
		handMu.Lock()
		if e.hold.g == g && e.owner.Load() == g && e.hold.prev != nil {
			h = e.hold
			e.release(h, true)
			h.paused = true
		}
		handMu.Unlock()
	}
	parallel()
	if h != nil {
		handMu.Lock()
		if e == current && h.paused {
			h.paused = false
			e.takeFree(h)
		}
		handMu.Unlock()
	}
}

// takeFree makes h's goroutine, the calling one, hold the engine if it is
// free: held by the goroutine that started the run or by no one, or by a
// test blocked in t.Run. Called with handMu held.
func (e *engine) takeFree(h *hold) {
	cur := e.hold
	if cur != e.homeHold && !cur.waiting || e.stopped {
		return // another test holds it: this one runs unprofiled
	}
	h.prev = cur
	h.id = goroutineID()
	if e.cfg.PerThread && e.cfg.Open != nil {
		// A measure per thread counts the thread that opened it: the
		// holder keeps its thread for the rest of its life and counts
		// with a measure of its own, on the CPU the run keeps its
		// strands on.
		runtime.LockOSThread()
		if m, closeM, err := e.cfg.Open(); err == nil {
			h.m, h.closeM = m, closeM
			pinned = pinThread(pinned)
		} else {
			runtime.UnlockOSThread()
			e.notProf.counterFailed.Add(1)
		}
	}
	locked := e.lockPar()
	h.floor = len(e.root.frames)
	e.hold = h
	e.setHolder(h)
	e.root.last = e.root.m.Read()
	e.moved = true
	e.unlockPar(locked)
}

// release ends h's turn, on h's goroutine if mine (else on the one taking
// the engine back from it): what h left open above its floor is closed,
// and the engine goes to h.prev if it waits in t.Run, else to no one (the
// goroutine that started the run takes it back at its next event). Called
// with handMu held, with e.hold == h.
func (e *engine) release(h *hold, mine bool) {
	locked := e.lockPar()
	e.cur = e.root
	if mine && !e.stopped {
		e.tick() // h's own measure, on h's own thread
	}
	for len(e.root.frames) > h.floor && len(e.root.frames) > 1 {
		e.closeTop()
		e.unwound++
	}
	e.hold = h.prev
	if h.closeM != nil {
		h.closeM() // the thread stays locked: it was pinned to one CPU
		h.closeM = nil
	}
	if e.hold.waiting {
		e.setHolder(e.hold)
	} else {
		e.setHolder(nil)
	}
	e.unlockPar(locked)
}

// retakeHome gives the engine back to the goroutine that started the run,
// the calling one, if no one holds it.
func (e *engine) retakeHome() bool {
	handMu.Lock()
	defer handMu.Unlock()
	if e.hold != e.homeHold || e.owner.Load() != 0 || e.stopped {
		return false
	}
	locked := e.lockPar()
	e.setHolder(e.homeHold)
	e.root.last = e.root.m.Read()
	e.unlockPar(locked)
	return true
}

// setHolder makes h's goroutine the one whose events the root state takes
// (nil: no one's), with h's measure. Called with handMu and, in parallel
// accounting, the engine's lock held.
func (e *engine) setHolder(h *hold) {
	if e.root.g != 0 {
		e.par.byG.del(e.root.g, e.root)
	}
	if h == nil {
		e.root.g = 0
		e.owner.Store(0)
		watched.Store(&e.homeHold.id)
		return
	}
	e.root.g = h.g
	e.root.floor = h.floor
	if h.m != nil {
		e.root.m = h.m
	} else if h == e.homeHold || !e.cfg.PerThread {
		e.root.m = e.homeHold.m
	}
	if e.par.on.Load() {
		e.par.byG.put(h.g, e.root)
	}
	e.owner.Store(h.g)
	if h.id != "" {
		watched.Store(&h.id)
	}
}

// lockPar takes the engine's lock where parallel accounting is on, and
// says whether it did, for unlockPar.
func (e *engine) lockPar() bool {
	if e.par.on.Load() {
		e.par.mu.Lock()
		return true
	}
	return false
}

func (e *engine) unlockPar(locked bool) {
	if locked {
		e.par.mu.Unlock()
	}
}
