package shadow

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// reader is the one method of a measure that the hot path calls.
// perf.Measure satisfies it.
type reader interface {
	Read() uint64
}

// config configures an engine.
type config struct {
	Measure     reader
	MeasureName string  // perf's name of it: perf.CPU, perf.Clock, perf.Instructions, ...
	Unit        string  // nanoseconds, instructions, cycles
	Mode        runMode // serial or parallel
	// PerThread reports that Measure counts one OS thread only (a hardware
	// counter): a goroutine that runs in parallel then locks its thread and
	// measures with a reader of its own from Open.
	PerThread bool
	Open      func() (reader, func(), error)
	// Shared measures the goroutines that cannot have a thread of their
	// own (more than maxLocked at once) where Measure's unit allows it:
	// the clock when Unit is nanoseconds, else nil (they read Measure,
	// which is wrong, and the profile says so).
	Shared reader
	// Burden is the scheduling cost charged to every spawn's continuation
	// edge for the burdened span (Cilkview Figure 13), in Unit.
	Burden int64
	// Overhead is the instrumentation's own cost per event, in Unit,
	// subtracted from every strand (Cilkprof §7's compensation).
	Overhead int64
	// WhatIf are the targets of the what-if profile (whatif.go), and
	// Factors its factors (nil: defaultFactors).
	WhatIf  []string
	Factors []int64
}

// frame is an instantiated function on the shadow stack: an invocation of a
// site (call, spawn or region), or the root of the program.
type frame struct {
	id    uint64 // activation; unique for the run
	start int64  // event number of the invocation's first event
	mark  int64  // event number of the last change of o, conn or up

	site      int32
	ctx       int32
	fn        int32
	topCS     bool // no invocation of the same site is active above (Cilkprof §6)
	topCaller bool // no invocation from the same function is active above
	// conn reports whether the path of o passes the frame's start (see o
	// below); it sits with the other flags so that a frame takes 104
	// bytes, not 112: serial mode keeps one per live invocation, a
	// million in a fork chain a million deep. A frame holds no Go
	// pointer (up and rec are slab indices), so the collector never
	// scans the frames.
	conn bool

	// issuer is how deep in its goroutine's stack the Go function that
	// began the invocation runs (depth.go), 0 when unknown: an event from
	// a shallower function finds the invocation unwound.
	issuer uintptr

	t0 int64 // span time (absolute longest path) at the start
	w0 int64 // the goroutine's work at the start
	// subWork is the work of goroutines spawned for real inside the
	// invocation (parallel accounting) that ended before it did: they ran
	// elsewhere, but in the serial order they are part of its trace.
	subWork int64
	ownWork int64 // local work: strands of this frame, not of its children

	// Local span: o is the length of this frame's own strands on the
	// longest path to the current point. conn reports whether that path
	// passes the frame's start; if not, up holds the record chain of the
	// path before this frame's segment.
	o   int64
	up  recRef
	rec recRef // cached record of (id, o, conn, up); 0 when stale

	// The context of the last non-recursive child this frame started: a
	// loop calling one site looks it up in the context tree once.
	lastSite, lastCtx int32
}

// task is a goroutine. In serial mode a spawned task runs to completion
// before its parent continues (serial elision), so tasks form a stack.
type task struct {
	t, tb int64 // span and burdened span at the current point
	path  prof  // profile of the longest path to the current point
	base  int   // index in frames of the task's first frame
	fork  recRef
	// done is the join object that the child's last action signalled
	// (doneLastAt): its end contributes to it. nil: none.
	done unsafe.Pointer
	w    *wvec // the what-if variants of t and tb (whatif.go); nil without
}

// gstate is the shadow state of one goroutine: its frames and the stack of
// tasks it runs (the goroutine's own, and the children serial mode runs
// inline on it). In serial mode only the profiled goroutine has one; in
// parallel accounting (parallel.go) every goroutine spawned at a site does.
type gstate struct {
	frames []frame
	tasks  []task
	// floor is the number of frames that belong to a goroutine that has
	// handed the engine over (a test blocked in t.Run, hold.go): the
	// holder's events never end or unwind them.
	floor int

	// act lists the sites with an invocation open on this goroutine's
	// stack and its ancestors' (activity.go).
	act actRef

	// work is the length of the strands this goroutine ran.
	work int64
	// A goroutine spawned for real credits its work, when it ends, to the
	// invocations of its parent that were open at the spawn and still are:
	// parent, and the spawn's event number and depth. Once parent has
	// ended, credit may point the state further up, past the ended states
	// above it, with the event number and depth the walk ends with.
	parent     *gstate
	spawnSeq   int64
	spawnDepth int
	gen        uint64 // counts the times this state was reused
	// kids counts the states whose parent this is: live children, and
	// ended ones with live children of their own. A state is reused only
	// once it has ended and kids is 0 (reap).
	kids int
	dead bool // the goroutine ended, and some kids are still live
	// early says the goroutine ended at its last Done (parDoneLast) and
	// has not returned yet: reap leaves the state alone until it has.
	early      bool
	nextExited *gstate // in the engine's exitedList

	m     reader
	calls callBuf // parallel accounting: calls not yet taken (parallel.go)
	close func()  // closes m if the goroutine opened it
	last  uint64  // the measure at the end of the goroutine's last event
	// glued says the goroutine's last event left the measure unread
	// (callEndGlueAt): no code runs before its next event, whose strand
	// is then empty and which reads the measure once for both.
	glued bool
	// parGlued is glued for a goroutine spawned for real (parallel
	// accounting, glue.go): its next event, which comes with no code
	// between, takes glueAt as its reading instead of reading again. Only
	// the goroutine itself reads and writes them.
	parGlued bool
	glueAt   uint64
	g        uintptr
	prev     *gstate // the state g had before this one, restored at the end
	// prevAnchored says prev was g's anchor (anchor.go), not its entry in
	// the goroutine table.
	prevAnchored bool
	// anchoredBy is the g whose anchor holds this state while that
	// goroutine runs it (anchor.go): set by startG, cleared by endOwn
	// under the engine's lock, so that an anchor left in a stack the
	// runtime has since given to another goroutine finds a state that is
	// not that goroutine's, and is ignored.
	anchoredBy atomic.Uintptr
	idx        int32 // index in the engine's allG, which records name (record.go)
	// eng is the engine that made the state (newState), so that a
	// goroutine's deferred end needs only the state (gstate.exit).
	eng *engine

	// run, runErr and runWG run a goroutine spawned for real with this
	// state (makeRuns), made once with the state, so that a spawn makes
	// no closure of its own; fn or fnErr is the child's function and obj
	// its join object (for wg.Go, the WaitGroup), which the spawning
	// goroutine sets before the go statement and the goroutine clears at
	// its start.
	run    func()
	runErr func() error
	runWG  func()
	fn     func()
	fnErr  func() error
	obj    unsafe.Pointer
}

// value is what flows along join edges: the longest path to a point.
type value struct {
	t, tb int64
	path  prof
	chain recRef
	w     *wvec // the what-if variants of t and tb; nil without
}

