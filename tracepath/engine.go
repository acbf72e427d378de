package tracepath

import (
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/exp/trace"

	"github.com/spanprof/spanprof/spanprofile"
)

// gstate is what the analysis keeps of one goroutine: the frontier of the
// DAG at it.
type gstate struct {
	main    bool // goroutine 1
	system  bool // the runtime's own: its time is no strand's
	known   bool // classified from a stack
	running bool // executing: running, or in a system call with its P
	syscall bool // in a system call, with its P or without
	lostP   bool // in a system call whose P the runtime gave to another
	sysP    trace.ProcID
	assist  bool
	counted bool // in Goroutines or RuntimeGoroutines

	parent ctxID   // its creator's context at the go statement
	start  stackID // its entry function, from its creation
	last   stackID // the (trimmed) stack of its latest event
	raw    stackID // and that stack whole

	pieceStart trace.Time
	samples    []stackID    // CPU samples in the current piece
	sampleAt   []trace.Time // and when they were taken

	// own is the longest path ending at the goroutine's present point; in
	// the best edge into it since it last ran, taken when it next runs if
	// longer.
	own   path
	in    path
	hasIn bool

	// Tasks: the memberships, innermost last; the task of tpath, the
	// longest path of that task's strands ending here; the path it had in
	// the task it left last; and the task path of the edge that last woke
	// it.
	member   []membership
	tcur     trace.TaskID
	tpath    path
	tprevID  trace.TaskID
	tprev    path
	tinID    trace.TaskID
	tin      path
	hasTasks bool
}

type membership struct {
	task   trace.TaskID
	region bool // a region's (else begun here or inherited)
}

// analyzer is the one pass over the events.
type analyzer struct {
	st   *stacks
	gs   map[trace.GoID]*gstate
	work []cell // exclusive work per context

	totalWork int64
	span      int64
	crit      path // the longest path to any strand's end

	started     bool
	first, last trace.Time
	wall        int64 // wall clock of the first event, Unix ns; 0 unknown
	events      int64
	procs       int64
	spawns      int64
	stwStart    map[trace.GoID]trace.Time
	// inSyscall maps a P to the goroutine in a system call that holds it.
	inSyscall map[trace.ProcID]trace.GoID
	info      spanprofile.TraceInfo
	gaps      gapHistogram

	tasks *taskSet
}

func newAnalyzer(trim string) *analyzer {
	return &analyzer{
		st:        newStacks(trim),
		gs:        make(map[trace.GoID]*gstate),
		stwStart:  make(map[trace.GoID]trace.Time),
		inSyscall: make(map[trace.ProcID]trace.GoID),
		tasks:     newTaskSet(),
	}
}

// g returns the state of goroutine id, making one for a goroutine first
// seen (one that existed before the trace began).
func (a *analyzer) g(id trace.GoID) *gstate {
	if id == trace.NoGoroutine {
		return nil
	}
	g := a.gs[id]
	if g == nil {
		// Goroutine 1 runs main, whatever its stacks show.
		g = &gstate{main: id == mainGoroutine}
		a.gs[id] = g
	}
	return g
}

// mainGoroutine is the ID of the goroutine that runs the program's
// initialization and main.
const mainGoroutine = 1

// running returns the goroutine executing an event if the program's own
// and executing, else nil.
func (a *analyzer) running(id trace.GoID) *gstate {
	g := a.gs[id]
	if g == nil || !g.running || g.system {
		return nil
	}
	return g
}

// classify decides from a stack of the goroutine whether it is the
// runtime's own: its outermost frame is the function it started in.
func (a *analyzer) classify(g *gstate, st stackID) {
	if g.known || st == 0 {
		return
	}
	if g.main {
		g.known = true
		return
	}
	g.known = true
	if systemFunc(a.st.bottom(st)) {
		g.system = true
	}
}

