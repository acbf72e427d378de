package tracepath

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/exp/trace"
)

// TestOracle runs random executions (goroutines created, running on at most
// a few Ps, blocking, waking each other, yielding, making system calls,
// sampled by the CPU profiler) through the analysis and through a brute-force
// oracle that keeps the whole DAG (every event of every goroutine a node,
// with its predecessors) and finds the longest path by dynamic programming
// afterwards. Work, span and the critical path's time per calling context
// must be equal. The oracle shares no code with the analysis: it has its own
// stacks, folding and attribution, written from docs/trace-mode.md.
func TestOracle(t *testing.T) {
	runs := 3000
	if testing.Short() {
		runs = 300
	}
	for seed := range runs {
		t.Run("", func(t *testing.T) {
			o := newOracleRun(t, uint64(seed))
			o.generate(80)
			p := o.s.profile()
			work, span, prof := o.solve()
			if p.Work != work || p.Span != span {
				t.Fatalf("seed %d: work %d span %d, oracle %d and %d", seed, p.Work, p.Span, work, span)
			}
			got := stacksOf(p, true)
			if fmt.Sprint(got) != fmt.Sprint(prof) {
				t.Fatalf("seed %d: critical path\n got %v\nwant %v", seed, got, prof)
			}
			if w := stacksOf(p, false); fmt.Sprint(w) != fmt.Sprint(o.workBy) {
				t.Fatalf("seed %d: work by stack\n got %v\nwant %v", seed, w, o.workBy)
			}
		})
	}
}

// onode is one event of a goroutine in the oracle's DAG: the longest path
// ending there goes through its predecessor in the goroutine (after a
// segment of running time, split by context) or through an edge.
type onode struct {
	g     int
	prev  *onode     // the goroutine's previous event
	seg   []ocontrib // the time between prev and this event, if running
	in    *onode     // an edge into it (creation, wake-up), at a strand's start
	sink  bool       // a strand ends here
	best  int64      // longest path ending here
	via   *onode     // the predecessor on it
	viaIn bool       // reached through in
}

type ocontrib struct {
	ctx string
	ns  int64
}

type ogor struct {
	state   string // running, runnable, waiting, syscall, exited
	last    *onode
	ctx     []string // the creator's context at the go statement
	stack   []string // trimmed, latest
	raw     []string // untrimmed, latest
	entry   []string
	samples [][]string
	since   int64 // start of the current segment
	pending *onode
}

type oracleRun struct {
	t      *testing.T
	r      *rand.Rand
	s      *synth
	now    int64
	gs     []*ogor
	nodes  []*onode
	workBy map[string]int64
	procs  int
}

func newOracleRun(t *testing.T, seed uint64) *oracleRun {
	o := &oracleRun{t: t, r: rand.New(rand.NewPCG(seed, 17)), s: &synth{t: t}, workBy: map[string]int64{}}
	o.procs = 1 + o.r.IntN(3)
	return o
}

var oracleFuncs = []string{"main.a", "main.b", "main.c", "main.d"}

// randStack returns a random stack, leaf first, sometimes with runtime or
// sync frames at the leaf and recursion.
func (o *oracleRun) randStack() []string {
	var st []string
	switch o.r.IntN(3) {
	case 0:
		st = append(st, "runtime.park:1")
	case 1:
		st = append(st, "runtime.park:1", "sync.(*Mutex).Lock:2")
	}
	for range 1 + o.r.IntN(3) {
		st = append(st, fmt.Sprintf("%s:%d", oracleFuncs[o.r.IntN(len(oracleFuncs))], 1+o.r.IntN(3)))
	}
	return st
}

func trimmedStack(st []string) []string {
	k := 0
	for k < len(st)-1 && (strings.HasPrefix(st[k], "runtime.") || strings.HasPrefix(st[k], "sync.")) {
		k++
	}
	return st[k:]
}

// foldCtx appends a stack (leaf first) to a context (root first), folding
// recursion: a frame already in the context returns to it.
func foldCtx(ctx, st []string) []string {
	out := append([]string(nil), ctx...)
	for i := len(st) - 1; i >= 0; i-- {
		found := -1
		for j, f := range out {
			if f == st[i] {
				found = j
				break
			}
		}
		if found >= 0 {
			out = out[:found+1]
		} else {
			out = append(out, st[i])
		}
	}
	return out
}

// node adds an event of goroutine g to the DAG, closing its segment: its
// time goes to the samples taken in it, else to stack (trimmed), else the
// goroutine's latest stack, else its entry.
func (o *oracleRun) node(g int, stack []string) *onode {
	gr := o.gs[g]
	n := &onode{g: g, prev: gr.last}
	if gr.state == "running" || gr.state == "syscall" {
		d := o.now - gr.since
		if d > 0 {
			if k := int64(len(gr.samples)); k > 0 {
				for i, s := range gr.samples {
					ns := d / k
					if i == 0 {
						ns += d - d/k*k
					}
					n.seg = append(n.seg, ocontrib{strings.Join(foldCtx(gr.ctx, s), ";"), ns})
				}
				gr.samples = nil
			} else {
				st := gr.stack
				if gr.state == "syscall" {
					st = gr.raw
				}
				if stack != nil {
					st = trimmedStack(stack)
				}
				if st == nil {
					st = gr.entry
				}
				n.seg = append(n.seg, ocontrib{strings.Join(foldCtx(gr.ctx, st), ";"), d})
			}
			for _, c := range n.seg {
				o.workBy[c.ctx] += c.ns
			}
		}
		gr.since = o.now
	}
	if stack != nil {
		gr.stack, gr.raw = trimmedStack(stack), stack
	}
	gr.last = n
	o.nodes = append(o.nodes, n)
	return n
}