// engine is the shadow runtime of one profiled run: it keeps
// Cilkview's work, span and burdened span and Cilkprof's per-context
// measurements as the program's parallel-control events arrive.
//
// Span is computed with absolute times (the longest path from the start of
// the program, as Cilkview's Figure 13 does) rather than Cilkprof's
// frame-relative prefix/longest-child/continuation, because Go's join objects
// need not nest: a child starts at its parent's time, a Done takes the
// maximum into its join object, and a Wait takes the maximum back. See
// doc.go for the definitions of every measurement.
type engine struct {
	// cur is the state of the goroutine whose event is being taken: the
	// profiled goroutine's in serial mode, the caller's under the lock in
	// parallel accounting. root is the state of the goroutine that holds
	// the engine (hold.go).
	cur  *gstate
	root *gstate
	// anchorKey keys the anchors of goroutines spawned for real
	// (anchor.go); 0: none, every state is in the goroutine table.
	anchorKey uintptr

	cfg        config
	m          reader
	overhead   int64
	subtracted int64

	seq    int64
	nextID uint64
	work   int64
	spawns int64
	syncs  int64

	tab    *siteTable
	fn     []int32 // copy of tab.fn
	goSite []bool  // copy of the sites' Goroutine

	cct    *contexts
	onWork []spanprofile.Measurement // per context
	// sizes records, per context, its invocations' local work by powers of
	// two: whether they are alike, which tells a critical path of noisy
	// strands (trust.go's outliers). hists holds the full histograms
	// (sizeBuckets each) of the contexts that reached outlierMin.
	sizes []ctxSizes
	hists []uint32

	// merge takes each strand's minimum over this run and the runs before
	// it (strands.go); nil in a run that is not one of several.
	merge *strands

	// moved says the engine moved to another thread (a test binary hands
	// it from test to test), so one thread's run delay is not the run's.
	moved bool

	pp    profPool
	rp    recordPool
	ap    actPool
	joins joinTable
	// limits are the errgroup limits set with SetLimit, by group (limit.go);
	// hasLimits says there are any, for goroutines that must not read the
	// map.
	limits    map[unsafe.Pointer]int
	hasLimits atomic.Bool
	// slotWaits is what the limits did, by spawn site (limit.go).
	slotWaits map[SiteID]*spanprofile.LimitUse

	// owner is the goroutine whose events the engine takes (gate.go), 0
	// while no one holds it (between tests); home is the goroutine that
	// started the run. hold is the current holder's turn (hold.go).
	owner    atomic.Uintptr
	home     uintptr
	hold     *hold
	homeHold *hold
	// unwound counts the invocations closed because a panic or
	// runtime.Goexit unwound them (unwind), and notProf what the engine
	// did not take (notprof.go).
	unwound int64
	notProf notProfiled

	ended    int64 // the work of the child spawnEnd ended last
	twoReads bool  // restart reads the measure after every event
	par      parallel
	allG     []*gstate // every goroutine state made, for stop and the memory count
	freeG    []*gstate
	// spareG and spareF are what is left of the last batch of states and
	// of their frames (newState).
	spareG []gstate
	spareF []frame
	// topM is finishTop's measurement, kept here rather than in its
	// frame (see finishTop).
	topM spanprofile.Measurement
	// noCompress turns credit's path compression (parallel.go) and the
	// splicing of record chains (splice) off, for a test that compares
	// the profiles with and without them.
	noCompress bool
	splices    uint32 // splice's calls, for its deeper walk every spliceDeepEvery

	hasSink bool
	sink    value
	sinkTb  int64
	stopped bool
	// rare has a bit per rare mode the events test for (rareHalting,
	// rareMerge, rareWhatIf): each event tests this one word, and only
	// where it is nonzero tests which (tickRare, tickAtRare). It is
	// atomic as a signal's goroutine sets rareHalting (halt).
	rare atomic.Uint32

	wi *whatIf // the what-if profile (whatif.go); nil in a run without
}

// The rare modes' bits in engine.rare.
const (
	rareHalting = 1 << iota // a signal is ending the run (halt, signal.go)
	rareMerge               // merge is set: runs are merged (strands.go)
	rareWhatIf              // wi is set: a what-if profile runs
)

// setMerge sets the merge of runs (strands.go), nil for none.
func (e *engine) setMerge(s *strands) {
	e.merge = s
	if s != nil {
		e.rare.Or(rareMerge)
	} else {
		e.rare.And(^uint32(rareMerge))
	}
}

func newEngine(cfg config, tab *siteTable) *engine {
	e := &engine{cfg: cfg, m: cfg.Measure, overhead: cfg.Overhead, tab: tab, cct: newContexts(), home: getg()}
	e.owner.Store(e.home)
	e.homeHold = &hold{g: e.home, m: cfg.Measure, id: goroutineID()}
	e.hold = e.homeHold
	e.root = &gstate{m: cfg.Measure, g: e.home}
	e.cur = e.root
	e.allG = append(e.allG, e.root)
	e.joins.init()
	e.growSites()
	e.nextID = 1
	e.root.tasks = append(e.root.tasks, task{base: 0})
	e.root.frames = append(e.root.frames, frame{id: e.nextID, site: -1, conn: true})
	e.nextID++
	e.twoReads = cfg.MeasureName == perf.Clock || cfg.MeasureName == perf.CPU
	if cfg.Mode == parallelMode {
		e.enablePar()
	}
	if len(cfg.WhatIf) > 0 {
		factors := cfg.Factors
		if factors == nil {
			factors = defaultFactors
		}
		e.wi = newWhatIf(cfg.WhatIf, factors)
		e.rare.Or(rareWhatIf)
		e.wi.resolve(tab)
		e.root.tasks[0].w = e.wi.get()
	}
	e.root.last = e.m.Read()
	return e
}

// growSites copies the table's per-site data, which grows when a
// package registers its sites after the run started (table doubling).
func (e *engine) growSites() {
	e.tab.mu.Lock()
	e.fn = append(e.fn[:0], e.tab.fn...)
	for len(e.goSite) < len(e.tab.sites) {
		e.goSite = append(e.goSite, e.tab.sites[len(e.goSite)].Goroutine)
	}
	e.tab.mu.Unlock()
	if e.wi != nil {
		e.wi.resolve(e.tab)
	}
}

// tick ends the current strand: it reads the measure, subtracts the
// instrumentation's own cost and charges the rest to the innermost frame.
func (e *engine) tick() {
	if e.rare.Load() != 0 {
		// A signal ending the run, or merged runs, which charge empty
		// strands too: one test per event for all, the rest out of line.
		e.tickRare()
		return
	}
	st := e.cur
	if st.glued {
		// The strand since the last event is empty (glue.go): it ends
		// where that event's was, and neither event's engine work is
		// in any strand. An empty strand only counts an event, unless
		// runs are merged (strands.go, tickRare), which match strands
		// one by one.
		st.glued = false
		e.seq++
		return
	}
	e.tickAt(st.m.Read())
}

// tickRare is tick in a run with a rare mode on (rare): a signal ending
// the run, or merged runs, which charge empty strands too.
//
//go:noinline
func (e *engine) tickRare() {
	if e.rare.Load()&rareHalting != 0 {
		e.halted()
	}
	st := e.cur
	if st.glued {
		st.glued = false
		if e.merge == nil {
			e.seq++
			return
		}
		e.tickAt(st.last)
		return
	}
	e.tickAt(st.m.Read())
}

