package shadow

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// This file checks the online algorithm against a brute-force oracle: the
// oracle records the whole DAG of a run (points joined by strand, spawn,
// continuation and join edges), computes longest paths by dynamic
// programming over it, walks the critical path back from its sink, and
// derives every measurement from its definition in doc.go — the invocation
// tree for top-call-site and top-caller, sums over traces for work, and walks
// of the path for everything on span. Nothing is shared with the engine but
// the event stream and the tie-breaking rule (a join edge wins only when
// strictly longer; among a join object's contributions the first longest
// wins; among sinks the first longest wins).

// synthetic is a deterministic measure that only the test moves.
type synthetic struct{ now uint64 }

func (s *synthetic) Read() uint64 { return s.now }

type oEdge struct {
	from  int
	w, bw int64 // length on the plain and on the burdened DAG
	inv   int   // owning invocation of a strand edge, -1 if not a strand
	done  *oDone
}

type oDone struct {
	open []int // invocations open in the contributing goroutine
	pos  int   // strands before the contribution
}

type oPoint struct{ preds []oEdge }

type oInv struct {
	site, fn       int
	ctx            string
	parent         int
	topCS, topCall bool
	start, end     int // points
	firstStrand    int
	lastStrand     int // strands [firstStrand, lastStrand) are in its trace
	done           bool
}

type oStrand struct {
	d     int64
	inv   int
	point int // the point the strand ends at
}

type oTask struct {
	cur   int
	stack []int // invocations open in this goroutine
}

type oracle struct {
	burden  int64
	sites   []SiteInfo
	fnOf    []int
	points  []oPoint
	strands []oStrand
	invs    []oInv
	tasks   []*oTask
	joins   map[unsafe.Pointer][]oEdge
	sinks   []int
	active  []int // all open invocations, outermost first
	spawns  int64
	syncs   int64
}

func newOracle(sites []SiteInfo, burden int64) *oracle {
	o := &oracle{burden: burden, sites: sites, joins: map[unsafe.Pointer][]oEdge{}}
	fnID := map[string]int{}
	for _, s := range sites {
		if _, ok := fnID[s.Caller]; !ok {
			fnID[s.Caller] = len(fnID)
		}
		o.fnOf = append(o.fnOf, fnID[s.Caller])
	}
	o.points = append(o.points, oPoint{})
	o.invs = append(o.invs, oInv{site: -1, parent: -1, ctx: ""}) // the root
	o.tasks = append(o.tasks, &oTask{cur: 0, stack: []int{0}})
	o.active = []int{0}
	return o
}

func (o *oracle) task() *oTask { return o.tasks[len(o.tasks)-1] }

func (o *oracle) point(preds ...oEdge) int {
	o.points = append(o.points, oPoint{preds: preds})
	return len(o.points) - 1
}

func (o *oracle) strand(d int64) {
	if d == 0 {
		return
	}
	tk := o.task()
	inv := tk.stack[len(tk.stack)-1]
	tk.cur = o.point(oEdge{from: tk.cur, w: d, bw: d, inv: inv})
	o.strands = append(o.strands, oStrand{d: d, inv: inv, point: tk.cur})
}

func (o *oracle) push(site int) {
	tk := o.task()
	parent := o.active[len(o.active)-1]
	inv := oInv{site: site, fn: o.fnOf[site], parent: parent, topCS: true, topCall: true, start: tk.cur, firstStrand: len(o.strands)}
	inv.ctx = o.invs[parent].ctx + "/" + strconv.Itoa(site)
	for _, a := range o.active[1:] { // outermost first: fold to the outermost
		if o.invs[a].site == site {
			if inv.topCS {
				inv.ctx = o.invs[a].ctx
			}
			inv.topCS = false
		}
		if o.invs[a].fn == inv.fn {
			inv.topCall = false
		}
	}
	o.invs = append(o.invs, inv)
	id := len(o.invs) - 1
	o.active = append(o.active, id)
	tk.stack = append(tk.stack, id)
}