// event processes one event, in trace order.
func (a *analyzer) event(ev trace.Event) {
	t := ev.Time()
	if !a.started {
		a.started, a.first = true, t
	}
	if t > a.last {
		a.last = t
	}
	a.events++

	kind := ev.Kind()
	var st trace.StateTransition
	if kind == trace.EventStateTransition {
		st = ev.StateTransition()
	}
	if kind != trace.EventStackSample && ev.Stack() != trace.NoStack {
		// An event with a stack on a running goroutine ends a piece of
		// its strand: the piece's time goes to that stack.
		if g := a.gs[ev.Goroutine()]; g != nil && !g.system && !fromUndetermined(kind, st) {
			raw := a.st.stack(ev.Stack())
			a.classify(g, raw)
			if g.running && !g.system {
				st := a.st.trimmed[raw]
				a.closePiece(g, t, st)
				g.last, g.raw = st, raw
			}
		}
	}

	switch kind {
	case trace.EventSync:
		a.st.newGeneration()
		if s := ev.Sync(); s.ClockSnapshot != nil && a.wall == 0 {
			a.wall = s.ClockSnapshot.Wall.UnixNano() - int64(s.ClockSnapshot.Trace-a.first)
		}
	case trace.EventStateTransition:
		a.transition(ev, st, t)
	case trace.EventStackSample:
		if g := a.running(ev.Goroutine()); g != nil {
			if n := len(g.sampleAt); n > 0 {
				a.gaps.add(int64(t - g.sampleAt[n-1]))
			}
			g.samples = append(g.samples, a.st.stack(ev.Stack()))
			g.sampleAt = append(g.sampleAt, t)
		}
	case trace.EventLabel:
		// The GC's mark workers say what they are: "GC (dedicated)",
		// "GC (fractional)", "GC (idle)".
		l := ev.Label()
		if l.Resource.Kind == trace.ResourceGoroutine && strings.HasPrefix(l.Label, "GC ") {
			if g := a.g(l.Resource.Goroutine()); g != nil {
				g.known, g.system = true, true
			}
		}
	case trace.EventMetric:
		if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" && m.Value.Kind() == trace.ValueUint64 {
			a.procs = max(a.procs, int64(m.Value.Uint64()))
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		a.rangeEvent(ev, t)
	case trace.EventTaskBegin, trace.EventTaskEnd, trace.EventRegionBegin, trace.EventRegionEnd:
		a.annotation(ev, t)
	}
}

// fromUndetermined reports whether an event of kind, a state transition st,
// states a goroutine's state at the start of the trace: its stack is that
// goroutine's, not the stack of the goroutine executing the event.
func fromUndetermined(kind trace.EventKind, st trace.StateTransition) bool {
	if kind != trace.EventStateTransition || st.Resource.Kind != trace.ResourceGoroutine {
		return false
	}
	from, _ := st.Goroutine()
	return from == trace.GoUndetermined
}