// restart starts the next strand after an event, where the measure is
// cheap enough to read twice per event (the clock): the engine's own work
// is then excluded as measured, not as calibrated. A calibration (Cilkprof
// §7) runs a tight loop on warm caches, and the engine of a real program
// misses. Measured with the cpu measure (CPU time, GOMAXPROCS=1, three runs
// each): with one read per event and the call pair's calibration, fib's
// work read 0.41-0.48 s against 0.14-0.25 s with two and its serial
// elision's 0.14-0.20 s of CPU; with one read for calls only (their engine
// work is small and alike, calibrated on its own), matmul's work read
// 0.93-1.00 s and its span 40% longer, against 0.79-0.81 s with two reads
// and an elision of 0.67-0.84 s. Counters cost microseconds per read and
// count no cache misses, so for them the calibration stays.
func (e *engine) restart() {
	if e.twoReads {
		e.cur.last = e.cur.m.Read()
	}
}

// tickAt is tick with the measure already read: it charges the strand
// that just ended, less the instrumentation's own cost, to the innermost
// frame, its task's path and the run's work.
func (e *engine) tickAt(now uint64) {
	if e.rare.Load()&(rareMerge|rareWhatIf) != 0 {
		e.tickAtRare(now) // one test per event for both, the rest out of line
		return
	}
	st := e.cur
	raw := int64(now - st.last)
	st.last = now
	e.seq++
	d := raw - e.overhead
	if d <= 0 {
		// A reading behind the last (an unordered TSC read, a clock
		// stepped back) subtracts nothing: the total never goes negative.
		e.subtracted += max(raw, 0)
		return
	}
	e.subtracted += e.overhead
	// The strand, in line: a call of its own cost 15 instructions a node
	// of profiled fib (callgrind; docs/benchmarks.md), and one frame
	// more on the engine's deepest path.
	e.work += d
	st.work += d
	f := &st.frames[len(st.frames)-1]
	f.ownWork += d
	f.o += d
	f.mark = e.seq
	if f.rec != 0 {
		e.rp.release(f.rec)
		f.rec = 0
	}
	tk := &st.tasks[len(st.tasks)-1]
	tk.t += d
	tk.tb += d
	// tickAt's frame is kept small (release inlines to a test, the
	// rare modes' work is out of line, tickAtRare): in parallel
	// accounting this runs at the bottom of the engine's deepest path, on
	// the small stack of a goroutine that has just started (see newG).
	// The rare modes are one test, at the top, with their work in
	// tickAtRare: on profiled fib (callgrind) tickAt then saves e, st and
	// the frame's address only where release calls free1, and the
	// engine's instructions per node fell 2,063 → 2,050.
	e.pp.addSpan(&tk.path, f.ctx, d)
}

// tickAtRare is tickAt where runs are merged (mergeStrand) or a what-if
// profile runs (whatIf.strand): tickAt's accounting, kept in step with
// it, and the rare modes' steps. In parallel accounting it is one frame
// on tickAt's, which only a what-if profile pays.
//
//go:noinline
func (e *engine) tickAtRare(now uint64) {
	st := e.cur
	raw := int64(now - st.last)
	st.last = now
	e.seq++
	if e.merge != nil {
		raw = e.mergeStrand(raw)
	}
	d := raw - e.overhead
	if d <= 0 {
		e.subtracted += max(raw, 0)
		return
	}
	e.subtracted += e.overhead
	e.work += d
	st.work += d
	f := &st.frames[len(st.frames)-1]
	f.ownWork += d
	f.o += d
	f.mark = e.seq
	if f.rec != 0 {
		e.rp.release(f.rec)
		f.rec = 0
	}
	tk := &st.tasks[len(st.tasks)-1]
	tk.t += d
	tk.tb += d
	if e.wi != nil {
		e.wi.strand(&e.ap, st, tk, d)
	}
	e.pp.addSpan(&tk.path, f.ctx, d)
}

// push starts an invocation of site in the current task, begun by a Go
// function at depth d (noDepth: unknown).
func (e *engine) push(site SiteID, d uintptr) {
	st := e.cur
	s := int32(site)
	if int(s) >= len(e.fn) {
		e.growSites()
	}
	fn := e.fn[s]
	outer, fnOpen := e.ap.find(st.act, s, fn)
	var ctx int32
	if outer != 0 {
		ctx = e.ap.slab[outer].ctx // fold recursion: back to the outer invocation's context
	} else if parent := &st.frames[len(st.frames)-1]; parent.lastSite == s+1 {
		ctx = parent.lastCtx // a loop calling one site
	} else {
		ctx = e.childCtx(st, s)
	}
	tk := &st.tasks[len(st.tasks)-1]
	if len(st.frames) == cap(st.frames) {
		growSlab(&st.frames)
	}
	// Fill the new slot field by field: its record indices are already 0
	// (pop clears them), so this costs no bulk copy.
	st.frames = st.frames[:len(st.frames)+1]
	f := &st.frames[len(st.frames)-1]
	f.id, f.start, f.mark = e.nextID, e.seq, e.seq
	f.site, f.ctx, f.fn = s, ctx, fn
	f.topCS, f.topCaller = outer == 0, !fnOpen
	f.t0, f.w0, f.subWork, f.ownWork, f.o, f.conn = tk.t, st.work, 0, 0, 0, true
	f.lastSite = 0
	f.issuer = d
	if d == noDepth {
		f.issuer = 0 // never found unwound
	}
	e.nextID++
	if outer == 0 {
		// ap.push, written out, with its rare slab growth out of line:
		// a call of its own cost 16 instructions more a top-call-site
		// call pair (BenchmarkCall, callgrind).
		ap := &e.ap
		r := ap.free
		if r == 0 {
			r = ap.grow()
		} else {
			ap.free = ap.slab[r].next
		}
		ap.live++
		a := &ap.slab[r]
		a.site, a.fn, a.ctx, a.refs = s, fn, ctx, 1
		a.next = st.act // the list's reference on the old head moves to a
		st.act = r
	}
}

// childCtx returns the context of an invocation of site s from the
// current frame of st, s not open there and not that frame's last child,
// from the context tree. Out of line, so that push's frame stays small
// (see newG).
//
//go:noinline
func (e *engine) childCtx(st *gstate, s int32) int32 {
	parent := &st.frames[len(st.frames)-1]
	ctx := e.cct.child(parent.ctx, s)
	parent.lastSite, parent.lastCtx = s+1, ctx
	return ctx
}

// finish records a completed invocation: on the work profile always, and on
// the current path, which is the longest path to the invocation's end. It
// passes the work of goroutines credited to f on to the frame below, and
// returns the invocation's work.
//
// Its rare calls (growContexts, countFirst) come first, before the values
// it computes are live: what is live across a call is spilled to the
// frame, and finish runs under a replay at the bottom of a goroutine's
// recursion in parallel mode (see newG).
func (e *engine) finish(f *frame, tk *task) int64 {
	if int(f.ctx) >= len(e.onWork) {
		e.growContexts(int(f.ctx) + 1)
	}
	// countSize, written out: it does not inline, and its two calls per
	// finished invocation cost 60 instructions a node of profiled fib
	// (callgrind; docs/benchmarks.md).
	if sz := &e.sizes[f.ctx]; sz.n > outlierMin {
		e.hists[int(sz.hist)*sizeBuckets+int(sizeBucket(f.ownWork))]++
	} else {
		e.countFirst(sz, sizeBucket(f.ownWork))
	}
	st := e.cur
	work, span := st.work-f.w0+f.subWork, tk.t-f.t0
	if f.subWork != 0 {
		st.frames[len(st.frames)-2].subWork += f.subWork
	}
	w := &e.onWork[f.ctx]
	w.Local.Count++
	w.Local.Work += f.ownWork
	w.Local.Span += f.o
	if !f.topCS && !f.topCaller {
		// Nested in its own recursion: only the local triple, the common
		// case deep in divide and conquer.
		e.pp.addLocal(&tk.path, f.ctx, f.ownWork)
	} else {
		e.finishTop(f, tk, w, work, span)
	}
	if f.topCS {
		e.ap.pop(&st.act, f.site)
	}
	return work
}