func (o *oracle) pop() int {
	tk := o.task()
	id := tk.stack[len(tk.stack)-1]
	tk.stack = tk.stack[:len(tk.stack)-1]
	o.active = o.active[:len(o.active)-1]
	// The end of an invocation is an event of its own, after a Done that
	// ends its body: a path leaving through that Done does not pass it.
	tk.cur = o.point(oEdge{from: tk.cur, inv: -1})
	o.invs[id].end = tk.cur
	o.invs[id].lastStrand = len(o.strands)
	o.invs[id].done = true
	return id
}

func (o *oracle) CallBegin(site SiteID) { o.push(int(site)) }
func (o *oracle) CallEnd()              { o.pop() }

func (o *oracle) SpawnBegin(site SiteID) {
	o.spawns++
	parent := o.task()
	child := &oTask{cur: o.point(oEdge{from: parent.cur, inv: -1})}
	parent.cur = o.point(oEdge{from: parent.cur, bw: o.burden, inv: -1})
	o.tasks = append(o.tasks, child)
	o.push(int(site))
}

func (o *oracle) SpawnEnd(obj unsafe.Pointer) {
	o.pop()
	tk := o.task()
	o.sinks = append(o.sinks, tk.cur)
	if obj != nil {
		o.joins[obj] = append(o.joins[obj], oEdge{from: tk.cur, inv: -1})
	}
	o.tasks = o.tasks[:len(o.tasks)-1]
}

func (o *oracle) Done(obj unsafe.Pointer) {
	tk := o.task()
	d := &oDone{open: append([]int(nil), tk.stack...), pos: len(o.strands)}
	o.joins[obj] = append(o.joins[obj], oEdge{from: tk.cur, inv: -1, done: d})
}

func (o *oracle) Wait(obj unsafe.Pointer) {
	o.syncs++
	cs := o.joins[obj]
	delete(o.joins, obj)
	if len(cs) == 0 {
		return
	}
	tk := o.task()
	jn := o.point(cs...)
	tk.cur = o.point(oEdge{from: tk.cur, inv: -1}, oEdge{from: jn, inv: -1})
}

type oResult struct {
	work, span, bspan int64
	spawns, syncs     int64
	ctx               map[string][2]spanprofile.Measurement // on work, on span
}