func toStack(st []string) trace.Stack { return frames(st...) }

func (o *oracleRun) pick(state string) int {
	var ids []int
	for i, g := range o.gs {
		if g.state == state {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return -1
	}
	return ids[o.r.IntN(len(ids))]
}

func (o *oracleRun) count(state string) int {
	n := 0
	for _, g := range o.gs {
		if g.state == state || state == "executing" && (g.state == "running" || g.state == "syscall") {
			n++
		}
	}
	return n
}

func id(g int) trace.GoID { return trace.GoID(g + 1) }

// start makes a runnable goroutine run; its first event takes the edge
// that woke it.
func (o *oracleRun) start(g int) {
	gr := o.gs[g]
	o.s.start(trace.Time(o.now), id(g))
	n := o.node(g, nil) // runnable until now: no time before it
	n.in, gr.pending = gr.pending, nil
	gr.state = "running"
	gr.since = o.now
}

func (o *oracleRun) generate(steps int) {
	// Goroutine 0 runs from the start.
	o.gs = append(o.gs, &ogor{state: "running", entry: []string{"main.main:1"}})
	o.s.running(0, 1)
	o.node(0, nil)
	for range steps {
		o.now += 1 + int64(o.r.IntN(1000))
		if o.count("executing") < o.procs && o.count("runnable") > 0 && o.r.IntN(3) == 0 {
			o.start(o.pick("runnable"))
			continue
		}
		if w := o.pick("waiting"); w >= 0 && o.r.IntN(8) == 0 {
			// A timer or the network wakes it: no edge.
			o.s.unblock(trace.Time(o.now), noG, trace.NoStack, id(w))
			o.gs[w].state = "runnable"
			continue
		}
		if g := o.pick("syscall"); g >= 0 && o.r.IntN(2) == 0 {
			o.s.goTrans(trace.Time(o.now), id(g), trace.NoStack, id(g), trace.GoSyscall, trace.GoRunning, trace.NoStack)
			o.node(g, nil)
			o.gs[g].state = "running"
			continue
		}
		g := o.pick("running")
		if g < 0 {
			if o.count("runnable") > 0 {
				o.start(o.pick("runnable"))
				continue
			}
			break
		}
		st := o.randStack()
		switch k := o.r.IntN(10); {
		case k == 0 && len(o.gs) < 10:
			c := len(o.gs)
			entry := []string{fmt.Sprintf("main.g%d:1", c)}
			o.s.create(trace.Time(o.now), id(g), toStack(st), id(c), toStack(entry))
			src := o.node(g, st)
			o.gs = append(o.gs, &ogor{state: "runnable", entry: entry, ctx: foldCtx(o.gs[g].ctx, o.gs[g].stack), pending: src})
		case k <= 2:
			if w := o.pick("waiting"); w >= 0 {
				o.s.unblock(trace.Time(o.now), id(g), toStack(st), id(w))
				src := o.node(g, st)
				o.gs[w].state = "runnable"
				o.gs[w].pending = src
			}
		case k == 3:
			o.s.block(trace.Time(o.now), id(g), toStack(st))
			o.node(g, st).sink = true
			o.gs[g].state = "waiting"
		case k == 4:
			o.s.yield(trace.Time(o.now), id(g), toStack(st))
			o.node(g, st).sink = true
			o.gs[g].state = "runnable"
		case k == 5 && g != 0:
			o.s.exit(trace.Time(o.now), id(g))
			o.node(g, nil).sink = true
			o.gs[g].state = "exited"
		case k == 6:
			o.s.goTrans(trace.Time(o.now), id(g), toStack(st), id(g), trace.GoRunning, trace.GoSyscall, trace.NoStack)
			o.node(g, st)
			o.gs[g].state = "syscall"
		default:
			o.s.sample(trace.Time(o.now), id(g), toStack(st))
			o.gs[g].samples = append(o.gs[g].samples, st)
		}
	}
	// The trace ends with its last event: every strand still running ends
	// there.
	o.now = int64(o.s.evs[len(o.s.evs)-1].Time())
	for g, gr := range o.gs {
		if gr.state == "running" || gr.state == "syscall" {
			o.node(g, nil).sink = true
		}
	}
}

// solve computes the work, the span and the critical path's time per
// context by dynamic programming over the nodes in the order they happened.
func (o *oracleRun) solve() (work, span int64, prof map[string]int64) {
	var end *onode
	for _, n := range o.nodes {
		for _, c := range n.seg {
			work += c.ns
		}
		if n.prev != nil {
			n.best, n.via = n.prev.best, n.prev
			for _, c := range n.seg {
				n.best += c.ns
			}
		}
		if n.in != nil && n.in.best > n.best {
			n.best, n.via, n.viaIn = n.in.best, n.in, true
		}
		if n.sink && n.best > span {
			span, end = n.best, n
		}
	}
	prof = map[string]int64{}
	for n := end; n != nil && n.via != nil; n = n.via {
		if !n.viaIn {
			for _, c := range n.seg {
				if c.ns != 0 {
					prof[c.ctx] += c.ns
				}
			}
		}
	}
	return work, span, prof
}