// finishTop is finish for an invocation that is its site's top call site
// or its context's top caller: the triples it counts, on the work profile
// (w) and on the path. Out of line, so that the measurement it builds is
// not in the frame of every invocation's end: finish inlines into callEnd,
// which a goroutine of parallel mode reaches deep in its recursion when a
// wait replays its buffered calls, and that frame's size decided whether
// it outgrew its stack (see newG).
//
// The measurement it builds lives in the engine (topM), not in its frame:
// a frame of 192 bytes at the end of every call of a non-recursive
// function (quicksort's partition) outgrew the stacks of 9,000 of parallel
// quicksort's goroutines.
//
//go:noinline
func (e *engine) finishTop(f *frame, tk *task, w *spanprofile.Measurement, work, span int64) {
	m := &e.topM
	*m = spanprofile.Measurement{}
	m.Local.Count, m.Local.Work = 1, f.ownWork // on the path, local span comes from the strands
	if f.topCS {
		m.TopCallSite = spanprofile.Triple{Count: 1, Work: work, Span: span}
		w.TopCallSite.Count++
		w.TopCallSite.Work += work
		w.TopCallSite.Span += span
	}
	if f.topCaller {
		m.TopCaller = spanprofile.Triple{Count: 1, Work: work, Span: span}
		w.TopCaller.Count++
		w.TopCaller.Work += work
		w.TopCaller.Span += span
	}
	e.pp.updatePtr(&tk.path, f.ctx, m)
}

// growContexts sizes the per-context arrays to at least n contexts by
// doubling. Appending a context at a time grew them by Go's factor for large
// slices, 1.25: with matmul's 24k contexts the copies and the garbage they
// left were 5% of the profiled run's CPU time and a third of its memory.
//
//go:noinline
func (e *engine) growContexts(n int) {
	c := max(2*cap(e.onWork), n, 64)
	onWork := make([]spanprofile.Measurement, c)
	copy(onWork, e.onWork)
	sizes := make([]ctxSizes, c)
	copy(sizes, e.sizes)
	e.onWork, e.sizes = onWork, sizes
}

// countSize counts an invocation of local work w in sz: one increment
// once the context has its full histogram.
func (e *engine) countSize(sz *ctxSizes, w int64) {
	if sz.n > outlierMin {
		e.hists[int(sz.hist)*sizeBuckets+int(sizeBucket(w))]++
		return
	}
	e.countFirst(sz, sizeBucket(w))
}

// sizeBucket is the histogram bucket of local work w: its bit length.
func sizeBucket(w int64) uint8 {
	return uint8(bits.Len64(uint64(max(w, 0))))
}

// countFirst counts an invocation in bucket b of a context that has no
// full histogram yet: among its first outlierMin, or, at the one after,
// in the full histogram it then gets.
//
//go:noinline
func (e *engine) countFirst(sz *ctxSizes, b uint8) {
	if n := sz.n; n < outlierMin {
		sz.first[n] = b
		sz.n = n + 1
		return
	}
	sz.hist = int32(len(e.hists) / sizeBuckets)
	e.hists = growTo(e.hists, len(e.hists)+sizeBuckets)
	h := e.hists[int(sz.hist)*sizeBuckets:][:sizeBuckets]
	for _, fb := range sz.first {
		h[fb]++
	}
	sz.n++
	h[b]++
}

// growTo returns s extended with zeros to length n, doubling its capacity
// when it must grow.
func growTo(s []uint32, n int) []uint32 {
	if n <= cap(s) {
		m := len(s)
		s = s[:n]
		clear(s[m:])
		return s
	}
	t := make([]uint32, n, max(2*cap(s), n))
	copy(t, s)
	return t
}

// pop removes the innermost frame and returns its up chain, which the caller
// now owns.
func (e *engine) pop() (conn bool, up recRef) {
	st := e.cur
	n := len(st.frames) - 1
	f := &st.frames[n]
	if f.rec != 0 {
		e.rp.release(f.rec)
	}
	conn, up = f.conn, f.up
	f.up, f.rec = 0, 0
	st.frames = st.frames[:n]
	return conn, up
}

// recordOf returns the record of frame i's current state, owned by the
// frame (callers retain what they keep). Records of a frame are rebuilt only
// after its state changed, so a chain of calls pays O(1) amortized.
func (e *engine) recordOf(i int) recRef {
	st := e.cur
	f := &st.frames[i]
	if f.rec != 0 {
		return f.rec
	}
	var up recRef
	switch {
	case !f.conn:
		up = f.up
	case i == st.tasks[len(st.tasks)-1].base:
		up = st.tasks[len(st.tasks)-1].fork
	case i > 0:
		up = e.recordOf(i - 1)
	}
	f.rec = e.rp.get(f.id, f.o, f.mark, f.conn, up, st.idx, int32(i))
	return f.rec
}

// recEnded reports whether the frame of record r has ended: its goroutine
// state's slot holds another activation, or none. Activation ids are never
// reused, so a slot that holds the id holds the frame.
func (e *engine) recEnded(r *record) bool {
	fs := e.allG[r.g].frames
	return int(r.k) >= len(fs) || fs[r.k].id != r.id
}

// splice takes the records of ended frames out of the chain behind r, and
// returns r. It walks up to the third record of a running frame, and
// every spliceDeepEvery-th call up to the spliceDeep-th.
//
// Only adopt reads a chain (find), and only for a running frame, so the
// record of an ended frame only links to the one before it: without it,
// find returns what it did, since the records left still decrease in pos.
// In parallel mode the chain that a spawn starts from passes every spawn
// on the longest path to it, and most of their goroutines have ended. A
// fork chain of 10⁶ links (examples/deepchain) kept a record per link until
// its last link ended: 147-153 MB peak RSS against 19 MB for the plain
// program. Spliced at each spawn, the chain holds the running frames'
// records and a few more, and the run 22 MB (docs/benchmarks.md). A splice
// drops an edge that a get made, so splices cost O(1) amortized; the
// running frames passed are what bounds the walk, on a chain through many
// (fib's). Links that stay running while more than three later links
// spawn are passed by every short walk and end behind its reach: the deep
// walks take them out (TestSpliceLongLivedLinks, whose chain kept a record
// per link with the short walks alone), at a cost of at most seven running
// frames passed per spawn on average; more than 128 running links at once
// would defeat them too.
//
//go:noinline
func (e *engine) splice(r recRef) recRef {
	if e.noCompress {
		return r
	}
	limit := 3
	if e.splices++; e.splices%spliceDeepEvery == 0 {
		limit = spliceDeep
	}
	for at, runs := r, 0; runs < limit; {
		u := e.rp.recs[at].up
		if u == 0 {
			break
		}
		if p := &e.rp.recs[u]; e.recEnded(p) {
			nu := e.rp.retain(p.up)
			e.rp.recs[at].up = nu
			e.rp.release(u)
			continue
		}
		at, runs = u, runs+1
	}
	return r
}