// solve computes everything by brute force.
func (o *oracle) solve() oResult {
	o.sinks = append(o.sinks, o.tasks[0].cur)
	n := len(o.points)
	T := make([]int64, n)
	B := make([]int64, n)
	choice := make([]int, n) // index of the chosen pred
	for p := 1; p < n; p++ {
		for i, e := range o.points[p].preds {
			if t := T[e.from] + e.w; i == 0 || t > T[p] {
				T[p], choice[p] = t, i
			}
			if b := B[e.from] + e.bw; i == 0 || b > B[p] {
				B[p] = b
			}
		}
	}
	res := oResult{spawns: o.spawns, syncs: o.syncs, ctx: map[string][2]spanprofile.Measurement{}}
	sink := o.sinks[0]
	for _, s := range o.sinks {
		if T[s] > T[sink] {
			sink = s
		}
		if B[s] > res.bspan {
			res.bspan = B[s]
		}
	}
	res.span = T[sink]
	for _, s := range o.strands {
		res.work += s.d
	}
	// traceWork(i, upto) sums strands in invocation i's subtree before strand upto.
	under := func(inv, anc int) bool {
		for ; inv >= 0; inv = o.invs[inv].parent {
			if inv == anc {
				return true
			}
		}
		return false
	}
	traceWork := func(i, upto int) (total, own int64) {
		for k := o.invs[i].firstStrand; k < upto; k++ {
			if under(o.strands[k].inv, i) {
				total += o.strands[k].d
			}
			if o.strands[k].inv == i {
				own += o.strands[k].d
			}
		}
		return
	}
	// ownOnPath walks the longest path back from point p and sums the
	// strands of invocation i on it.
	strandAt := map[int]int64{}
	for _, s := range o.strands {
		strandAt[s.point] = s.d
	}
	ownOnPath := func(i, p int) (own int64) {
		for p != 0 {
			e := o.points[p].preds[choice[p]]
			if e.inv == i {
				own += e.w
			}
			p = e.from
		}
		return
	}
	add := func(ctx string, which int, m spanprofile.Measurement) {
		v := res.ctx[ctx]
		addMeasurement(&v[which], &m)
		res.ctx[ctx] = v
	}
	triples := func(inv *oInv, work, span, own int64) spanprofile.Measurement {
		m := spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Work: own}}
		if inv.topCS {
			m.TopCallSite = spanprofile.Triple{Count: 1, Work: work, Span: span}
		}
		if inv.topCall {
			m.TopCaller = spanprofile.Triple{Count: 1, Work: work, Span: span}
		}
		return m
	}
	// On work: every completed invocation.
	for i := 1; i < len(o.invs); i++ {
		inv := &o.invs[i]
		if !inv.done {
			continue
		}
		work, own := traceWork(i, inv.lastStrand)
		m := triples(inv, work, T[inv.end]-T[inv.start], own)
		m.Local.Span = ownOnPath(i, inv.end)
		add(inv.ctx, 0, m)
	}
	// On span: walk the critical path.
	onPath := map[int]bool{}
	for p := sink; ; {
		onPath[p] = true
		if p == 0 {
			break
		}
		e := o.points[p].preds[choice[p]]
		if e.inv >= 0 {
			add(o.invs[e.inv].ctx, 1, spanprofile.Measurement{Local: spanprofile.Triple{Span: e.w}})
		}
		if e.done != nil { // the path leaves a goroutine through a Done
			for _, i := range e.done.open {
				if i == 0 {
					continue
				}
				inv := &o.invs[i]
				work, own := traceWork(i, e.done.pos)
				add(inv.ctx, 1, triples(inv, work, T[e.from]-T[inv.start], own))
			}
		}
		p = e.from
	}
	for i := 1; i < len(o.invs); i++ {
		if inv := &o.invs[i]; inv.done && onPath[inv.end] {
			work, own := traceWork(i, inv.lastStrand)
			add(inv.ctx, 1, triples(inv, work, T[inv.end]-T[inv.start], own))
		}
	}
	_, rootOwn := traceWork(0, len(o.strands))
	root := res.ctx[""]
	root[0].Local = spanprofile.Triple{Count: 1, Work: rootOwn, Span: root[1].Local.Span}
	// The root invocation is on every path: its local work on span is
	// all its own work.
	root[1].Local.Count, root[1].Local.Work = 1, rootOwn
	res.ctx[""] = root
	return res
}

// events is what the random program calls: the engine and the oracle alike.
type events interface {
	CallBegin(SiteID)
	CallEnd()
	SpawnBegin(SiteID)
	SpawnEnd(unsafe.Pointer)
	Done(unsafe.Pointer)
	Wait(unsafe.Pointer)
}

type opKind int

const (
	opWork opKind = iota
	opCall
	opSpawnReturn // errgroup.Go / wg.Go: the return signals the join object
	opSpawnDone   // go func() { defer wg.Done(); ... }()
	opSpawnFree   // a goroutine nobody joins
	opDone
	opWait
)

type op struct {
	kind   opKind
	d      int64
	site   int
	callee int
	obj    int // 0..2 locals, 3 the parameter
	pass   int // object passed to the callee as its parameter
}

type randProgram struct {
	fns      [][]op
	sites    []SiteInfo
	maxDepth int
}

