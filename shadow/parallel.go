package shadow

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Parallel accounting (docs/modes.md, TaskProf §3): goroutines run for
// real, each with a shadow state of its own (gstate), found without a lock
// through an anchor on the goroutine's own stack (anchor.go) or in a
// table keyed by goroutine (gtable.go), and every event but a call takes
// the engine's lock (calls wait in a buffer of the goroutine's: callBuf,
// below). A spawned goroutine starts from a copy of its parent's span,
// burdened span and path profile at the spawn (an O(1) share of the
// persistent prof) and of its parent's list of open sites (activity.go,
// shared in O(1) too), so that its invocations fold and count as
// top-call-site and top-caller exactly as they would inline. It hands its
// final value to its join object under the lock, and a wait takes the
// longest of the values there, as serial mode does. With one goroutine
// running at a time the computation is the serial one event for event; the
// oracle test checks it against the brute-force DAG with real goroutines.
//
// Parallel accounting is on for the whole run in parallel mode, and from the
// first spawn at a Goroutine site (one the analyzer found not elidable) in
// serial mode: that child runs as a real goroutine, every other spawn still
// inline.
//
// A strand's length is what the measure advanced between the goroutine's
// two events. The measure is read before the lock is taken and again after
// it is released, so that neither waiting for the lock nor the engine's own
// work counts, and before a wait blocks, so that the time blocked in
// wg.Wait, errgroup's Wait or parlib's Sync is no strand's. What stays in a
// strand is time the goroutine spends blocked in code the rewriter does not
// see (a channel, a mutex, I/O) and time it is descheduled while runnable
// (more runnable goroutines than GOMAXPROCS, the garbage collector's
// assists): the clock measures the goroutine's wall time between events.

// parallel is the engine's parallel accounting: on says it is in force, and
// then mu guards all of the engine but the goroutines' buffered calls, and
// byG finds each goroutine's state. mu wakes its newest waiter first
// (enginelock.go), so that a loaded engine takes the program's tree depth
// first.
type parallel struct {
	on    atomic.Bool
	mu    engineLock
	byG   gtable
	live  int  // goroutines spawned for real and not ended
	every bool // parallel mode: every spawn runs for real
	// locked counts the goroutines that hold a thread of their own for
	// a per-thread measure (startG), at most maxLocked.
	locked atomic.Int32
	// exited holds the states of goroutines that ended at their last
	// Done, once they have returned (parDoneLast).
	exited exitedList
}

// maxLocked bounds the goroutines that keep an OS thread of their own for
// a per-thread measure at once. Go stops a process at 10,000 threads
// (debug.SetMaxThreads), and a test of a goroutine pool (panjf2000/ants)
// started more than that many waiting workers in serial mode, each on its
// own locked thread, and crashed. Past the bound a goroutine is measured
// by the clock (config.Shared) and the profile counts it (notprof.go).
var maxLocked int32 = 1000

// enablePar turns parallel accounting on. Only the goroutine that drives the
// engine calls it (from its own event, or before the run starts), so no event
// can be in flight.
func (e *engine) enablePar() {
	if !e.par.on.Load() {
		e.anchorKey = newAnchorKey() // before on: events read it after
	}
	e.par.mu.Lock()
	if e.root.g != 0 {
		e.par.byG.put(e.root.g, e.root)
	}
	e.par.every = e.par.every || e.cfg.Mode == parallelMode
	e.par.on.Store(true)
	e.par.mu.Unlock()
}

// parEngine returns the running engine if parallel accounting is on.
func parEngine() *engine {
	if e := current; e != nil && e.par.on.Load() {
		return e
	}
	return nil
}

// read reads the measure of a goroutine whose state is not known yet: the
// shared one, or nothing where each goroutine has its own (then lock reads
// it once it has the state).
func (e *engine) read() uint64 {
	if e.cfg.PerThread {
		return 0
	}
	return e.m.Read()
}