// spliceDeepEvery and spliceDeep set splice's deeper walk.
const (
	spliceDeepEvery = 32
	spliceDeep      = 128
)

// adopt updates frame f after the path to the current point was replaced by
// one whose record chain is chain: f's own strands on the new path are those
// the chain records for f, or none.
func (e *engine) adopt(f *frame, chain recRef) {
	old := f.up
	if ri := e.rp.find(chain, f.id, f.start); ri != 0 {
		r := &e.rp.recs[ri]
		f.o, f.conn = r.o, r.conn
		if r.conn {
			f.up = 0
		} else {
			f.up = e.rp.retain(r.up)
		}
	} else {
		f.o, f.conn, f.up = 0, false, e.rp.retain(chain)
	}
	e.rp.release(old)
	f.mark = e.seq
	if r := f.rec; r != 0 {
		f.rec = 0
		e.rp.drop(r)
	}
}

// callBegin marks the start of an instrumented call at site, made by the Go
// function at depth d. The engine's events take that depth, which the
// package-level entry points measure (depth.go), or noDepth where the
// function is not known. It returns e, so that Enter need not keep the
// engine in its frame across the call (see spawnBeginAt).
func (e *engine) callBegin(site SiteID, d uintptr) *engine {
	e.tick()
	e.unwindTo(d)
	e.push(site, d)
	e.restart()
	return e
}

// The methods above and below end the current strand (tick) and then take
// the event; parallel accounting (parallel.go) ends the strand itself and
// calls the bodies: callEnd, spawnBegin, spawnEnd, done and wait.

// callEndAt marks the return of the innermost instrumented call, the one
// that the Go function at depth d began. Invocations begun deeper were unwound (unwind); if what is left
// on top is not a call that function began (its begin was not profiled,
// or is already closed), the end is unmatched and changes nothing.
func (e *engine) callEndAt(d uintptr) {
	st := e.cur
	e.tick()
	e.unwindTo(d)
	// endsCall, written out: this is every instrumented call's end.
	if n := len(st.frames) - 1; n > st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d) {
		e.callEnd()
	} else {
		e.note(whyUnmatched, 0, -1)
	}
	e.restart()
}

// endsCall unwinds to depth d and reports whether the innermost frame is a
// call that an end from depth d ends.
func (e *engine) endsCall(d uintptr) bool {
	st := e.cur
	e.unwindTo(d)
	n := len(st.frames) - 1
	return n > st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d)
}

// endsSpawn is endsCall for the end of a spawned child.
func (e *engine) endsSpawn(d uintptr) bool {
	st := e.cur
	e.unwindTo(d)
	n := len(st.frames) - 1
	return len(st.tasks) > 1 && n == st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d)
}

// matches reports whether frame n was begun at depth d, as far as is known.
func (e *engine) matches(n int, d uintptr) bool {
	is := e.cur.frames[n].issuer
	return is == d || is == 0 || d == noDepth
}

// unwindTo closes the invocations that a panic or runtime.Goexit unwound
// before an event from the Go function at depth d: those begun by a
// function deeper than it, which must have returned for d to run. It is
// the hot path's only cost for this: a load and a comparison.
func (e *engine) unwindTo(d uintptr) {
	if e.cur.frames[len(e.cur.frames)-1].issuer > d {
		e.unwind(d)
	}
}

// unwind closes, innermost first, the invocations above the floor begun
// deeper than d: a recovered panic skipped their ends, and the program
// goes on in a frame above them, where the next strand belongs. An inline
// child whose spawn the panic left contributes nothing to its join object:
// its return never happened.
//
//go:noinline
func (e *engine) unwind(d uintptr) {
	st := e.cur
	for {
		n := len(st.frames) - 1
		if n < st.floor || n == 0 || st.frames[n].issuer <= d {
			return
		}
		e.closeTop()
		e.unwound++
	}
}

// closeTop ends the innermost frame, a call or an inline child.
func (e *engine) closeTop() {
	st := e.cur
	if len(st.frames)-1 == st.tasks[len(st.tasks)-1].base {
		e.spawnEnd(nil)
	} else {
		e.callEnd()
	}
}

// callEnd ends the innermost invocation of the current state, a call.
//
// Its common case, an invocation nested in its own recursion whose path
// passes its start, with nothing to pass down or to release, is written
// out here with only the local triple's updates, and the rest is
// callEndTop, out of line, and callEndSlow: finish inlined into one
// function made a frame of 192 bytes, and a goroutine of parallel mode
// reaches callEnd at the bottom of its recursion, where a wait or a spawn
// replays its buffered calls (see newG).
func (e *engine) callEnd() {
	if e.callEndSlowCase() {
		e.callEndTop()
		return
	}
	st := e.cur
	n := len(st.frames) - 1
	f := &st.frames[n]
	// finish and pop, for this case; w before the histogram's store,
	// which could alias e.onWork (a reload and a bounds check after it).
	w, sz := &e.onWork[f.ctx], &e.sizes[f.ctx]
	e.hists[int(sz.hist)*sizeBuckets+int(sizeBucket(f.ownWork))]++
	w.Local.Count++
	w.Local.Work += f.ownWork
	w.Local.Span += f.o
	// The frame goes first (f stays valid: the slab does not move), so
	// that nothing is live across the call.
	st.frames = st.frames[:n]
	e.pp.addLocal(&st.tasks[len(st.tasks)-1].path, f.ctx, f.ownWork)
}

// callEndTop is callEnd's slow case, with the common case of an
// invocation that is its site's top call site or its context's top caller
// (every call of a function that does not recurse) written out: the path
// passes its start, with nothing to pass down or to release. Through
// callEndSlow, finish, finishTop and updatePtr that case cost 242
// instructions a call pair, 175 this way (BenchmarkCall, callgrind): the
// four calls' prologues and spills, and a Measurement built whole for an
// update of a few of its fields. The rest is callEndSlow.
//
// callEnd calls it rather than writing it out so that the inlined callEnd
// of callEndAt and callEndGlueAt stays small: called from callEndAt
// instead of callEnd, it cost a node of profiled fib 22 instructions more
// (BenchmarkFib), whose ends are nested. replayCalls never reaches it: it
// calls callEndSlow itself for every slow case (see there).
//
//go:noinline
func (e *engine) callEndTop() {
	st := e.cur
	n := len(st.frames) - 1
	f := &st.frames[n]
	if !f.conn || f.subWork != 0 || f.rec|f.up != 0 ||
		int(f.ctx) >= len(e.onWork) || e.sizes[f.ctx].n <= outlierMin {
		e.callEndSlow()
		return
	}
	// Not nested (callEndSlowCase said so): finish and pop, for this case.
	ctx, own := f.ctx, f.ownWork
	// w before the histogram's store (see callEnd).
	w, sz := &e.onWork[ctx], &e.sizes[ctx]
	e.hists[int(sz.hist)*sizeBuckets+int(sizeBucket(own))]++
	w.Local.Count++
	w.Local.Work += own
	w.Local.Span += f.o
	tk := &st.tasks[len(st.tasks)-1]
	work, span := st.work-f.w0, tk.t-f.t0
	topCS, topCaller := f.topCS, f.topCaller
	if topCS {
		w.TopCallSite.Count++
		w.TopCallSite.Work += work
		w.TopCallSite.Span += span
		e.ap.pop(&st.act, f.site)
	}
	if topCaller {
		w.TopCaller.Count++
		w.TopCaller.Work += work
		w.TopCaller.Span += span
	}
	st.frames = st.frames[:n]
	e.pp.addTop(&tk.path, ctx, own, work, span, topCS, topCaller)
}

