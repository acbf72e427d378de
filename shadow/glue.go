package shadow

import (
	"sync"
	"unsafe"
)

// Events with no code between them.
//
// Every serial event reads the measure twice (engine.restart): once to end
// the program's strand, once to start the next. Where the rewriter can see
// that no code of the program runs between two events, the second read of
// the first and the first read of the second measure only the engine
// itself and a few instructions of glue (a return, an assignment to a
// variable), so it asks for one of two cheaper forms (docs/rewriting.md,
// "Events with nothing between"):
//
//   - A glued end (LeaveGlue, CallEndGlue) ends an instrumented call that a
//     wait follows directly: y := f(x); wg.Wait(). It leaves the measure
//     unread, and the wait's strand, which would be empty, ends where the
//     call's did: two reads of ten per node of fib. The event stream is
//     that of the unglued form with an empty strand between the two.
//
//   - A last Done (WaitGroupDoneLast) is a defer wg.Done() that is the first
//     statement of a spawned function literal run by a go statement: it
//     runs last, right before the child's end, whose return carries no join
//     object of its own. Serial mode then takes no event for it at all: the
//     child's end contributes to wg, with the value the Done would have
//     contributed (the same path, the same partial measurements of the
//     child's invocation: done's loop over the task's frames is finish's of
//     the one frame) had the strand between them been empty. One event of
//     three per spawn of go func() { defer wg.Done(); f() }().
//
//   - A glued spawn (Glued(site) as the site of Go, WaitGroupGo or
//     GroupGo) is followed directly by the begin of an instrumented call:
//     go func() { defer wg.Done(); qsort(a[:p]) }(); qsort(a[p:]), or
//     g.Go(...); y := fib(n-2). Its child's end, inline, leaves the
//     measure unread as a glued call end does, and the call's begin reads
//     it once for both: two more reads per fib node.
//
// Parallel accounting takes a last Done as a plain Done. A goroutine
// spawned for real, which buffers its calls with one reading each
// (parallel.go), takes the glued spawn and the glued call end with one
// reading fewer each: its call's begin takes the reading that resumed it
// after the spawn (resumeGlued), and the wait after a glued end takes the
// end's reading as the one before it blocks (beforeWait): two readings
// fewer per node of fib spawned for real (TestParallelGlueReadsOnce). The
// goroutine that holds the engine takes its calls under the lock and
// reads as before. A glue that its next event does not take (a panic
// between) is dropped at the goroutine's next turn at the lock.

// callEndGlueAt is callEndAt that leaves the measure unread: the
// goroutine's next event comes with no code between (glued).
func (e *engine) callEndGlueAt(d uintptr) {
	st := e.cur
	e.tick()
	e.unwindTo(d)
	if n := len(st.frames) - 1; n > st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d) {
		e.callEnd()
	} else {
		e.note(whyUnmatched, 0, -1)
	}
	if e.twoReads {
		st.glued = true
	}
	// With one read per event the next strand starts at this event's read
	// anyway, less the calibrated overhead: there is nothing to glue.
}

// doneLastAt takes a Done on obj that is the child's last action, by the
// function at depth d: the child's end will contribute to obj. Where the
// innermost frame is not the child's (a recovered panic left invocations
// open) or the child already has one, it takes it as a plain Done.
func (e *engine) doneLastAt(obj unsafe.Pointer, d uintptr) {
	st := e.cur
	n := len(st.frames) - 1
	tk := &st.tasks[len(st.tasks)-1]
	if len(st.tasks) > 1 && n == tk.base && n >= st.floor && st.frames[n].issuer <= d && tk.done == nil {
		tk.done = obj
		return
	}
	e.doneAt(obj, d)
}

// glueBit marks a spawn's site as glued (Glued): no site table comes
// near 2^30 sites.
const glueBit SiteID = 1 << 30

// Glued marks spawn site s as followed directly by the begin of an
// instrumented call; Go, WaitGroupGo and GroupGo take it as their site.
func Glued(s SiteID) SiteID { return s | glueBit }

// unglue splits a spawn's site from its glue mark.
func unglue(s SiteID) (SiteID, bool) { return s &^ glueBit, s&glueBit != 0 }

// spawnEndGlueAt is spawnEndAt that leaves the measure unread: the
// goroutine's next event comes with no code between (glued).
func (e *engine) spawnEndGlueAt(obj unsafe.Pointer, d uintptr) {
	st := e.cur
	e.tick()
	e.unwindTo(d)
	if n := len(st.frames) - 1; len(st.tasks) > 1 && n == st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d) {
		e.spawnEndSerial(obj)
	} else {
		e.note(whyUnmatched, 0, -1)
	}
	if e.twoReads {
		st.glued = true
	}
}

// LeaveGlue is Leave where the goroutine's next event follows with no code
// between: the rewriter writes it before a wait statement.
//
//go:noinline
func LeaveGlue[T any](t Entered, v T) T {
	if t.e != nil {
		g, d := gdepth()
		// endCallGlue's common case, written out as Enter's is:
		// callEndGlueAt, out of line, inlines tick and callEnd, which
		// endCallGlue's inlined copy of it calls.
		if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
			e.callEndGlueAt(d | depthOff)
		} else {
			endCallGlue(g, d|depthOff)
		}
	}
	return v
}

// CallEndGlue is CallEnd where the goroutine's next event follows with no
// code between.
//
//go:noinline
func CallEndGlue() {
	g, d := gdepth()
	endCallGlue(g, d|depthOff)
}

// endCallGlue is endCall for the glued ends.
func endCallGlue(g, d uintptr) {
	if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
		e.callEndGlueAt(d) // begin's common case, as in endCall
		return
	}
	if e := begin(g, -1); e != nil {
		e.callEndGlueAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEndGlue(d)
	}
}

// WaitGroupDoneLast runs wg.Done(), deferred first in a function literal
// that a go statement spawns, or the last statement of one that defers
// nothing: the child's last action.
//
//go:noinline
func WaitGroupDoneLast(wg *sync.WaitGroup) {
	g, d := gdepth()
	if e := begin(g, -1); e != nil {
		e.doneLastAt(unsafe.Pointer(wg), d|depthOff)
	} else if e := parEngine(); e != nil {
		e.parDoneLast(unsafe.Pointer(wg), d|depthOff)
	}
	wg.Done()
}
