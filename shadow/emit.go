package shadow

import (
	"sync"
	"unsafe"
)

// The interface of generated code. The rewriter turns each fork/join idiom
// into a call of a typed entry point of this package, in one file per idiom
// (emit_*.go; doc.go has the map), so that rewritten files need no unsafe
// import and each idiom's semantics live in one place. Each entry point
// runs a spawned child inline (the serial elision) in serial mode, or on a
// goroutine of its own in parallel accounting, and keeps the program's own
// synchronization objects in the state the original code would leave them
// in.
//
// Every entry point is a real function, never inlined, that first measures
// the depth of its caller, the function that makes the event (depth.go),
// and passes it to the helpers of this file: child (a spawn's child, the
// one place that decides how it runs and tells the engine), waiting (a
// join) and the call's begin and end.

// runHow is how a spawn's child runs.
type runHow uint8

const (
	runAsWritten runHow = iota // no run, or a goroutine the run does not profile: what the program did
	runGoroutine               // on a goroutine of its own, in parallel accounting
	runElided                  // inline, as a plain call: elision mode, no events
	runSerial                  // inline, on the engine's unlocked path: serial mode
	runLocked                  // inline, on the engine's locked path: parallel accounting
	runParallel                // parallel accounting, where beginChild decides under the engine's lock
)

// elision is set by start in elision mode: every spawn runs as a plain call
// and nothing is measured, so that the cost of the serial elision itself can
// be timed with the same binary.
var elision bool

// spawnHow returns how a spawn at site runs on goroutine g, the calling
// one: runAsWritten, runElided, runSerial, or runParallel. A spawn at a
// Goroutine site in serial mode turns parallel accounting on.
func spawnHow(g uintptr, site SiteID) (*engine, runHow) {
	if e := begin(g, site); e != nil {
		if int(site) >= len(e.goSite) {
			e.growSites()
		}
		if int(site) >= len(e.goSite) || !e.goSite[site] {
			return e, runSerial
		}
		e.enablePar()
		return e, runParallel
	}
	if e := parEngine(); e != nil {
		return e, runParallel
	}
	if elision && current == nil && !registry.goroutine(site) {
		return nil, runElided
	}
	return nil, runAsWritten
}

// A child is the child of one spawn, from the spawn to its return. An
// idiom's entry point begins it (spawnChild, beginChild) and then runs it
// in one of three ways, whatever the mode:
//
//	inline:               the function, then end
//	on its own goroutine: start and a deferred exit around the function
//	                      on the new goroutine, resume on the spawning one
//	as written:           what the program did
//
// Which one, and what the engine is told in serial mode and in parallel
// accounting, is decided here only.
//
// A child has at most four fields, of a word each, so that the compiler
// keeps it in registers (a larger struct goes through memory, which cost
// serial mode's spawns some 10%).
type child struct {
	e      *engine
	st     *gstate // runGoroutine: the child's state
	parent *gstate // runGoroutine: the spawning goroutine's, which resume restarts
	how    runHow
}

// Where a child may run, as its idiom allows.
type childPlace uint8

const (
	anywhere     childPlace = iota // inline or on a goroutine of its own, as the mode and the site say
	ownGoroutine                   // on a goroutine of its own in parallel accounting (errgroup's TryGo started one)
	here                           // inline in every mode (the last function of parlib.Do)
)

// serialChild returns the engine if a spawn at site by goroutine g's
// function at depth d takes serial mode's common case, which the spawning
// entry points write out around their inline child: the goroutine that
// holds the engine, no parallel accounting, a site that spawns no
// goroutine, a depth within the stack's cap. Otherwise it returns nil,
// and the entry point takes the general path, spawnChild: its call, and
// spawnHow's and begin's, and the child's end through child.end, cost
// about 90 instructions a node of profiled fib (BenchmarkFibAPI,
// callgrind). The child's end takes the engine returned here, as
// child.end takes the child's.
func serialChild(g uintptr, site SiteID, d uintptr) *engine {
	if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() &&
		int(site) < len(e.goSite) && !e.goSite[site] && d <= stackCap {
		return e
	}
	return nil
}

// spawnChild begins the child of a spawn at site by goroutine g's function
// at depth d.
func spawnChild(g, d uintptr, site SiteID) child {
	e, how := spawnHow(g, site)
	switch how {
	case runSerial:
		if d > stackCap { // inline, the child would outgrow the stack (stacklimit.go)
			e.tooDeep(site, d)
		}
		// beginChild, written out: this is every spawn in serial mode.
		e.spawnBeginAt(site, d)
		return child{e: e, how: runSerial}
	case runParallel:
		// Here too, one frame less above the engine's work on a new
		// goroutine's stack (see newG).
		st, inline := e.parSpawn(site, false, d)
		return parChild(e, st, inline)
	}
	return beginChild(e, how, site, d, anywhere)
}

// beginChild begins the child of a spawn at site that spawnHow said runs
// as how, by the function at depth d, where the idiom allows.
func beginChild(e *engine, how runHow, site SiteID, d uintptr, where childPlace) child {
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
	case runParallel:
		if where == here {
			if e.parSpawnInline(site, d) {
				return child{e: e, how: runLocked}
			}
			return child{}
		}
		st, inline := e.parSpawn(site, where == ownGoroutine, d)
		return parChild(e, st, inline)
	}
	return child{e: e, how: how}
}

// parChild is the child of a spawn that parSpawn took: on a goroutine of
// its own with state st, or inline, or run as written.
func parChild(e *engine, st *gstate, inline bool) child {
	switch {
	case st != nil:
		// The parent, read before the child's goroutine starts: once
		// it has ended, its state may be reused.
		return child{e: e, st: st, parent: st.parent, how: runGoroutine}
	case inline:
		return child{e: e, how: runLocked}
	}
	return child{} // not a profiled goroutine (gate.go)
}