// callEndSlowCase reports whether ending the innermost frame takes
// callEnd's slow case, callEndTop: callEnd asks it, and so does
// replayCalls, which then calls callEndSlow itself (see there).
func (e *engine) callEndSlowCase() bool {
	st := e.cur
	f := &st.frames[len(st.frames)-1]
	return f.topCS || f.topCaller || !f.conn || f.subWork != 0 || f.rec|f.up != 0 ||
		int(f.ctx) >= len(e.onWork) || e.sizes[f.ctx].n <= outlierMin
}

// callEndSlow is callEnd in every case.
//
//go:noinline
func (e *engine) callEndSlow() {
	st := e.cur
	tk := &st.tasks[len(st.tasks)-1]
	e.finish(&st.frames[len(st.frames)-1], tk)
	conn, up := e.pop()
	if !conn {
		// The longest path to here does not pass the callee's start, so
		// it may not pass the caller's own strands before the call.
		e.adopt(&st.frames[len(st.frames)-1], up)
	}
	e.rp.release(up)
}

// spawnBeginAt marks a spawn at site; in serial mode the child runs inline
// right after, and spawnEndAt marks its return. It returns e, so that an
// entry point that writes the spawn out (GroupGo) need not keep the engine
// in its frame across the call: a word more there is a word more on a
// new goroutine's stack in parallel accounting (see newG).
func (e *engine) spawnBeginAt(site SiteID, d uintptr) *engine {
	e.tick()
	e.unwindTo(d)
	e.spawnBeginSerial(site, d)
	e.restart()
	return e
}

// spawnBeginSerial is spawnBegin written out for serial mode: the fork's
// record and the share of the parent's path are made in line in their
// common cases, where calls of recordOf and shareInto cost their spills
// and prologues (callgrind). Parallel accounting calls spawnBegin, whose
// frame stays small (see newG).
func (e *engine) spawnBeginSerial(site SiteID, d uintptr) {
	st := e.cur
	e.spawns++
	pt := len(st.tasks) - 1
	n := len(st.frames) - 1
	// recordOf(n), where the record's link is at hand: the frame's own up
	// chain, its task's fork, or the caller's cached record. The record
	// is made in line too, with the frame's reference and the child's
	// (get does not inline here: 48 instructions a spawn of profiled
	// fib's event stream, callgrind).
	rp := &e.rp
	f := &st.frames[n]
	fork := f.rec
	if fork == 0 {
		var up recRef
		switch {
		case !f.conn:
			up = f.up
		case n == st.tasks[pt].base:
			up = st.tasks[pt].fork
		default:
			up = st.frames[n-1].rec
			if up == 0 {
				up = e.recordOf(n - 1)
				f = &st.frames[n]
			}
		}
		var r *record
		fork = rp.free
		if fork != 0 {
			r = &rp.recs[fork]
			rp.free = r.up
		} else {
			fork = rp.grow()
			r = &rp.recs[fork]
		}
		// (no count of live records is kept: nothing reads one)
		if up != 0 {
			rp.recs[up].refs++
		}
		r.up, r.id, r.o, r.pos = up, f.id, f.o, f.mark
		r.conn, r.refs, r.g, r.k = f.conn, 2, st.idx, int32(n)
		f.rec = fork
	} else {
		rp.recs[fork].refs++
	}
	if len(st.tasks) == cap(st.tasks) {
		growSlab(&st.tasks)
	}
	// Through ts, whose length the compiler knows: parent and child then
	// take no bounds check.
	ts := st.tasks[:pt+2]
	st.tasks = ts
	parent, child := &ts[pt], &ts[pt+1]
	child.t, child.tb = parent.t, parent.tb
	// shareInto, its flush out of line.
	pp, p := &e.pp, &parent.path
	if l := pp.flushLimit(); p.own >= l/2 || p.n >= l {
		pp.flush(p)
	}
	if p.arr != 0 {
		pp.arrs[p.arr].refs++
	}
	if p.head != 0 {
		pp.slab[p.head].refs++
	}
	child.path.arr, child.path.head = p.arr, p.head
	child.path.n, child.path.own = p.n, 0
	child.base, child.fork = n+1, fork
	parent.tb += e.cfg.Burden // the continuation edge carries the burden
	if e.wi != nil {
		e.wi.spawn(parent, child, e.cfg.Burden)
	}
	e.push(site, d)
}

// spawnBegin is spawnBeginAt's event, which parallel accounting calls.
// The child's task slot is not zeroed first: every field but the
// pointers is set here, and spawnEnd leaves the pointers nil (a task{}
// appended cost a write barrier's test and the whole slot's stores).
func (e *engine) spawnBegin(site SiteID, d uintptr) {
	st := e.cur
	e.spawns++
	pt := len(st.tasks) - 1
	fork := e.rp.retain(e.recordOf(len(st.frames) - 1))
	// The child's task is filled in place, field by field: a task built
	// on the stack and appended is copied 16 bytes at a time, loads that
	// stall on the 8- and 4-byte stores that built it.
	if len(st.tasks) == cap(st.tasks) {
		growSlab(&st.tasks)
	}
	st.tasks = st.tasks[:pt+2]
	parent, child := &st.tasks[pt], &st.tasks[pt+1]
	child.t, child.tb = parent.t, parent.tb
	e.pp.shareInto(&child.path, &parent.path)
	child.base, child.fork = len(st.frames), fork
	parent.tb += e.cfg.Burden // the continuation edge carries the burden
	if e.wi != nil {
		e.wi.spawn(parent, child, e.cfg.Burden)
	}
	e.push(site, d)
}

// spawnEndAt marks the return of the spawned child. If obj is not nil the
// return signals that join object (wg.Go, errgroup's Go).
func (e *engine) spawnEndAt(obj unsafe.Pointer, d uintptr) {
	st := e.cur
	e.tick()
	e.unwindTo(d)
	// endsSpawn, written out: this is every spawn's end.
	if n := len(st.frames) - 1; len(st.tasks) > 1 && n == st.tasks[len(st.tasks)-1].base && n >= st.floor && e.matches(n, d) {
		e.spawnEndSerial(obj)
	} else {
		e.note(whyUnmatched, 0, -1)
	}
	e.restart()
}