// lock takes the engine for the calling goroutine's event at site (-1:
// none), ending its current strand at now (from read), and returns its
// state, or nil (and no lock held) if the goroutine has none (gate.go) or
// the run is over.
func (e *engine) lock(now uint64, site SiteID) *gstate {
	st, home := e.take(site)
	if st == nil {
		return nil
	}
	if home {
		now = st.last
	}
	e.cur = st
	if e.cfg.PerThread {
		now = st.m.Read()
	}
	// A glue left for an event that took another way (a panic between
	// two glued events) must not outlive it: it would start a later
	// strand in the past.
	st.parGlued = false
	// replay, written out: its frame would sit under the engine's deepest
	// work (see replayCalls).
	if len(st.calls.evs) != 0 {
		e.replayCalls(st.calls.evs)
		st.calls.drop()
	}
	e.tickAt(now)
	return st
}

// take takes the engine's lock for the calling goroutine's event at site
// and returns its state, or nil (and no lock held), as lock says; home says
// that the goroutine that started the run took the engine back, and its
// strand starts at its state's last reading.
//
// It is lock's first half, out of line so that lock's frame, under which
// the engine's deepest work runs (replay, tickAt), stays small: that work
// runs on the stack of a goroutine that has just started (see newG).
//
//go:noinline
func (e *engine) take(site SiteID) (st *gstate, home bool) {
	g := getg()
	// stateOf, written out (before the lock: only g changes its entry):
	// one call and one frame fewer per event.
	if k := e.anchorKey; k != 0 {
		st = anchorOwn(k)
	}
	if st == nil {
		st = e.par.byG.get(g)
	}
	e.par.mu.Lock()
	if st == nil && g == e.home && e.owner.Load() == 0 && !e.stopped {
		// The goroutine that started the run takes the engine back
		// after the tests (hold.go), and starts a strand there.
		e.par.mu.Unlock()
		e.retakeHome()
		e.par.mu.Lock()
		st, home = e.par.byG.get(g), true
	} else if st != nil && st.g != g {
		st = nil // a hand-over took the root state from g meanwhile
	}
	if st == nil || e.stopped {
		e.par.mu.Unlock()
		if e.stopped {
			e.note(whyStopped, g, site)
		} else {
			e.note(whyOther, g, site)
		}
		return nil, false
	}
	return st, home
}

// unlock releases the engine and starts the goroutine's next strand.
//
// The strand's start is written after the lock, where stop may be
// replaying the goroutine's buffer (replayOther), which reads it; but the
// turn just ended emptied the buffer, and stop reads only the calls
// buffered since (callBuf.published), whose appends follow this write.
func (e *engine) unlock(st *gstate) {
	e.par.mu.Unlock()
	st.last = st.m.Read()
}

// The par methods take the events of the calling goroutine, whose function
// runs at depth d (depth.go), in parallel accounting.

func (e *engine) parCallBegin(site SiteID, d uintptr) {
	if st := e.spawned(); st != nil {
		e.buffer(st, callEvent{site: site, d: d})
		return
	}
	if st := e.lock(e.read(), site); st != nil {
		e.unwindTo(d)
		e.push(site, d)
		e.unlock(st)
	}
}

func (e *engine) parCallEnd(d uintptr) {
	if st := e.spawned(); st != nil {
		e.buffer(st, callEvent{site: -1, d: d})
		return
	}
	e.parCallEndLocked(d)
}

// parCallEndGlue is parCallEnd where the goroutine's next event, a wait,
// follows with no code between (glue.go): a goroutine spawned for real
// leaves the wait the reading its buffered end took.
func (e *engine) parCallEndGlue(d uintptr) {
	if st := e.spawned(); st != nil {
		if now, kept := e.buffer(st, callEvent{site: -1, d: d}); kept {
			st.glueAt, st.parGlued = now, true
		}
		return
	}
	e.parCallEndLocked(d)
}

// parCallEndLocked is parCallEnd on the goroutine that holds the engine,
// which does not buffer.
func (e *engine) parCallEndLocked(d uintptr) {
	if st := e.lock(e.read(), -1); st != nil {
		if e.endsCall(d) {
			e.callEnd()
		} else {
			e.note(whyUnmatched, 0, -1)
		}
		e.unlock(st)
	}
}

func (e *engine) parDone(obj unsafe.Pointer, d uintptr) {
	if st := e.lock(e.read(), -1); st != nil {
		e.unwindTo(d)
		e.done(obj)
		e.unlock(st)
	}
}