// transition handles a goroutine's change of state.
func (a *analyzer) transition(ev trace.Event, st trace.StateTransition, t trace.Time) {
	if st.Resource.Kind == trace.ResourceProc {
		if from, to := st.Proc(); from.Executing() && !to.Executing() {
			a.procLost(st.Resource.Proc(), t)
		}
		return
	}
	if st.Resource.Kind != trace.ResourceGoroutine {
		return
	}
	id := st.Resource.Goroutine()
	from, to := st.Goroutine()
	if from == to {
		// A goroutine's state restated at a generation's start.
		return
	}
	if from == trace.GoSyscall {
		a.syscallEnds(id)
	}
	switch {
	case from == trace.GoNotExist:
		a.create(ev, id, to, t, a.st.stack(st.Stack))
	case from == trace.GoUndetermined:
		// The state of a goroutine that existed before the trace began. In
		// a system call without a P, it is blocked there.
		g := a.g(id)
		a.classify(g, a.st.stack(st.Stack))
		if to == trace.GoRunning || to == trace.GoSyscall && ev.Proc() != trace.NoProc {
			a.startStrand(g, t)
		}
		if to == trace.GoSyscall {
			a.syscallBegins(g, id, ev.Proc())
		}
	case from == trace.GoWaiting && to == trace.GoRunnable:
		a.unblock(ev, a.g(id), t)
	case from == trace.GoRunning && to == trace.GoSyscall:
		if g := a.gs[id]; g != nil && g.running {
			a.closePiece(g, t, 0)
			a.syscallBegins(g, id, ev.Proc())
		}
	case from == trace.GoSyscall && to == trace.GoRunning:
		g := a.g(id)
		switch {
		case g.lostP:
			// Back from a system call that blocked: a strand of its own,
			// after the goroutine's previous one and nothing else.
			g.lostP = false
			a.startStrand(g, t)
		case g.running:
			a.closePiece(g, t, 0)
		default:
			a.startStrand(g, t)
		}
		g.syscall = false
	case from == trace.GoSyscall && g0(a, id).lostP:
		// It ended its strand when it lost its P.
		a.gs[id].lostP, a.gs[id].syscall = false, false
		if to == trace.GoNotExist {
			a.exit(id)
		}
	case !from.Executing() && to.Executing():
		g := a.g(id)
		a.startStrand(g, t)
		if to == trace.GoSyscall {
			a.syscallBegins(g, id, ev.Proc())
		}
	case from.Executing() && !to.Executing():
		if g := a.gs[id]; g != nil && g.running {
			a.stopStrand(g, t)
		}
		if to == trace.GoNotExist {
			a.exit(id)
		}
	}
}

// g0 returns goroutine id's state, or an empty one.
func g0(a *analyzer, id trace.GoID) *gstate {
	if g := a.gs[id]; g != nil {
		return g
	}
	return &gstate{}
}

// syscallBegins notes that g entered a system call holding P p (NoProc:
// none, it is blocked there).
func (a *analyzer) syscallBegins(g *gstate, id trace.GoID, p trace.ProcID) {
	g.syscall = true
	g.sysP = p
	if p != trace.NoProc {
		a.inSyscall[p] = id
	}
}

// syscallEnds forgets the P goroutine id held in its system call.
func (a *analyzer) syscallEnds(id trace.GoID) {
	if g := a.gs[id]; g != nil && g.syscall && g.sysP != trace.NoProc {
		if a.inSyscall[g.sysP] == id {
			delete(a.inSyscall, g.sysP)
		}
		g.sysP = trace.NoProc
	}
}

// procLost handles P p stopped or stolen: a goroutine in a system call that
// held it is blocked there from now on, and its strand ends.
//
// The runtime takes the P of a system call that lasts (sysmon, after 20 µs
// to 10 ms) or that it knows blocks (entersyscallblock); until then the
// call is part of the strand, as CPU time of the kernel's may be. After, it
// is time blocked, as in a channel, and no strand's.
func (a *analyzer) procLost(p trace.ProcID, t trace.Time) {
	id, ok := a.inSyscall[p]
	if !ok {
		return
	}
	delete(a.inSyscall, p)
	g := a.gs[id]
	if g == nil || !g.syscall {
		return
	}
	g.sysP = trace.NoProc
	if g.running {
		a.stopStrand(g, t)
	}
	g.lostP = true
}

// create handles a goroutine's creation by the goroutine executing ev.
func (a *analyzer) create(ev trace.Event, id trace.GoID, to trace.GoState, t trace.Time, entry stackID) {
	if old := a.gs[id]; old != nil {
		// A goroutine ID the runtime reused.
		a.exit(id)
	}
	g := a.g(id)
	g.start = entry
	if entry != 0 {
		g.known = true
		g.system = systemFunc(a.st.bottom(entry))
	}
	if c := a.running(ev.Goroutine()); c != nil && !g.system {
		// The child's path starts where its creator stands, and its
		// stacks below the creator's at the go statement.
		a.spawns++
		g.own = c.own.snapshot()
		g.parent = a.st.context(c.parent, c.last)
		a.tasks.inherit(c, g)
	}
	if to.Executing() {
		// A goroutine made for a cgo callback starts in a system call.
		a.startStrand(g, t)
		a.syscallBegins(g, id, ev.Proc())
	}
}