// spawnEndSerial is spawnEnd for serial mode, its common case written out:
// a child whose path passes its start, with no last Done, no credit to
// pass down, no record to release and a full histogram, finish's work
// and the value's in line. The rest is spawnEnd. Its rare calls
// (done, growContexts, countFirst, the releases) made spawnEnd's frame
// 304 bytes, whose values every spawn's end spills and reloads around
// them; parallel accounting keeps spawnEnd.
func (e *engine) spawnEndSerial(obj unsafe.Pointer) {
	st := e.cur
	n := len(st.frames) - 1
	tk := &st.tasks[len(st.tasks)-1]
	f := &st.frames[n]
	if tk.done != nil || !f.conn || f.subWork != 0 || f.rec|f.up != 0 || e.wi != nil ||
		int(f.ctx) >= len(e.onWork) || e.sizes[f.ctx].n <= outlierMin {
		e.spawnEnd(obj)
		return
	}
	// finish, for this case.
	sz := &e.sizes[f.ctx]
	e.hists[int(sz.hist)*sizeBuckets+int(sizeBucket(f.ownWork))]++
	work, span := st.work-f.w0, tk.t-f.t0
	w := &e.onWork[f.ctx]
	w.Local.Count++
	w.Local.Work += f.ownWork
	w.Local.Span += f.o
	e.ended = work
	// The frame and the task go first, while their slices are at hand
	// (f and tk stay valid: the slabs do not move), as callEnd's frame
	// does. Their record indices are 0 already, and the task's pointers
	// nil.
	st.frames = st.frames[:n]
	st.tasks = st.tasks[:len(st.tasks)-1]
	if !f.topCS && !f.topCaller {
		e.pp.addLocal(&tk.path, f.ctx, f.ownWork)
	} else {
		e.finishTop(f, tk, w, work, span)
		if f.topCS { // (not tested again after addLocal)
			e.ap.pop(&st.act, f.site)
		}
	}
	// The value, which takes the task's path and its reference on the
	// fork's record.
	var v value
	v.t, v.tb = tk.t, tk.tb
	e.pp.moveInto(&v.path, &tk.path)
	v.chain, tk.fork = tk.fork, 0
	if obj != nil {
		e.offerContribute(obj, &v)
		// (one call for offerSink's and contribute's work; see there)
	} else {
		e.offerSinkDrop(&v)
	}
}

// spawnEnd ends the innermost frame, an inline child, and its task.
//
// Where the child's path passes its start, the value's chain is the
// fork's record, and the task's reference on it moves to the value: a
// retain and a release cost a call of free1 per spawn (callgrind). The
// task's slot is not zeroed: spawnBegin sets every field but the
// pointers, which go nil here (*tk = task{} cost a write barrier's
// test and the whole slot's stores).
func (e *engine) spawnEnd(obj unsafe.Pointer) {
	st := e.cur
	n := len(st.frames) - 1
	tk := &st.tasks[len(st.tasks)-1]
	if tk.done != nil {
		// The child's last action signalled tk.done (doneLastAt): its
		// end contributes to it, as the Done would have from here.
		if obj == nil {
			obj = tk.done
		} else {
			e.done(tk.done)
		}
	}
	e.ended = e.finish(&st.frames[n], tk)
	var v value // field by field, as in spawnBegin
	v.t, v.tb = tk.t, tk.tb
	e.pp.moveInto(&v.path, &tk.path)
	// The value's chain starts below the child's own segment, where
	// recordOf(n) would link it: a record of an ended frame is only a link
	// (adopt looks for running frames, splice takes ended ones out), so
	// the child's is not made.
	if f := &st.frames[n]; f.conn {
		v.chain, tk.fork = tk.fork, 0 // the task's reference moves to v
	} else {
		v.chain = e.rp.retain(f.up)
	}
	v.w = tk.w
	_, up := e.pop()
	e.rp.release(up)
	e.rp.release(tk.fork)
	tk.fork, tk.done, tk.w = 0, nil, nil // the rest is spawnBegin's to set
	st.tasks = st.tasks[:len(st.tasks)-1]
	if obj != nil {
		e.offerSink(&v)
		e.contribute(obj, &v)
	} else {
		e.offerSinkDrop(&v)
	}
}

// doneAt marks a join contribution to obj from the current point (wg.Done,
// a negative wg.Add). The invocations open in this goroutine contribute
// what they have done so far to the path that reaches the join object.
func (e *engine) doneAt(obj unsafe.Pointer, d uintptr) {
	e.tick()
	e.unwindTo(d)
	e.done(obj)
	e.restart()
}

func (e *engine) done(obj unsafe.Pointer) {
	st := e.cur
	tk := &st.tasks[len(st.tasks)-1]
	var v value // field by field, as in spawnBegin
	v.t, v.tb = tk.t, tk.tb
	e.pp.shareInto(&v.path, &tk.path)
	v.chain = e.rp.retain(e.recordOf(len(st.frames) - 1))
	if e.wi != nil {
		v.w = e.wi.clone(tk.w)
	}
	var sub int64
	for i := len(st.frames) - 1; i >= tk.base; i-- {
		f := &st.frames[i]
		if f.site < 0 {
			continue // the program's root is no invocation
		}
		sub += f.subWork // the callees' credits are not passed down yet
		work, span := st.work-f.w0+sub, tk.t-f.t0
		m := spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Work: f.ownWork}}
		if f.topCS {
			m.TopCallSite = spanprofile.Triple{Count: 1, Work: work, Span: span}
		}
		if f.topCaller {
			m.TopCaller = spanprofile.Triple{Count: 1, Work: work, Span: span}
		}
		e.pp.updatePtr(&v.path, f.ctx, &m)
	}
	e.contribute(obj, &v)
}

// waitAt marks the return of a wait on obj (wg.Wait, errgroup's Wait, a
// parlib sync): the waiter continues from the longest of its own path and
// the paths that signalled obj since the last wait on it.
func (e *engine) waitAt(obj unsafe.Pointer, d uintptr) {
	e.tick()
	e.unwindTo(d)
	e.wait(obj)
	e.restart()
}

func (e *engine) wait(obj unsafe.Pointer) {
	e.syncs++
	i := e.joins.find(obj)
	if i < 0 {
		return
	}
	acc := &e.joins.accs[i]
	if e.wi != nil || acc.ext != 0 {
		e.waitSlow(i, obj)
		return
	}
	// follow, from the accumulator in place: the value that waitSlow
	// moves out made wait's frame 272 bytes, and a goroutine of parallel
	// mode waits at the bottom of its recursion (see newG).
	st := e.cur
	tk := &st.tasks[len(st.tasks)-1]
	if acc.tb > tk.tb {
		tk.tb = acc.tb
	}
	chain := acc.chain
	if acc.t > tk.t {
		tk.t = acc.t
		e.pp.assign(&tk.path, &acc.path)
		e.adopt(&st.frames[len(st.frames)-1], chain)
	} else {
		e.pp.init(&acc.path)
	}
	e.rp.release(chain)
	// The slot owns nothing any more. removeAt's common case, no key in
	// the next slot, is written out: 10 instructions fewer a wait than
	// the call (callgrind), and wait's frame is the same.
	if jt := &e.joins; jt.keys[(i+1)&(len(jt.keys)-1)] == nil {
		jt.keys[i] = nil
		jt.n--
	} else {
		jt.removeAt(i)
	}
}

// waitSlow is wait on the accumulator in slot i, for obj, with what-if
// variants or a group's lanes.
//
//go:noinline
func (e *engine) waitSlow(i int, obj unsafe.Pointer) {
	acc := &e.joins.accs[i]
	if e.wi != nil {
		e.wi.takeLanes(obj, &e.joins.ext(acc).w)
	}
	var v value
	if acc.ext != 0 {
		// longest gives acc no new joinExt (it has one), so the slice
		// of them does not move under the loop.
		// Each lane in place: a copy to point at made the frame 96
		// bytes larger, and the lanes go with the joinExt.
		lanes := e.joins.exts[acc.ext].lanes
		for k := range lanes {
			e.longest(acc, &lanes[k])
		}
		v.w = e.joins.exts[acc.ext].w
		e.joins.freeExt(acc)
	}
	// The value moves out field by field (see spawnBegin); removeAt then
	// frees the slot, which owns nothing any more. A group whose lanes
	// were all taken by its spawns (slotAt) has no contribution left.
	if acc.has {
		v.t, v.tb, v.chain = acc.t, acc.tb, acc.chain
		e.pp.moveInto(&v.path, &acc.path)
	}
	e.joins.removeAt(i)
	e.follow(&v)
}