// beforeWait reads the measure before a wait blocks, or takes the
// reading of the glued call end right before it (glue.go); parWait ends
// the strand there.
func (e *engine) beforeWait() uint64 {
	if !e.cfg.PerThread {
		if st := e.stateOf(); st != nil && st.parGlued {
			return st.glueAt // the wait follows a glued call end; lock clears it
		}
		return e.m.Read()
	}
	var now uint64
	e.par.mu.Lock()
	if st := e.stateOf(); st != nil {
		if st.parGlued {
			now = st.glueAt
		} else {
			now = st.m.Read()
		}
	}
	e.par.mu.Unlock()
	return now
}

func (e *engine) parWait(obj unsafe.Pointer, before uint64, d uintptr) {
	if st := e.lock(before, -1); st != nil {
		e.unwindTo(d)
		e.wait(obj)
		e.unlock(st)
	}
}

// parSpawn takes a spawn at site: for a child that runs for real it returns
// the child's state, which the child passes to startG and endG; for one that
// runs inline it returns nil and inline true, and the caller runs the child
// and calls parSpawnEnd. With neither, the caller is no profiled goroutine
// and does what the program did.
func (e *engine) parSpawn(site SiteID, real bool, d uintptr) (c *gstate, inline bool) {
	st := e.lock(e.read(), site)
	if st == nil {
		return nil, false
	}
	if int(site) >= len(e.goSite) {
		e.growSites()
	}
	e.unwindTo(d)
	if real || e.par.every || e.goSite[site] {
		// The fork's record here, not in spawnG: see newG.
		c = e.spawnG(site, e.splice(e.rp.retain(e.recordOf(len(st.frames)-1))))
	} else {
		e.spawnBegin(site, d)
	}
	if c != nil && !real {
		// The caller starts the child's goroutine and then resumes, whose
		// reading starts the parent's next strand: a reading here would
		// only be overwritten (one of nine per spawn of parallel fib).
		// A child whose goroutine is already running (real, TryGo's)
		// has no resume.
		e.par.mu.Unlock()
	} else {
		e.unlock(st)
	}
	return c, c == nil
}

// parSpawnEnd ends a child that ran inline.
func (e *engine) parSpawnEnd(obj unsafe.Pointer, d uintptr) {
	if st := e.lock(e.read(), -1); st != nil {
		if e.endsSpawn(d) {
			e.spawnEnd(obj)
		} else {
			e.note(whyUnmatched, 0, -1)
		}
		e.unlock(st)
	}
}

// spawnG forks a goroutine from the current point of the current one: the
// child's first frame is the spawn's invocation, above a stand-in for the
// parent's frame that gives it its calling context, and its task starts
// from the parent's values with the parent's record, fork (retained for
// the child), as its fork.
func (e *engine) spawnG(site SiteID, fork recRef) *gstate {
	p := e.cur
	e.spawns++
	pt := &p.tasks[len(p.tasks)-1]
	c := e.newG(p)
	ct := &c.tasks[0]
	ct.t, ct.tb, ct.base, ct.fork = pt.t, pt.tb, 1, fork
	e.pp.shareInto(&ct.path, &pt.path)
	if e.wi != nil {
		e.wi.spawn(pt, &c.tasks[0], e.cfg.Burden) // the burden, as below
	}
	pt.tb += e.cfg.Burden // the continuation edge carries the burden
	e.cur = c
	e.push(site, noDepth) // on another goroutine's stack: never unwound by depth
	e.cur = p
	e.par.live++
	return c
}