// exit forgets a goroutine that ended.
func (a *analyzer) exit(id trace.GoID) {
	if g := a.gs[id]; g != nil {
		a.tasks.leaveAll(g)
	}
	delete(a.gs, id)
}

// unblock handles goroutine h made runnable by the goroutine executing ev,
// if any: an edge of the DAG from where that one stands to h's next strand.
func (a *analyzer) unblock(ev trace.Event, h *gstate, t trace.Time) {
	if h.system {
		return
	}
	u := a.running(ev.Goroutine())
	if u == nil {
		a.info.External++
		return
	}
	a.info.Wakeups++
	a.closePiece(u, t, 0)
	best := h.own.len
	if h.hasIn {
		best = max(best, h.in.len)
	}
	if u.own.len > best {
		h.in, h.hasIn = u.own.snapshot(), true
	}
	a.tasks.edge(u, h)
}

// startStrand starts a running interval of g at t.
func (a *analyzer) startStrand(g *gstate, t trace.Time) {
	g.running = true
	g.pieceStart = t
	g.samples, g.sampleAt = g.samples[:0], g.sampleAt[:0]
	if g.system {
		return
	}
	a.info.Strands++
	if g.hasIn {
		if g.in.len > g.own.len {
			buf := g.own.buf[:0]
			g.own = g.in
			g.own.buf = buf
		}
		g.in, g.hasIn = path{}, false
	}
	a.tasks.resume(g)
}

// stopStrand ends g's running interval at t: a sink of the DAG, where the
// span may end.
func (a *analyzer) stopStrand(g *gstate, t trace.Time) {
	a.closePiece(g, t, 0)
	g.running, g.syscall = false, false
	if g.system {
		return
	}
	if g.own.len > a.span {
		a.span = g.own.len
		a.crit = g.own.snapshot()
	}
	a.tasks.offer(g)
}

// closePiece ends g's current piece at t and gives its time to its stacks:
// the CPU samples taken in it if any, each an equal share, else st, the
// stack of the event ending it, or when there is none the stack of the
// system call it is in, or the goroutine's latest stack, or its entry
// function.
func (a *analyzer) closePiece(g *gstate, t trace.Time, st stackID) {
	d := int64(t - g.pieceStart)
	if d <= 0 {
		return
	}
	if !g.system && !g.syscall {
		d = a.cpuBound(g, t, d)
	}
	g.pieceStart = t
	if !g.counted {
		g.counted = true
		if g.system {
			a.info.RuntimeGoroutines++
		} else {
			a.info.Goroutines++
		}
	}
	if g.system {
		a.info.RuntimeTime += d
		g.samples, g.sampleAt = g.samples[:0], g.sampleAt[:0]
		return
	}
	if g.syscall {
		a.info.Syscall += d
	}
	if g.assist {
		a.info.Assist += d
	}
	if k := int64(len(g.samples)); k > 0 {
		share := d / k
		for i, s := range g.samples {
			ns := share
			if i == 0 {
				ns += d - share*k
			}
			a.attribute(g, a.st.context(g.parent, s), ns)
		}
		a.info.CPUSamples += k
		a.info.Sampled += d
		g.samples, g.sampleAt = g.samples[:0], g.sampleAt[:0]
		return
	}
	switch {
	case st != 0:
	case g.syscall && g.raw != 0:
		// In a system call the time is the call's, not its caller's:
		// the stack of the call, whole.
		a.attribute(g, a.st.context(g.parent, g.raw), d)
		return
	case g.last != 0:
		st = g.last
	default:
		st = g.start
	}
	a.attribute(g, a.st.eventContext(g.parent, st), d)
}

