package tracepath

import (
	"cmp"
	"maps"
	"slices"

	"golang.org/x/exp/trace"

	"github.com/spanprof/spanprof/spanprofile"
)

// Per-request critical paths (docs/trace-mode.md#tasks).
//
// A goroutine's strand belongs to a task T while T is its innermost
// membership: it is inside a region of T (trace.StartRegion with T's
// context), or it began T and has not ended it, or it was created by a
// member of T. T's critical path is the longest path of the DAG through
// T's strands only, following the edges between them: the chain of its own
// work that decided when it could end. Time T waited for work outside it (a
// lock another request held, I/O, a timer) is no part of it; the latency
// minus the span says how long that was.

// slowest is how many of each type's slowest tasks the summary keeps.
const slowest = 10

// topFunctions is how many functions the summary names per task type.
const topFunctions = 5

type task struct {
	id    trace.TaskID
	typ   string
	begin trace.Time
	work  int64
	span  path // the longest path of the task's strands seen so far
}

type slowTask struct {
	run  spanprofile.TaskRun
	prof pvec
}

type taskType struct {
	count, unfinished                int64
	latSum, latMax, workSum, spanSum int64
	slow                             []slowTask // slowest first
}

type taskSet struct {
	open  map[trace.TaskID]*task
	types map[string]*taskType
}

func newTaskSet() *taskSet {
	return &taskSet{open: make(map[trace.TaskID]*task), types: make(map[string]*taskType)}
}

// current returns the task g's strand belongs to now, or nil: its innermost
// membership of a task still open.
func (ts *taskSet) current(g *gstate) *task {
	for i := len(g.member) - 1; i >= 0; i-- {
		if t := ts.open[g.member[i].task]; t != nil {
			return t
		}
	}
	return nil
}

// attribute adds a piece of g's strand to g's task.
func (ts *taskSet) attribute(g *gstate, c ctxID, ns int64) {
	if !g.hasTasks {
		return
	}
	if ts.open[g.tcur] == nil && len(g.member) > 0 {
		// Its task ended elsewhere; an outer one may still be open.
		ts.update(g)
	}
	if t := ts.open[g.tcur]; t != nil {
		t.work += ns
		g.tpath.extend(int32(c), ns)
	}
}

// offer records that a path of g's task ends here.
func (ts *taskSet) offer(g *gstate) {
	if !g.hasTasks {
		return
	}
	if t := ts.open[g.tcur]; t != nil && g.tpath.len > t.span.len {
		t.span = g.tpath.snapshot()
	}
}

// update makes g's task path follow its current membership, after its
// memberships changed (the caller closed g's piece first).
func (ts *taskSet) update(g *gstate) {
	// Forget what ties g to tasks that ended, but a region's place: its
	// end pops it.
	g.member = slices.DeleteFunc(g.member, func(m membership) bool { return !m.region && ts.open[m.task] == nil })
	var id trace.TaskID
	if t := ts.current(g); t != nil {
		id = t.id
	}
	if id == g.tcur {
		return
	}
	ts.offer(g)
	// Keep the path in the task left, in case g comes back to it.
	g.tprevID, g.tprev = g.tcur, g.tpath.snapshot()
	next := path{}
	if g.tinID == id && id != 0 {
		next = g.tin
	}
	if g.tprevID == id && g.tprev.len > next.len {
		next = g.tprev
	}
	g.tcur, g.tpath = id, next
	g.hasTasks = true
}

// inherit makes a goroutine created by c a member of c's task, its task
// path starting from c's.
func (ts *taskSet) inherit(c, g *gstate) {
	t := ts.current(c)
	if t == nil || c.tcur != t.id {
		return
	}
	g.member = append(g.member, membership{task: t.id})
	g.tcur, g.tpath, g.hasTasks = t.id, c.tpath.snapshot(), true
}

// edge hands u's task path to h, which u made runnable.
func (ts *taskSet) edge(u, h *gstate) {
	if !u.hasTasks || ts.open[u.tcur] == nil {
		return
	}
	if h.tinID != u.tcur || u.tpath.len > h.tin.len {
		h.tinID, h.tin = u.tcur, u.tpath.snapshot()
		h.hasTasks = true
	}
}

// resume lets g, starting a strand, take the task path of the edge that
// woke it when both are of its task.
func (ts *taskSet) resume(g *gstate) {
	if !g.hasTasks || g.tcur == 0 {
		return
	}
	if g.tinID == g.tcur && g.tin.len > g.tpath.len {
		g.tpath = g.tin
	}
}

// leaveAll drops an ending goroutine's memberships.
func (ts *taskSet) leaveAll(g *gstate) {
	if len(g.member) == 0 {
		return
	}
	g.member = g.member[:0]
	ts.update(g)
}