// newG returns a state for a goroutine spawned by the one of state p, with
// p's open sites (activity.go), a stand-in for p's frame, and one empty task.
//
// A spawned goroutine starts with a 2 KB stack, of which about 1,120 bytes
// are usable before the runtime copies it to one twice as large; its
// spawn's own frames (errgroup's wrapper, GroupGo's closure, the recursion,
// GroupGo, the way to parSpawn) take about 600 of them, and in a fork/join
// program nearly every goroutine's first event is a spawn. So spawnG's
// frame is kept small, and what needs stack is taken on its own (this
// function, recordOf from parSpawn, and take from lock; the spawn's own
// frames are trimmed too: spawnChild, gstate.start): with the fork's record
// taken inside a spawnG that held all of this, 400 bytes deep, parallel
// fib(27) copied 196,000 stacks for its 318,000 goroutines (13-20% of its
// CPU time), and 77,000 after. The engine's deepest path (a spawn that
// replays the buffered calls and ends a strand in the path profile: strand,
// addSpan, pushSpan) is kept small as well, so that a goroutine makes its
// events one level down the program's recursion without a copy: fib(25)'s
// 121,000 goroutines went from 31,600 copies to 13,500 (docs/benchmarks.md).
// The rest copy below two or more levels of the recursion, or in the
// runtime's allocator, which the engine calls as little as it can on such
// a stack (newState, engineLock's waiters).
//
//go:noinline
func (e *engine) newG(p *gstate) *gstate {
	var c *gstate
	// The states of goroutines that ended at their last Done are reaped
	// at every spawn, not once the free ones run out: a state reaped in a
	// batch waits its turn behind the others and is cold when it comes.
	// Parallel quicksort, whose goroutines all end so, spent a fifth of
	// its engine's time here and in its first buffered call zeroing and
	// filling such states' cold lines (docs/benchmarks.md).
	if e.par.exited.head.Load() != nil {
		e.reapExited()
	}
	if n := len(e.freeG); n > 0 {
		c = e.freeG[n-1]
		e.freeG = e.freeG[:n-1]
	} else {
		c = e.newState()
	}
	c.m = e.m
	c.work = 0
	c.parent, c.spawnSeq, c.spawnDepth = p, e.seq, len(p.frames)-1
	p.kids++
	e.ap.share(&c.act, p.act)
	// In place, not from composite literals, which the compiler would
	// build in the frame first.
	c.frames = append(c.frames[:0], frame{})
	f := &c.frames[0]
	f.site, f.ctx, f.conn = -1, p.frames[len(p.frames)-1].ctx, true
	c.tasks = append(c.tasks[:0], task{})
	return c
}

// stateBatch is how many states newState makes at once, and
// framesAtStart how many frames each has room for.
const stateBatch, framesAtStart = 32, 8

// newState returns a state never used, with room for framesAtStart frames,
// and enters it in allG.
//
// It makes them stateBatch at a time, frames, goroutine functions
// (makeRuns) and all, because it runs on the spawning goroutine's stack,
// deep in its recursion, where a call of the runtime's allocator outgrew
// the stack for many a goroutine (parallel fib at GOMAXPROCS=1: 4,000 of
// 52,000 copies). Each state has room for a few frames from the start
// for the same reason: growing the slab in its first events (push, under
// a replay) takes the allocator on the goroutine's own small stack (6,400
// more of fib's copies with room for four, the number before).
//
//go:noinline
func (e *engine) newState() *gstate {
	if len(e.spareG) == 0 {
		e.spareG = make([]gstate, stateBatch)
		e.spareF = make([]frame, stateBatch*framesAtStart)
		for i := range e.spareG {
			makeRuns(&e.spareG[i])
		}
	}
	c := &e.spareG[0]
	e.spareG = e.spareG[1:]
	c.frames = e.spareF[:0:framesAtStart]
	e.spareF = e.spareF[framesAtStart:]
	c.idx, c.eng = int32(len(e.allG)), e
	e.allG = append(e.allG, c)
	return c
}

// startG runs first on a goroutine spawned with state c.
func (e *engine) startG(c *gstate) {
	if e.cfg.PerThread && e.cfg.Open != nil {
		e.ownMeasure(c)
	}
	// The state is the goroutine's alone until it is in the table or its
	// anchor (anchor.go): no turn at the engine's lock.
	g := getg()
	c.g = g
	if k := e.anchorKey; k != 0 {
		// Only an anchored prev is restored (leave): an entry in the
		// table is found there again, so it is not looked up.
		c.prev = anchorOwn(k)
		c.prevAnchored = c.prev != nil
		c.anchoredBy.Store(g)
		anchorStore(g^k, c)
	} else {
		c.prev = e.par.byG.put(g, c)
	}
	c.parGlued = false // a reused state's last glue, had it any
	c.last = c.m.Read()
}