// inline reports whether the child runs inline: the spawning goroutine
// runs it, then calls end.
func (c child) inline() bool { return c.how >= runElided && c.how <= runLocked }

// own reports whether the child runs on a goroutine of its own: start,
// exit and resume.
func (c child) own() bool { return c.how == runGoroutine }

// end marks the return of a child that ran inline, to the function at
// depth d that spawned it; the return signals obj, or nothing if obj is
// nil.
func (c child) end(obj unsafe.Pointer, d uintptr) {
	switch c.how {
	case runSerial:
		c.e.spawnEndAt(obj, d)
	case runLocked:
		c.e.parSpawnEnd(obj, d)
	}
}

// endGlue is end where the spawning function's next event follows with no
// code between (Glued).
func (c child) endGlue(obj unsafe.Pointer, d uintptr) {
	switch c.how {
	case runSerial:
		c.e.spawnEndGlueAt(obj, d)
	case runLocked:
		c.e.parSpawnEnd(obj, d)
	}
}

// start runs first on the goroutine of a child that runs on its own (its
// state st, from child.st), and returns st, whose exit runs last.
//
// The goroutine's function is one of the state's (makeRuns), and defers
// exit on it: that function runs the whole child, and every byte of its
// frame is one less for the engine's work below it (see newG). A closure
// made per spawn that captured the child and deferred an exit on the
// engine and the state took 128 bytes for GroupGo and 96 for Go.
func (st *gstate) start() *gstate {
	st.eng.startG(st)
	return st
}

// makeRuns makes the functions that run the goroutine of a child spawned
// for real with state st (gstate.run): st.fn or st.fnErr, then the
// child's end, which signals st.obj (for wg.Go, its WaitGroup, before the
// Done). They are closures rather than method values, whose wrapper would
// be one frame more on the goroutine's stack.
func makeRuns(st *gstate) {
	st.run = func() {
		f, obj := st.fn, st.obj
		st.fn, st.obj = nil, nil // not kept alive by a state waiting for reuse
		defer st.start().exit(obj)
		f()
	}
	st.runErr = func() error {
		f, obj := st.fnErr, st.obj
		st.fnErr, st.obj = nil, nil
		defer st.start().exit(obj)
		return f()
	}
	st.runWG = func() {
		f, obj := st.fn, st.obj
		st.fn, st.obj = nil, nil
		defer (*sync.WaitGroup)(obj).Done()
		defer st.start().exit(obj) // before Done: the wait must find it
		f()
	}
}

// exit runs last on the child's own goroutine, deferred so that a panic or
// runtime.Goexit still ends it; the child's return signals obj, or nothing
// if obj is nil.
func (st *gstate) exit(obj unsafe.Pointer) { st.eng.endG(st, obj) }

// resume runs on the spawning goroutine once it has started the child's:
// the cost of starting a goroutine is the burden's (parallel.go), not a
// strand's.
func (c child) resume() { c.e.resume(c.parent) }

// resumeGlued is resume for a glued spawn.
func (c child) resumeGlued() { c.e.resumeGlued(c.parent) }

// resumeAs is resume, or resumeGlued if glue.
func (c child) resumeAs(glue bool) {
	if glue {
		c.resumeGlued()
	} else {
		c.resume()
	}
}

// waiting is a wait on a join object (wg.Wait, errgroup's Wait, parlib's
// Sync), from before it blocks to its return: in parallel accounting the
// measure is read before the wait blocks, so that the time blocked is no
// strand's, and end takes the join.
type waiting struct {
	e      *engine // parallel accounting's engine, or nil
	before uint64  // the measure before the wait (parallel accounting)
	g, d   uintptr // the waiting goroutine, and its function's depth
}

// beginWait begins a wait by goroutine g's function at depth d.
func beginWait(g, d uintptr) waiting {
	if e := parEngine(); e != nil {
		return waiting{e: e, before: e.beforeWait(), g: g, d: d}
	}
	return waiting{g: g, d: d}
}

// end marks the return of the wait, on obj.
func (w waiting) end(obj unsafe.Pointer) {
	if w.e != nil {
		w.e.parWait(obj, w.before, w.d)
	} else if e := current; e != nil && w.g == e.owner.Load() && !e.par.on.Load() {
		e.waitAt(obj, w.d) // begin's common case, as in beginCall
	} else if e := begin(w.g, -1); e != nil {
		e.waitAt(obj, w.d)
	}
}

// doneAt takes a contribution to obj from goroutine g's function at depth
// d (wg.Done, a negative wg.Add).
func doneAt(g, d uintptr, obj unsafe.Pointer) {
	if e := begin(g, -1); e != nil {
		e.doneAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parDone(obj, d)
	}
}

// beginCall takes the start of an instrumented call at site from goroutine
// g's function at depth d, and returns the engine that took it, or nil.
//
// It and endCall test begin's common case first, written out: begin does
// not inline (a call of foreign makes it too complex), and its call cost
// 15 instructions an event (BenchmarkEnterLeaveAPI, callgrind).
func beginCall(g, d uintptr, site SiteID) *engine {
	if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
		e.callBegin(site, d)
		return e
	}
	if e := begin(g, site); e != nil {
		e.callBegin(site, d)
		return e
	}
	if e := parEngine(); e != nil {
		e.parCallBegin(site, d)
		return e
	}
	return nil
}

// endCall takes the return of the innermost instrumented call from
// goroutine g's function at depth d.
func endCall(g, d uintptr) {
	if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
		e.callEndAt(d)
		return
	}
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
}