// cpuBound returns the length of g's piece of d nanoseconds of clock
// ending at t, less what its CPU samples show its thread did not run.
//
// The CPU profiler's timer is the thread's CPU clock: the thread is
// signalled, and a sample taken, each time it has used another period of
// CPU (one tick of the system's clock at most rates: 4 ms on a Linux of
// 250 Hz). So between two samples of a piece the thread ran at most one
// period, and so before its first and after its last, and in a piece with
// none at most one in all. A piece longer than that held its P while the
// system ran something else on its CPU: on a busy machine, a strand of 1
// ms can read 20. The period is estimated from the trace (gapHistogram);
// until it is known, and in system calls, a piece is its clock time.
func (a *analyzer) cpuBound(g *gstate, t trace.Time, d int64) int64 {
	p := a.gaps.period()
	if p == 0 || d <= p {
		return d
	}
	a.info.Checked++
	bound := p
	if k := len(g.sampleAt); k > 0 {
		bound = min(max(int64(g.sampleAt[0]-g.pieceStart), 0), p)
		for i := 1; i < k; i++ {
			bound += min(int64(g.sampleAt[i]-g.sampleAt[i-1]), p)
		}
		bound += min(max(int64(t-g.sampleAt[k-1]), 0), p)
	}
	if bound >= d {
		return d
	}
	a.info.Excluded += d - bound
	a.info.Corrected++
	return bound
}

// gapHistogram holds the gaps between consecutive CPU samples of a running
// piece, in quarter-octave bins, to estimate the sampling period: the
// typical gap, as the system delivers the profiler's signals. A thread
// that lost its CPU shows a longer gap, never a shorter one, so the median
// is the period on a machine busy less than half the time and the
// estimate errs long (keeping more clock time) on a busier one.
type gapHistogram struct {
	bins  [128]int64
	n     int64
	cache int64
}

// minGaps is how many gaps the period estimate needs.
const minGaps = 32

func (h *gapHistogram) add(gap int64) {
	if gap <= 0 {
		return
	}
	b := min(int(4*math.Log2(float64(gap))), len(h.bins)-1)
	h.bins[b]++
	h.n++
	h.cache = 0
}

// period returns the estimated sampling period in nanoseconds, the upper
// edge of the median gap's bin, or 0 while there are too few gaps.
func (h *gapHistogram) period() int64 {
	if h.n < minGaps {
		return 0
	}
	if h.cache == 0 {
		var c int64
		for b, k := range h.bins {
			if c += k; 2*c >= h.n {
				h.cache = int64(math.Exp2(float64(b+1) / 4))
				break
			}
		}
	}
	return h.cache
}

// attribute adds ns of g's strand, in context c, to the work and to the
// paths through g.
func (a *analyzer) attribute(g *gstate, c ctxID, ns int64) {
	for int(c) >= len(a.work) {
		a.work = append(a.work, cell{})
	}
	a.work[c].ns += ns
	a.work[c].n++
	a.totalWork += ns
	g.own.extend(int32(c), ns)
	a.tasks.attribute(g, c, ns)
}

// rangeEvent follows the GC's mark assists (part of the goroutine's
// strand) and the world's stops.
func (a *analyzer) rangeEvent(ev trace.Event, t trace.Time) {
	r := ev.Range()
	if r.Scope.Kind != trace.ResourceGoroutine {
		return
	}
	id := r.Scope.Goroutine()
	switch {
	case r.Name == "GC mark assist":
		g := a.gs[id]
		if g == nil {
			return
		}
		if g.running {
			a.closePiece(g, t, 0)
		}
		g.assist = ev.Kind() != trace.EventRangeEnd
	case strings.HasPrefix(r.Name, "stop-the-world"):
		switch ev.Kind() {
		case trace.EventRangeBegin:
			a.stwStart[id] = t
		case trace.EventRangeEnd:
			if s, ok := a.stwStart[id]; ok {
				a.info.STW += int64(t - s)
				delete(a.stwStart, id)
			}
		}
	}
}

// finish ends every strand still running when the trace ended.
func (a *analyzer) finish() {
	// In goroutine order: of two paths of equal length the first stays
	// the critical path, and the profile must not depend on map order.
	for _, id := range slices.Sorted(maps.Keys(a.gs)) {
		if g := a.gs[id]; g.running {
			a.stopStrand(g, a.last)
		}
	}
	a.tasks.finish()
}