// annotation handles the task and region events.
func (a *analyzer) annotation(ev trace.Event, t trace.Time) {
	ts := a.tasks
	g := a.gs[ev.Goroutine()]
	switch ev.Kind() {
	case trace.EventTaskBegin:
		tk := ev.Task()
		ts.open[tk.ID] = &task{id: tk.ID, typ: tk.Type, begin: t}
		if g != nil && !g.system {
			g.member = append(g.member, membership{task: tk.ID})
			ts.update(g)
		}
	case trace.EventTaskEnd:
		tk := ev.Task()
		if g != nil && !g.system {
			ts.update(g) // closes nothing new; g's piece was closed by the event
			ts.offer(g)
			if i := slices.IndexFunc(g.member, func(m membership) bool { return m.task == tk.ID && !m.region }); i >= 0 {
				g.member = slices.Delete(g.member, i, i+1)
			}
		}
		ts.end(tk.ID, t)
		if g != nil && !g.system {
			ts.update(g)
		}
	case trace.EventRegionBegin:
		if g == nil || g.system {
			return
		}
		g.member = append(g.member, membership{task: ev.Region().Task, region: true})
		ts.update(g)
	case trace.EventRegionEnd:
		if g == nil || g.system {
			return
		}
		for i := len(g.member) - 1; i >= 0; i-- {
			if g.member[i].region {
				g.member = slices.Delete(g.member, i, i+1)
				break
			}
		}
		ts.update(g)
	}
}

// end closes task id at t and adds it to its type's summary.
func (ts *taskSet) end(id trace.TaskID, t trace.Time) {
	tk := ts.open[id]
	if tk == nil {
		// Begun before the trace started: its latency is unknown.
		return
	}
	delete(ts.open, id)
	tt := ts.typ(tk.typ)
	run := spanprofile.TaskRun{ID: uint64(id), Latency: int64(t - tk.begin), Work: tk.work, Span: tk.span.len}
	tt.count++
	tt.latSum += run.Latency
	tt.latMax = max(tt.latMax, run.Latency)
	tt.workSum += run.Work
	tt.spanSum += run.Span
	// Keep the slowest tasks, with their critical paths' profiles.
	i, _ := slices.BinarySearchFunc(tt.slow, run, func(s slowTask, r spanprofile.TaskRun) int {
		return cmp.Or(cmp.Compare(r.Latency, s.run.Latency), cmp.Compare(s.run.ID, r.ID))
	})
	if i < slowest {
		tt.slow = slices.Insert(tt.slow, i, slowTask{run: run, prof: tk.span.profile()})
		if len(tt.slow) > slowest {
			tt.slow = tt.slow[:slowest]
		}
	}
}

func (ts *taskSet) typ(name string) *taskType {
	tt := ts.types[name]
	if tt == nil {
		tt = &taskType{}
		ts.types[name] = tt
	}
	return tt
}

// finish counts the tasks still open when the trace ended.
func (ts *taskSet) finish() {
	for _, tk := range ts.open {
		ts.typ(tk.typ).unfinished++
	}
	clear(ts.open)
}

// summaries returns the task summaries, by type name.
func (ts *taskSet) summaries(st *stacks) []spanprofile.TaskSummary {
	var out []spanprofile.TaskSummary
	for _, name := range slices.Sorted(maps.Keys(ts.types)) {
		tt := ts.types[name]
		s := spanprofile.TaskSummary{Type: name, Count: tt.count, Unfinished: tt.unfinished,
			LatencyMax: tt.latMax, Slowest: []spanprofile.TaskRun{}, Functions: []spanprofile.FunctionTime{}}
		if tt.count > 0 {
			s.LatencyMean = tt.latSum / tt.count
			s.WorkMean = tt.workSum / tt.count
			s.SpanMean = tt.spanSum / tt.count
		}
		byFunc := map[string]int64{}
		var total int64
		for _, sl := range tt.slow {
			s.Slowest = append(s.Slowest, sl.run)
			sl.prof.each(func(i int, c cell) {
				fn := "(no stack)"
				if i > 0 {
					fn = st.sites[st.ctxSite[i]].Func
				}
				byFunc[fn] += c.ns
				total += c.ns
			})
		}
		s.Functions = topFuncs(byFunc, total, topFunctions)
		out = append(out, s)
	}
	return out
}

// topFuncs returns the n functions of most time, largest first (ties by
// name).
func topFuncs(byFunc map[string]int64, total int64, n int) []spanprofile.FunctionTime {
	out := []spanprofile.FunctionTime{}
	for fn, ns := range byFunc {
		if ns > 0 {
			out = append(out, spanprofile.FunctionTime{Func: fn, Span: ns, Share: spanprofile.Ratio(ns, total)})
		}
	}
	slices.SortFunc(out, func(a, b spanprofile.FunctionTime) int {
		return cmp.Or(cmp.Compare(b.Span, a.Span), cmp.Compare(a.Func, b.Func))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