// follow makes the current task go on from the longer of its own path and
// v's, which it consumes: a wait's, or a slot's of a limited group.
func (e *engine) follow(v *value) {
	st := e.cur
	tk := &st.tasks[len(st.tasks)-1]
	if v.w != nil {
		e.wi.maxInto(tk.w, v.w)
	}
	if v.tb > tk.tb {
		tk.tb = v.tb
	}
	if v.t > tk.t {
		tk.t = v.t
		e.pp.assign(&tk.path, &v.path)
		e.adopt(&st.frames[len(st.frames)-1], v.chain)
	} else {
		e.pp.init(&v.path)
	}
	e.rp.release(v.chain)
}

// join is a wait on obj that is no sync of the program's: the implicit
// joins of a run that ended early (result.go). wait's body is not split
// out for it: every wait of the program would pay a call.
func (e *engine) join(obj unsafe.Pointer) {
	e.wait(obj)
	e.syncs--
}

// contribute adds v, which it consumes, to obj's accumulator. v comes by
// pointer, as longest's does: a value is eight words, more than the
// registers left for it, and passed by value it was copied through memory
// at both calls: by pointer, spawnEnd's own instructions fell by 16 a node
// of profiled fib, and a spawn and sync's by 17 (callgrind).
func (e *engine) contribute(obj unsafe.Pointer, v *value) {
	acc := e.joins.get(obj)
	if e.hasLimits.Load() && e.limits[obj] > 0 {
		e.toLane(obj, acc, v)
		return
	}
	if !acc.has && v.w == nil {
		// longest's first contribution, in line: fib's and stencil's
		// every contribution, 14 instructions fewer than the call
		// (callgrind).
		acc.has, acc.t, acc.tb = true, v.t, v.tb
		acc.path, acc.chain = v.path, v.chain
		return
	}
	e.longest(acc, v)
}

// offerContribute is offerSink and then contribute, for spawnEndSerial,
// whose case has no what-if profile (v.w is nil): one call where two
// spilled and reloaded the engine, obj and v around each other.
func (e *engine) offerContribute(obj unsafe.Pointer, v *value) {
	if v.tb > e.sinkTb {
		e.sinkTb = v.tb
	}
	if !e.hasSink || v.t > e.sink.t {
		e.pp.init(&e.sink.path)
		e.sink.t, e.sink.path, e.hasSink = v.t, e.pp.hold(&v.path), true
	}
	// get's common case, a new key in an empty slot of a table with
	// room, written out: get does not inline here.
	var acc *joinAcc
	jt := &e.joins
	if i := jt.slot(obj); jt.keys[i] == nil && 4*(jt.n+1) <= len(jt.keys) {
		jt.keys[i] = obj
		jt.n++
		acc = &jt.accs[i]
		acc.has, acc.ext = false, 0 // the rest is stale (see joinAcc)
	} else {
		acc = jt.get(obj)
	}
	if e.hasLimits.Load() && e.limits[obj] > 0 {
		e.toLane(obj, acc, v)
		return
	}
	if !acc.has {
		acc.has, acc.t, acc.tb = true, v.t, v.tb
		acc.path, acc.chain = v.path, v.chain
		return
	}
	e.longest(acc, v)
}

// toLane is contribute's to a group with a limit (limit.go): v ends a lane
// of acc. Out of line: the append copies *v to the stack first (v could
// point into the slice it grows), and in contribute that copy made its
// frame 48 bytes larger.
//
//go:noinline
func (e *engine) toLane(obj unsafe.Pointer, acc *joinAcc, v *value) {
	if e.wi != nil {
		e.wi.lane(obj, v.w)
		v.w = nil
	}
	x := e.joins.ext(acc)
	x.lanes = append(x.lanes, *v)
}

// longest keeps in acc the longer of its path and v's, and drops the other:
// it consumes v.
func (e *engine) longest(acc *joinAcc, v *value) {
	if v.w != nil {
		x := e.joins.ext(acc)
		if x.w == nil {
			x.w = e.wi.get()
		}
		e.wi.maxInto(x.w, v.w)
		v.w = nil
	}
	if !acc.has {
		// The first contribution since the last wait (fib's and
		// stencil's only one): the slot is stale (see joinAcc), with
		// no path to drop.
		acc.has, acc.t, acc.tb = true, v.t, v.tb
		acc.path, acc.chain = v.path, v.chain
		return
	}
	if v.tb > acc.tb {
		acc.tb = v.tb
	}
	if v.t > acc.t {
		e.pp.init(&acc.path)
		e.rp.release(acc.chain)
		acc.t, acc.path, acc.chain = v.t, v.path, v.chain
		return
	}
	e.drop(v)
}

func (e *engine) drop(v *value) {
	if v.w != nil {
		e.wi.put(v.w)
		v.w = nil
	}
	e.pp.init(&v.path)
	e.rp.release(v.chain)
	v.chain = 0
}

// offerSink makes v the end of the critical path if it is the longest so
// far: the span is the longest path to any sink, joined or not.
func (e *engine) offerSink(v *value) {
	if e.wi != nil {
		e.wi.offerSink(v.w)
	}
	if v.tb > e.sinkTb {
		e.sinkTb = v.tb
	}
	if !e.hasSink || v.t > e.sink.t {
		e.pp.init(&e.sink.path)
		e.sink.t, e.sink.path, e.hasSink = v.t, e.pp.hold(&v.path), true
	}
}

// offerSinkDrop is offerSink and then drop, for the end of a child that
// signals nothing (a go statement's, whose Done came before): a sink that
// takes v's path takes it over, rather than a reference of its own that
// the drop then releases. A spawn, Done and sync of such a child took 26
// instructions fewer (callgrind).
func (e *engine) offerSinkDrop(v *value) {
	if e.wi != nil {
		e.wi.offerSink(v.w)
	}
	if v.tb > e.sinkTb {
		e.sinkTb = v.tb
	}
	if !e.hasSink || v.t > e.sink.t {
		e.pp.init(&e.sink.path)
		e.sink.t, e.hasSink = v.t, true
		e.pp.moveInto(&e.sink.path, &v.path)
		e.sink.path.own = 0 // as hold leaves it
	}
	e.drop(v)
}

// mergeStrand returns the length of the strand that just ended, raw as this
// run read it, merged with the runs before (strands.go).
//
//go:noinline
func (e *engine) mergeStrand(raw int64) int64 {
	st := e.cur
	if e.par.on.Load() {
		// Goroutines that run for real end their strands in the order the
		// scheduler picks: no two runs match.
		e.merge.stopAt("goroutines ran in parallel, so no two runs' strands match")
		return raw
	}
	f := &st.frames[len(st.frames)-1]
	tag := uint64(uint32(f.site+1)) | uint64(len(st.frames))<<32 | uint64(len(st.tasks))<<48
	return e.merge.merge(raw, tag)
}