func genProgram(r *rand.Rand) *randProgram {
	p := &randProgram{maxDepth: 2 + r.IntN(4)}
	nf := 1 + r.IntN(4)
	for f := 0; f < nf; f++ {
		var ops []op
		for k := r.IntN(9); k >= 0; k-- {
			o := op{kind: opKind(r.IntN(7)), d: int64(r.IntN(4)) * int64(1+r.IntN(5)), obj: r.IntN(4), pass: r.IntN(4), callee: r.IntN(nf)}
			if o.kind >= opCall && o.kind <= opSpawnFree {
				o.site = len(p.sites)
				kind := spanprofile.KindSpawn
				if o.kind == opCall {
					kind = spanprofile.KindCall
				}
				p.sites = append(p.sites, SiteInfo{File: "p.go", Line: o.site + 1, Func: fmt.Sprintf("f%d", o.callee), Caller: fmt.Sprintf("f%d", f), Kind: kind})
			}
			ops = append(ops, o)
		}
		p.fns = append(p.fns, ops)
	}
	if len(p.sites) == 0 {
		p.sites = append(p.sites, SiteInfo{File: "p.go", Line: 1, Func: "f0", Caller: "main", Kind: spanprofile.KindCall})
		p.fns[0] = append(p.fns[0], op{kind: opWork, d: 3})
	}
	return p
}

type joinObj struct{ id int }

type runner struct {
	p     *randProgram
	ev    []events
	m     *synthetic
	o     *oracle
	fuel  int
	objID int
	// scale, if set, changes the length of every strand (whatif_test.go).
	scale func(int64) int64
	// glue makes the engines glue the events with nothing between them
	// (glue.go): a call's end right before a wait, a Done that is a
	// child's last action.
	glue bool
}

func (rn *runner) work(d int64) {
	if rn.scale != nil {
		d = rn.scale(d)
	}
	rn.m.now += uint64(d)
	rn.o.strand(d)
}

func (rn *runner) run(f int, param *joinObj, depth int) {
	var locals [4]*joinObj
	for i := 0; i < 3; i++ {
		rn.objID++
		locals[i] = &joinObj{rn.objID}
	}
	locals[3] = param
	if param == nil {
		locals[3] = locals[0]
	}
	ops := rn.p.fns[f]
	for i, o := range ops {
		obj := unsafe.Pointer(locals[o.obj])
		rn.fuel--
		switch o.kind {
		case opWork:
			rn.work(o.d)
		case opDone:
			rn.each(func(e events) { e.Done(obj) })
		case opWait:
			rn.each(func(e events) { e.Wait(obj) })
		default:
			if depth >= rn.p.maxDepth || rn.fuel <= 0 {
				rn.work(1)
				continue
			}
			site := SiteID(o.site)
			if o.kind == opCall {
				rn.each(func(e events) { e.CallBegin(site) })
				rn.run(o.callee, locals[o.pass], depth+1)
				if rn.glue && i+1 < len(ops) && ops[i+1].kind == opWait {
					rn.each(func(e events) { glued(e).CallEndGlue() })
					continue
				}
				rn.each(func(e events) { e.CallEnd() })
				continue
			}
			rn.each(func(e events) { e.SpawnBegin(site) })
			rn.run(o.callee, locals[o.pass], depth+1)
			// A call's begin follows the child's end directly where the
			// next op is a call that has the depth and fuel to be one.
			end := func(e events, obj unsafe.Pointer) { e.SpawnEnd(obj) }
			if rn.glue && i+1 < len(ops) && ops[i+1].kind == opCall && depth < rn.p.maxDepth && rn.fuel > 1 {
				end = func(e events, obj unsafe.Pointer) { glued(e).SpawnEndGlue(obj) }
			}
			switch o.kind {
			case opSpawnReturn:
				rn.each(func(e events) { end(e, obj) })
			case opSpawnDone:
				if rn.glue {
					rn.each(func(e events) { glued(e).DoneLast(obj) })
				} else {
					rn.each(func(e events) { e.Done(obj) })
				}
				rn.each(func(e events) { end(e, nil) })
			case opSpawnFree:
				rn.each(func(e events) { end(e, nil) })
			}
		}
	}
}

func (rn *runner) each(f func(events)) {
	for _, e := range rn.ev {
		f(e)
	}
}

// contextKey renders a profile's stack as the oracle names contexts.
func contextKey(stack []int) string {
	var b strings.Builder
	for _, s := range stack {
		b.WriteString("/" + strconv.Itoa(s))
	}
	return b.String()
}