// ownMeasure gives the goroutine that runs c a measure of its own: a
// per-thread measure counts the thread that opened it, so the goroutine
// keeps its thread and opens one, unless maxLocked goroutines hold threads
// already; then, or if it cannot open one, it reads cfg.Shared.
func (e *engine) ownMeasure(c *gstate) {
	if e.par.locked.Add(1) <= maxLocked {
		runtime.LockOSThread()
		m, closeM, err := e.cfg.Open()
		if err == nil {
			c.m, c.close = m, closeM
			return
		}
		runtime.UnlockOSThread()
		// Out of file descriptors, say: stop says how often.
		e.notProf.counterFailed.Add(1)
	} else {
		e.notProf.threadLimit.Add(1)
	}
	e.par.locked.Add(-1)
	if e.cfg.Shared != nil {
		c.m = e.cfg.Shared
	}
}

// endG runs last on a goroutine spawned with state c (deferred, so that a
// panic or runtime.Goexit still ends it); its return signals obj, or
// nothing if obj is nil.
func (e *engine) endG(c *gstate, obj unsafe.Pointer) {
	if c.early {
		// Ended at its last Done (parDoneLast), which left c to this
		// goroutine until here: c is handed back without the lock.
		e.par.exited.push(c)
		return
	}
	now := c.m.Read()
	// c may be reused once the lock is released.
	closeM, g, prev, pa := c.close, c.g, c.prev, c.prevAnchored
	c.close, c.prev, c.prevAnchored = nil, nil, false
	e.par.mu.Lock()
	if !e.stopped {
		e.cur = c
		e.replay(c)
		e.tickAt(now)
		e.endOwn(c, obj)
	}
	if len(c.calls.evs) != 0 {
		c.calls.drop() // what a stopped run did not take
	}
	e.par.mu.Unlock()
	e.leave(g, c, prev, pa, closeM)
}

// endOwn ends c, the current state, whose goroutine has reached its end:
// the invocations a panic left open, the goroutine's own task, whose value
// goes to obj (nil: nowhere), and the credit of its work to its parent.
// Under the engine's lock.
func (e *engine) endOwn(c *gstate, obj unsafe.Pointer) {
	for len(c.tasks) > 1 || len(c.frames) > 2 {
		// Invocations and inline children left open by a panic.
		tk := &c.tasks[len(c.tasks)-1]
		if len(c.frames)-1 > tk.base {
			e.callEnd()
		} else {
			e.spawnEnd(nil)
		}
	}
	e.spawnEnd(obj)
	e.ap.release(&c.act) // the parent's, shared at the spawn
	e.credit(c, e.ended)
	e.par.live--
	c.frames = c.frames[:0]
	c.dead = true
	c.anchoredBy.Store(0) // before reap can hand c to another goroutine
	e.reap(c)
	e.cur = e.root
}

// leave removes goroutine g's entry for state c, or gives it back prev,
// and closes the measure the goroutine opened (closeM), after the engine's
// lock. Only g looks its entry up, and it is here: the entry can go after
// the lock, even if c is reused meanwhile (del checks that it is c's).
// With anchors (anchor.go), g clears its anchor, or gives it back prev if
// prev was anchored (pa); a prev in the table is found there again.
func (e *engine) leave(g uintptr, c, prev *gstate, pa bool, closeM func()) {
	if k := e.anchorKey; k != 0 {
		if pa {
			anchorStore(g^k, prev)
		} else {
			anchorStore(0, nil)
		}
	} else if prev != nil {
		e.par.byG.put(g, prev)
	} else {
		e.par.byG.del(g, c)
	}
	if closeM != nil {
		closeM()
		runtime.UnlockOSThread()
		e.par.locked.Add(-1)
	}
}

