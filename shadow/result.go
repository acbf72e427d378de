package shadow

import (
	"runtime"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// stop ends the run: invocations still open end now (so a run cut short by
// a panic, the watchdog, a signal or os.Exit still yields the profile of
// what ran), and the profile is built.
//
// In parallel accounting, goroutines still running end at their last event:
// what they do after it is not measured. Events after stop are ignored.
//
// A run that ends early leaves children that never returned: an inline
// child blocked in a deadlock the watchdog stopped, a goroutine still
// running. Each ends where it is and joins the task that spawned it, as a
// sync at the end of the run would (closeAll, joinAtStop), and its work is
// credited to the invocations open around its spawn: the invocations that
// enclose a child then hold its work and its span, so that none reads a
// span above its work or below a child's.
func (e *engine) stop() *spanprofile.Profile { return e.stopAnd(nil) }

// stopAnd is stop, calling between, if not nil, with the number of calling
// contexts once the run has ended and before its profile is made: after
// the run's last reading, so that what between does is in no strand
// (collectBeforeProfile).
func (e *engine) stopAnd(between func(contexts int)) *spanprofile.Profile {
	if e.par.on.Load() {
		e.par.mu.Lock()
		defer e.par.mu.Unlock()
	}
	if !e.stopped {
		e.stopped = true
		e.cur = e.root
		if g := getg(); g == e.owner.Load() || !e.cfg.PerThread && e.owner.Load() != 0 {
			e.tick()
		} else {
			// The holder is another goroutine, or no one: a measure
			// per thread cannot be read from this one (it would read
			// this thread's time, out of order with the holder's), and
			// the time since no one's last event is no one's strand.
			// The run ends at the holder's last event.
			e.tickAt(e.root.last)
		}
		// The goroutines still running end at their last event, children
		// before their parents (a state is made after the state that
		// spawned it), and join them.
		for i := len(e.allG) - 1; i >= 1; i-- {
			if st := e.allG[i]; st != e.root && len(st.tasks) > 0 && !st.dead {
				e.cur = st
				e.replayOther(st) // its buffered calls (parallel.go)
				e.closeAll()
				e.joinAtStop(st)
			}
		}
		e.cur = e.root
		e.closeAll()
		tk := &e.root.tasks[0]
		v := value{t: tk.t, tb: tk.tb, path: e.pp.hold(&tk.path)}
		if e.wi != nil {
			v.w = e.wi.clone(tk.w)
		}
		e.offerSink(&v)
		e.drop(&v)
	}
	if between != nil {
		between(len(e.cct.parent))
	}
	return e.profile()
}

// stopJoin is the join object of the implicit joins at the end of a run.
var stopJoin byte

// closeAll ends every invocation and inline child open in the current
// goroutine, and the goroutine itself unless it is the root. An inline
// child still open ran in place of its parent's continuation (the serial
// elision), which was waiting for it to return: it joins its parent.
func (e *engine) closeAll() {
	obj := unsafe.Pointer(&stopJoin)
	st := e.cur
	for len(st.tasks) > 0 {
		tk := &st.tasks[len(st.tasks)-1]
		for len(st.frames)-1 > tk.base {
			e.callEnd()
		}
		if tk.base == 0 {
			return // the root task has no site frame
		}
		if len(st.tasks) == 1 {
			e.spawnEnd(obj) // a goroutine's own task: joinAtStop joins it
			return
		}
		e.spawnEnd(obj)
		e.join(obj)
	}
}

// joinAtStop joins goroutine st, just closed (its value signalled
// stopJoin), to the nearest ancestor state still open, and credits its work
// to the invocations open there around its spawn (credit).
func (e *engine) joinAtStop(st *gstate) {
	e.credit(st, e.ended)
	st.dead = true
	p := st.parent
	for p != nil && p.dead {
		p = p.parent
	}
	if p == nil || len(p.tasks) == 0 {
		if acc, ok := e.joins.take(unsafe.Pointer(&stopJoin)); ok {
			e.pp.init(&acc.path)
			e.rp.release(acc.chain)
		}
		return
	}
	e.cur = p
	e.join(unsafe.Pointer(&stopJoin))
}

func (e *engine) profile() *spanprofile.Profile {
	p := &spanprofile.Profile{
		Mode:         e.cfg.Mode.String(),
		Measure:      e.cfg.MeasureName,
		Unit:         e.cfg.Unit,
		Work:         e.work,
		Span:         e.sink.t,
		BurdenedSpan: e.sinkTb,
		Burden:       e.cfg.Burden,
		Spawns:       e.spawns,
		Syncs:        e.syncs,
		Overhead:     e.overhead,
		Subtracted:   e.subtracted,
		ShadowBytes:  e.shadowBytes(),
		Procs:        int64(runtime.GOMAXPROCS(0)),
	}
	e.tab.mu.Lock()
	for _, s := range e.tab.sites {
		p.Sites = append(p.Sites, spanprofile.Site{File: s.File, Line: s.Line, Column: s.Column, Func: s.Func, Caller: s.Caller, Kind: s.Kind,
			Loop: s.Loop, LimitKind: s.LimitKind, LimitAt: s.LimitAt})
	}
	for _, s := range e.tab.leftOut {
		p.LeftOut = append(p.LeftOut, spanprofile.LeftOutCall{File: s.File, Line: s.Line, Column: s.Column, Func: s.Func, Caller: s.Caller, Why: s.Why})
	}
	e.tab.mu.Unlock()

	n := len(e.cct.parent)
	onSpan := make([]spanprofile.Measurement, n)
	e.pp.each(&e.sink.path, func(k int32, m spanprofile.Measurement) { onSpan[k] = m })
	onWork := make([]spanprofile.Measurement, n)
	copy(onWork, e.onWork)
	root := &e.root.frames[0]
	onWork[0].Local = spanprofile.Triple{Count: 1, Work: root.ownWork, Span: onSpan[0].Local.Span}
	// The root invocation, the whole run, is always on the critical path,
	// so its local work on span is its local work: the path records only
	// the span of its strands, and the report showed a root of local span
	// on span above 0 with local work on span 0.
	onSpan[0].Local.Count, onSpan[0].Local.Work = 1, root.ownWork
	// Sized at once: grown by append, Contexts left 4 times its size of
	// garbage with 24k contexts (examples/matmul).
	stacks := e.cct.stacks()
	p.Contexts = make([]spanprofile.Context, n)
	for ctx := range p.Contexts {
		c := &p.Contexts[ctx]
		c.Stack, c.OnWork, c.OnSpan = stacks[ctx], onWork[ctx], onSpan[ctx]
	}
	p.Trust = &spanprofile.Trust{Outliers: outliers(p, e.sizes, e.hists)}
	p.NotProfiled = e.notProfiledRecords()
	p.Limits = e.limitUses()
	if e.wi != nil {
		p.WhatIf = e.wi.results(e.tab)
	}
	return p
}

// shadowBytes is the memory the engine's structures hold: the peak, because
// its pools and tables only grow.
func (e *engine) shadowBytes() int64 {
	var m spanprofile.Measurement
	n := int64(e.pp.allNodes)*int64(unsafe.Sizeof(profNode{})) +
		int64(e.rp.all)*int64(unsafe.Sizeof(record{})) +
		int64(cap(e.joins.keys))*int64(unsafe.Sizeof(unsafe.Pointer(nil))+unsafe.Sizeof(joinAcc{})) +
		int64(cap(e.onWork))*int64(unsafe.Sizeof(m)+unsafe.Sizeof(ctxSizes{})) + int64(cap(e.hists))*4 +
		int64(cap(e.cct.parent)+cap(e.cct.site)+cap(e.cct.vals))*4 + int64(cap(e.cct.keys))*8 +
		int64(cap(e.ap.slab))*int64(unsafe.Sizeof(actNode{}))
	for _, a := range e.pp.allArrays() {
		n += int64(cap(a.recs))*int64(unsafe.Sizeof(m)) + int64(cap(a.has)) + int64(cap(a.used))*4
	}
	for _, g := range e.allG {
		n += int64(cap(g.frames))*int64(unsafe.Sizeof(frame{})) + int64(cap(g.tasks))*int64(unsafe.Sizeof(task{}))
	}
	return n
}