func checkAgainstOracle(t *testing.T, seed uint64) {
	checkAgainstOracleGlued(t, seed, false)
}

// checkAgainstOracleGlued is checkAgainstOracle where glue says whether the
// engine glues the events with nothing between them.
func checkAgainstOracleGlued(t *testing.T, seed uint64, glue bool) {
	r := rand.New(rand.NewPCG(seed, 17))
	p := genProgram(r)
	burden := int64(r.IntN(6))
	tab := &siteTable{}
	tab.add(p.sites)
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Burden: burden}, tab)
	// Glue takes effect where the measure is read twice per event, as the
	// clock and cpu are.
	e.twoReads = glue
	o := newOracle(p.sites, burden)
	rn := &runner{p: p, ev: []events{e, o}, m: m, o: o, fuel: 60 + r.IntN(200), glue: glue}
	rn.work(int64(r.IntN(3)))
	rn.run(0, nil, 0)
	rn.work(int64(r.IntN(3)))
	compareWithOracle(t, seed, e.stop(), o.solve())
	if e.ap.live != 0 {
		t.Errorf("seed %d: %d activity nodes live after the run, want 0", seed, e.ap.live)
	}
}

// glueEvents are the glued events (glue.go); the oracle takes them as the
// plain ones, with the empty strand between.
type glueEvents interface {
	CallEndGlue()
	SpawnEndGlue(unsafe.Pointer)
	DoneLast(unsafe.Pointer)
}

func glued(e events) glueEvents { return e.(glueEvents) }

func (o *oracle) SpawnEndGlue(obj unsafe.Pointer) { o.SpawnEnd(obj) }
func (o *oracle) CallEndGlue()                    { o.CallEnd() }
func (o *oracle) DoneLast(obj unsafe.Pointer)     { o.Done(obj) }

// compareWithOracle checks every number of a profile against the oracle's.
func compareWithOracle(t *testing.T, seed uint64, got *spanprofile.Profile, want oResult) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d: "+format, append([]any{seed}, args...)...)
	}
	if got.Work != want.work || got.Span != want.span || got.BurdenedSpan != want.bspan {
		fail("work/span/burdened = %d/%d/%d, oracle %d/%d/%d", got.Work, got.Span, got.BurdenedSpan, want.work, want.span, want.bspan)
	}
	if got.Spawns != want.spawns || got.Syncs != want.syncs {
		fail("spawns/syncs = %d/%d, oracle %d/%d", got.Spawns, got.Syncs, want.spawns, want.syncs)
	}
	seen := map[string]bool{}
	for _, c := range got.Contexts {
		k := contextKey(c.Stack)
		seen[k] = true
		w := want.ctx[k]
		if c.OnWork != w[0] {
			fail("context %q on work = %+v, oracle %+v", k, c.OnWork, w[0])
		}
		if c.OnSpan != w[1] {
			fail("context %q on span = %+v, oracle %+v", k, c.OnSpan, w[1])
		}
	}
	for k, w := range want.ctx {
		if !seen[k] && (w[0] != spanprofile.Measurement{} || w[1] != spanprofile.Measurement{}) {
			fail("context %q missing from the profile; oracle %+v", k, w)
		}
	}
}

// TestOracleGluedEvents: the random programs with the events that have
// nothing between them glued (glue.go) give every number the oracle
// computes from the plain event stream, where the strand between them is
// empty: a call's end right before a wait, or a child's end right before a
// call, reads the measure once for both, and a Done that is the child's last action is taken by the child's end.
func TestOracleGluedEvents(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		checkAgainstOracleGlued(t, seed, true)
		if t.Failed() {
			return
		}
	}
}

func TestOracleRandomPrograms(t *testing.T) {
	// The non-series-parallel shapes that exercise the local-span records
	// (a wait in a callee adopting a path forked before the call, say) are
	// rare among random programs: 20000 of them is what it takes for a
	// broken rule to show (checked by mutating the engine).
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		checkAgainstOracle(t, seed)
		if t.Failed() {
			return
		}
	}
}