// parDoneLast takes wg.Done() as the last action of a goroutine spawned
// for real (WaitGroupDoneLast: deferred first in the function that a go
// statement runs, the common `defer wg.Done()`, or that function's last
// statement where it defers nothing). Nothing instrumented runs
// between it and the goroutine's end, so the goroutine ends here, in the
// same turn at the engine, and its end signals obj, as serial mode folds
// the Done into the end (doneLastAt): one turn at the lock and two
// readings of the measure fewer per such goroutine, which was a quarter
// of the turns parallel quicksort took. The strand from here to the end
// (wg.Done itself, the return) is no one's, where serial mode counts its
// few nanoseconds in the child's last strand. endG then
// only hands the state back (exited), without the lock: until then the
// state is not reused (reap), so endG can tell it ended (c.early), a field
// no other goroutine writes meanwhile.
//
// Anywhere else (the root state, an inline child, a Done under an
// invocation still open) it is parDone.
func (e *engine) parDoneLast(obj unsafe.Pointer, d uintptr) {
	st := e.lock(e.read(), -1)
	if st == nil {
		return
	}
	e.unwindTo(d)
	if n := len(st.frames) - 1; st == e.root || len(st.tasks) != 1 || n != st.tasks[0].base || !e.matches(n, d) {
		e.done(obj)
		e.unlock(st)
		return
	}
	closeM, g, prev, pa := st.close, st.g, st.prev, st.prevAnchored
	st.close, st.prev, st.prevAnchored = nil, nil, false
	st.early = true // before endOwn, whose reap must leave st alone
	e.endOwn(st, obj)
	e.par.mu.Unlock() // no strand follows: no reading
	e.leave(g, st, prev, pa, closeM)
}

// exitedList holds the states of goroutines that ended at their last Done
// (parDoneLast) and have since returned (endG), for newG to reap: a stack
// that endG pushes onto without the engine's lock, which newG, under it,
// takes whole.
type exitedList struct{ head atomic.Pointer[gstate] }

func (l *exitedList) push(c *gstate) {
	for {
		old := l.head.Load()
		c.nextExited = old
		if l.head.CompareAndSwap(old, c) {
			return
		}
	}
}

// reapExited reaps the states of exitedList, under the engine's lock,
// oldest first, so that the state whose goroutine returned last, whose
// memory is the likeliest still in the cache, is the next that newG takes.
func (e *engine) reapExited() {
	var old *gstate // the list reversed: oldest first
	for c := e.par.exited.head.Swap(nil); c != nil; {
		next := c.nextExited
		c.nextExited = old
		old = c
		c = next
	}
	for c := old; c != nil; {
		next := c.nextExited
		c.nextExited = nil
		c.early = false
		e.reap(c)
		c = next
	}
}

// parSpawnInline takes a spawn whose child runs inline whatever the mode
// (the last function of parlib.Do), reporting
// whether the caller is a profiled goroutine.
func (e *engine) parSpawnInline(site SiteID, d uintptr) bool {
	st := e.lock(e.read(), site)
	if st == nil {
		return false
	}
	e.unwindTo(d)
	e.spawnBegin(site, d)
	e.unlock(st)
	return true
}

// credit adds the work w of goroutine c, which has ended, to the innermost
// invocation of its parent that was open at the spawn and still is; finish
// passes it down from there. An invocation that ended first (it did not
// wait for c) does not get it.
//
// If the parent has ended (children of one flat group, such as the halves
// of a parlib loop, outlive the halves that spawned them), the work goes to
// the invocation that was open at the parent's own spawn, and so on up.
//
// The walk up ended ancestors is compressed as a union-find's path (Tarjan,
// "Efficiency of a good but not linear set union algorithm", JACM 1975): c
// and each ended state on it are pointed at where the walk ends, with the
// spawn event and depth it ends with, which are the same from anywhere on
// the path. A state pointed away from has one child less, and an ended one
// left with none is reaped: nothing points at it any more. A chain of
// goroutines each spawning the next and ending first (examples/deepchain)
// made the walks quadratic, 10⁶ links each walking up all the ended links
// above it; shortcuts beside the parent pointers made them short, but kept
// every ended link's state, each holding its child's parent, until the
// last link ended: 1.2 GB for 10⁶ links, where the program keeps a few
// goroutines alive. Now the chain needs four states however long it is.
func (e *engine) credit(c *gstate, w int64) {
	p, seq, depth := c.parent, c.spawnSeq, c.spawnDepth
	for p != nil && p.dead {
		p, seq, depth = p.parent, p.spawnSeq, p.spawnDepth
	}
	for r := c; r.parent != p && !e.noCompress; {
		next := r.parent
		r.parent, r.spawnSeq, r.spawnDepth = p, seq, depth
		if p != nil {
			p.kids++
		}
		next.kids--
		if next.kids == 0 {
			// Ended, and nothing points at it now: reap frees it, and
			// the ended states above it up to p that held only it.
			e.reap(next)
			break
		}
		r = next
	}
	if p == nil || len(p.tasks) == 0 {
		return
	}
	for k := min(depth, len(p.frames)-1); k >= 0; k-- {
		if f := &p.frames[k]; f.start <= seq {
			f.subWork += w
			return
		}
	}
}

// reap frees the state of an ended goroutine once nothing points at it,
// and then its ancestors that were held only by it.
func (e *engine) reap(c *gstate) {
	for c != nil && c.dead && c.kids == 0 && !c.early {
		p := c.parent
		c.gen++
		c.parent = nil
		c.dead = false
		e.freeG = append(e.freeG, c)
		if p == nil {
			return
		}
		p.kids--
		c = p
	}
}

// resume restarts the strand of p, the calling goroutine's state, after it
// started a goroutine: the cost of starting one is the burden's (Cilkview
// §3), not a strand's, as in serial mode, where no goroutine is started.
func (e *engine) resume(p *gstate) {
	if p != nil {
		p.last = p.m.Read()
	}
}

// resumeGlued is resume for a glued spawn (glue.go), whose spawning
// goroutine's next event is a call's begin with no code between: a
// goroutine spawned for real buffers that begin with this reading, one
// reading fewer per spawn. The goroutine that holds the engine takes its
// calls under the lock, which reads before it, and gets no glue.
func (e *engine) resumeGlued(p *gstate) {
	if p != nil {
		p.last = p.m.Read()
		if p != e.root {
			p.glueAt, p.parGlued = p.last, true
		}
	}
}

// Calls are most of a fork/join program's events, and between two of its
// goroutine's other events (a spawn, a join contribution, a wait, its end)
// they change nothing that another goroutine sees: the goroutine's own
// frames, and the invocations' measurements, which reach others only
// through those events. So a goroutine spawned for real keeps its calls in
// a buffer of its own, each with the measure read once at the call, and the
// engine takes them, in order, at the goroutine's next event under the
// lock, before that event (replay), or when the buffer is full. The profile
// is the one the calls would have made under the lock one by one: each
// strand is still what the measure advanced from one event to the next.
// The lock is taken less than half as often (fib 45%, quicksort 35% of the
// turns it took without the buffer), and a buffered call reads the measure
// once instead of twice: the time spent buffering it, like the time to
// reach the lock, is the calibrated overhead's.
//
// The goroutine that holds the engine (the root state, hold.go) does not
// buffer: a hand-over moves its state from goroutine to goroutine. A
// goroutine still running when the run stops ends at its last event, a
// buffered call too: stop replays its buffer. Calls it buffers after that
// are dropped (endG, or the flush of a full buffer that finds the run
// stopped).

// callBufSize is how many calls a goroutine buffers before it takes the
// lock to hand them over.
const callBufSize = 64

// callEvent is a buffered call's begin (site ≥ 0) or end (site -1), from the
// function at depth d, with the measure at the event.
type callEvent struct {
	now  uint64
	d    uintptr
	site SiteID
}

// callBuf is a goroutine's buffered calls. Only the goroutine appends to
// it and, under the engine's lock, replays and empties it; evs is its own.
// Stop, which replays the calls of the goroutines still running
// (replayOther), reads them through n and base, which the goroutine
// publishes at each append: one atomic store per call. A mutex held for
// each append, for the strand's start after each turn at the lock (unlock)
// and for the end's drop took two atomic operations each: eight per
// goroutine of parallel fib, which takes three now (docs/benchmarks.md).
type callBuf struct {
	evs  []callEvent
	n    atomic.Int32              // len(evs), for stop
	base atomic.Pointer[callEvent] // evs's array, for stop
}

// grow doubles the buffer's room, up to callBufSize, and publishes the new
// array before the count that covers its next event: stop, loading the
// count first, finds an array that holds at least that many.
//
//go:noinline
func (b *callBuf) grow() {
	evs := make([]callEvent, len(b.evs), min(max(4, 2*cap(b.evs)), callBufSize))
	copy(evs, b.evs)
	b.evs = evs
	b.base.Store(unsafe.SliceData(evs))
}

// published returns the calls the buffer's goroutine has appended, for
// another goroutine (stop, under the engine's lock).
func (b *callBuf) published() []callEvent {
	n := b.n.Load()
	if n == 0 {
		return nil
	}
	return unsafe.Slice(b.base.Load(), n)
}

// drop forgets the buffered calls; only the buffer's goroutine calls it.
func (b *callBuf) drop() {
	b.evs = b.evs[:0]
	b.n.Store(0)
}

// spawned returns the calling goroutine's state if it is a goroutine
// spawned for real (not the root state, which does not buffer), or nil.
func (e *engine) spawned() *gstate {
	if st := e.stateOf(); st != e.root {
		return st
	}
	return nil
}

// buffer adds the call ev to st's buffer, with the measure read now (or
// the glued reading the event before left, resumeGlued), and hands the
// buffer to the engine when it is full. It returns the event's reading,
// and whether that is where the goroutine's strand starts: not after a
// hand-over, whose unlock starts it again.
func (e *engine) buffer(st *gstate, ev callEvent) (uint64, bool) {
	if st.parGlued {
		ev.now, st.parGlued = st.glueAt, false
	} else {
		ev.now = st.m.Read()
	}
	// The append, written out (a method of its own would not inline).
	b := &st.calls
	k := len(b.evs)
	if k == cap(b.evs) {
		b.grow()
	}
	b.evs = b.evs[:k+1]
	b.evs[k] = ev
	b.n.Store(int32(k + 1)) // after the event: stop reads no more than n
	if k+1 >= callBufSize {
		if st := e.lock(e.read(), -1); st != nil {
			e.unlock(st)
		} else {
			b.drop() // the run has stopped
		}
		return ev.now, false
	}
	return ev.now, true
}

// replay takes the buffered calls of st, the current state, in order,
// under the engine's lock, for st's own goroutine (lock, endG). It takes
// no lock of the buffer's: only that goroutine appends to the buffer, and
// stop, the one other goroutine that replays it (replayOther), holds the
// engine's lock too. A turn at the lock with nothing buffered (a spawn,
// Done or wait with no call since the last) costs one comparison.
func (e *engine) replay(st *gstate) {
	if len(st.calls.evs) != 0 {
		e.replayCalls(st.calls.evs)
		st.calls.drop()
	}
}

// replayOther is replay for the state of another goroutine, which may be
// buffering meanwhile (stop): it takes the calls the goroutine has
// published, and leaves the buffer to the goroutine, which finds the run
// stopped at its next turn and drops them.
func (e *engine) replayOther(st *gstate) {
	e.replayCalls(st.calls.published())
}

// replayCalls is replay's loop, over the current state's calls evs.
//
// It runs under a spawn's or a wait's turn at the lock, at the bottom of
// the goroutine's recursion, where every frame counts against the stack
// the runtime gave the goroutine (see newG): lock writes replay out, and a
// call's end that takes callEnd's slow case calls callEndSlow from here
// rather than under callEnd's frame. Those 80 bytes took parallel
// quicksort's stack copies from 9,720-9,940 to 5,760-5,950 for its 278,000
// goroutines (docs/benchmarks.md).
func (e *engine) replayCalls(evs []callEvent) {
	for i := range evs {
		ev := &evs[i]
		e.tickAt(ev.now)
		if ev.site >= 0 {
			e.unwindTo(ev.d)
			e.push(ev.site, ev.d)
		} else if e.endsCall(ev.d) {
			// callEnd, its slow case called from here (see above).
			if e.callEndSlowCase() {
				e.callEndSlow()
			} else {
				e.callEnd()
			}
		} else {
			// note's count, without its call: see take.
			e.notProf.events[whyUnmatched].Add(1)
		}
	}
}
