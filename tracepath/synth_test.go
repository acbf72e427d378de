package tracepath

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"golang.org/x/exp/trace"

	"github.com/spanprof/spanprof/spanprofile"
)

// Synthetic traces: event sequences made with trace.MakeEvent, whose DAG,
// work, span and critical path are known.

const noG = trace.NoGoroutine

// synth builds an event sequence.
type synth struct {
	t   *testing.T
	evs []trace.Event
}

// frames makes a stack from "func:line" strings, leaf first.
func frames(fs ...string) trace.Stack {
	if len(fs) == 0 {
		return trace.NoStack
	}
	var out []trace.StackFrame
	for _, f := range fs {
		fn, line, _ := strings.Cut(f, ":")
		var l uint64
		fmt.Sscan(line, &l)
		// A trace's frames are its PCs': one PC per frame.
		h := fnv.New64a()
		h.Write([]byte(f))
		// The module is /m; the runtime and sync are not its.
		file := "/m/" + fn + ".go"
		if !strings.HasPrefix(fn, "main.") {
			file = "/goroot/" + fn + ".go"
		}
		out = append(out, trace.StackFrame{PC: h.Sum64(), Func: fn, File: file, Line: l})
	}
	return trace.MakeStack(out)
}

func (s *synth) add(ev trace.Event, err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
	s.evs = append(s.evs, ev)
}

func (s *synth) goTrans(t trace.Time, by trace.GoID, stack trace.Stack, g trace.GoID, from, to trace.GoState, tstack trace.Stack) {
	s.t.Helper()
	st := trace.MakeGoStateTransition(g, from, to)
	st.Stack = tstack
	s.add(trace.MakeEvent(trace.EventConfig[trace.StateTransition]{Time: t, Kind: trace.EventStateTransition, Goroutine: by, Stack: stack, Details: st}))
}

// running states that g runs at t, as at a trace's start.
func (s *synth) running(t trace.Time, g trace.GoID) {
	s.goTrans(t, noG, trace.NoStack, g, trace.GoUndetermined, trace.GoRunning, trace.NoStack)
}

// create: by, at stack, creates g starting in entry.
func (s *synth) create(t trace.Time, by trace.GoID, stack trace.Stack, g trace.GoID, entry trace.Stack) {
	s.goTrans(t, by, stack, g, trace.GoNotExist, trace.GoRunnable, entry)
}

func (s *synth) start(t trace.Time, g trace.GoID) {
	s.goTrans(t, noG, trace.NoStack, g, trace.GoRunnable, trace.GoRunning, trace.NoStack)
}

func (s *synth) block(t trace.Time, g trace.GoID, stack trace.Stack) {
	s.goTrans(t, g, stack, g, trace.GoRunning, trace.GoWaiting, stack)
}

func (s *synth) yield(t trace.Time, g trace.GoID, stack trace.Stack) {
	s.goTrans(t, g, stack, g, trace.GoRunning, trace.GoRunnable, stack)
}

// unblock: by (noG for none), at stack, makes g runnable.
func (s *synth) unblock(t trace.Time, by trace.GoID, stack trace.Stack, g trace.GoID) {
	s.goTrans(t, by, stack, g, trace.GoWaiting, trace.GoRunnable, trace.NoStack)
}

func (s *synth) exit(t trace.Time, g trace.GoID) {
	s.goTrans(t, g, trace.NoStack, g, trace.GoRunning, trace.GoNotExist, trace.NoStack)
}

func (s *synth) sample(t trace.Time, g trace.GoID, stack trace.Stack) {
	s.t.Helper()
	s.add(trace.MakeEvent(trace.EventConfig[trace.StackSample]{Time: t, Kind: trace.EventStackSample, Goroutine: g, Stack: stack}))
}

func (s *synth) task(t trace.Time, g trace.GoID, kind trace.EventKind, id trace.TaskID, typ string, stack trace.Stack) {
	s.t.Helper()
	s.add(trace.MakeEvent(trace.EventConfig[trace.Task]{Time: t, Kind: kind, Goroutine: g, Stack: stack,
		Details: trace.Task{ID: id, Parent: trace.NoTask, Type: typ}}))
}

func (s *synth) region(t trace.Time, g trace.GoID, kind trace.EventKind, id trace.TaskID, stack trace.Stack) {
	s.t.Helper()
	s.add(trace.MakeEvent(trace.EventConfig[trace.Region]{Time: t, Kind: kind, Goroutine: g, Stack: stack,
		Details: trace.Region{Task: id, Type: "r"}}))
}

// profile analyses the events.
func (s *synth) profile() *spanprofile.Profile {
	s.t.Helper()
	a := newAnalyzer("/m/")
	for _, ev := range s.evs {
		a.event(ev)
	}
	a.finish()
	p := a.profile()
	if err := p.Check(); err != nil {
		s.t.Fatal(err)
	}
	checkTotals(s.t, p)
	return p
}

// checkTotals checks the profile format's promise: the exclusive values
// sum to the work and the span.
func checkTotals(t *testing.T, p *spanprofile.Profile) {
	t.Helper()
	var w, sp int64
	for _, c := range p.Contexts {
		w += c.OnWork.Local.Work
		sp += c.OnSpan.Local.Span
	}
	if w != p.Work || sp != p.Span {
		t.Errorf("contexts sum to work %d and span %d; the profile says %d and %d", w, sp, p.Work, p.Span)
	}
}

// stacks returns the profile's exclusive values by stack, "f:1;g:2" root
// first.
func stacksOf(p *spanprofile.Profile, span bool) map[string]int64 {
	out := map[string]int64{}
	for _, c := range p.Contexts {
		var names []string
		for _, i := range c.Stack {
			names = append(names, fmt.Sprintf("%s:%d", p.Sites[i].Func, p.Sites[i].Line))
		}
		v := c.OnWork.Local.Work
		if span {
			v = c.OnSpan.Local.Span
		}
		if v != 0 {
			out[strings.Join(names, ";")] += v
		}
	}
	return out
}

func sameMap(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// TestForkJoin: main runs, starts a child, blocks in a Wait, and the child's
// Done wakes it. The critical path runs main, the child, main again.
func TestForkJoin(t *testing.T) {
	s := &synth{t: t}
	wait := frames("runtime.gopark:1", "sync.(*WaitGroup).Wait:2", "main.main:7")
	done := frames("runtime.goready:1", "sync.(*WaitGroup).Done:3", "main.child:3")
	s.running(0, 1)
	s.create(10, 1, frames("main.main:5"), 2, frames("main.child:1"))
	s.block(30, 1, wait)
	s.start(32, 2)
	s.unblock(72, 2, done, 1)
	s.exit(75, 2)
	s.start(80, 1)
	s.exit(90, 1)
	p := s.profile()

	// Work: main 10+20+10, the child 40+3. Span: main to the go
	// statement (10), the child to its Done (40), main after it (10).
	if p.Work != 83 || p.Span != 60 {
		t.Errorf("work %d span %d, want 83 and 60", p.Work, p.Span)
	}
	if p.Spawns != 1 || p.Syncs != 1 || p.Trace.Strands != 3 || p.Trace.Goroutines != 2 {
		t.Errorf("spawns %d, wake-ups %d, strands %d, goroutines %d; want 1, 1, 3, 2", p.Spawns, p.Syncs, p.Trace.Strands, p.Trace.Goroutines)
	}
	// Event stacks lose their runtime and sync frames; the child's stacks
	// hang below the go statement; a piece ended by an event with no stack
	// goes to the goroutine's latest stack.
	sameMap(t, "work", stacksOf(p, false), map[string]int64{
		"main.main:5":              10,
		"main.main:7":              30,
		"main.main:5;main.child:3": 43,
	})
	sameMap(t, "span", stacksOf(p, true), map[string]int64{
		"main.main:5":              10,
		"main.main:7":              10,
		"main.main:5;main.child:3": 40,
	})
}

// TestNoEdgeWithoutBlocking: a wait that does not block leaves no edge: the
// child's path ends at its exit, and main goes on from its own.
func TestNoEdgeWithoutBlocking(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.create(10, 1, frames("main.main:5"), 2, frames("main.child:1"))
	s.start(12, 2)
	s.exit(62, 2)
	s.exit(100, 1)
	p := s.profile()
	if p.Work != 150 || p.Span != 100 {
		t.Errorf("work %d span %d, want 150 and 100 (main alone)", p.Work, p.Span)
	}
	sameMap(t, "span", stacksOf(p, true), map[string]int64{"main.main:5": 100})
}

// TestLongerOwnPath: an edge shorter than the woken goroutine's own path
// changes nothing; a wake-up by no goroutine (a timer) is no edge, and the
// time blocked is no strand's.
func TestLongerOwnPath(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.running(0, 2)
	s.block(5, 1, frames("main.a:0"))
	s.block(100, 2, frames("main.b:1"))
	s.unblock(140, noG, trace.NoStack, 1) // a timer: no edge
	s.start(140, 1)
	s.unblock(145, 1, frames("main.a:1"), 2) // g1's path is 10, g2's own 100
	s.exit(150, 1)
	s.start(200, 2)
	s.block(210, 2, frames("main.b:2"))
	s.unblock(1000, noG, trace.NoStack, 2)
	s.start(1010, 2)
	s.exit(1020, 2)
	p := s.profile()
	if p.Span != 120 || p.Work != 135 {
		t.Errorf("work %d span %d, want 135 and 120", p.Work, p.Span)
	}
	if p.Syncs != 1 || p.Trace.External != 2 {
		t.Errorf("wake-ups %d by goroutines, %d by none; want 1 and 2", p.Syncs, p.Trace.External)
	}
}

// TestRuntimeGoroutines: a GC worker's time is not work, and what it wakes
// has no edge from it.
func TestRuntimeGoroutines(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.create(0, noG, trace.NoStack, 9, frames("runtime.gcBgMarkWorker:1"))
	s.start(0, 9)
	s.block(10, 1, frames("runtime.gcParkAssist:1", "runtime.mallocgc:2", "main.main:3"))
	s.unblock(500, 9, frames("runtime.gcFlushBgCredit:1", "runtime.gcBgMarkWorker:9"), 1)
	s.block(600, 9, frames("runtime.gopark:1", "runtime.gcBgMarkWorker:10"))
	s.start(700, 1)
	s.exit(710, 1)
	p := s.profile()
	if p.Work != 20 || p.Span != 20 || p.Trace.RuntimeTime != 600 || p.Trace.RuntimeGoroutines != 1 || p.Trace.External != 1 {
		t.Errorf("work %d span %d runtime time %d runtime goroutines %d external %d; want 20, 20, 600, 1, 1",
			p.Work, p.Span, p.Trace.RuntimeTime, p.Trace.RuntimeGoroutines, p.Trace.External)
	}
}

// TestCPUSamples: samples in a piece share its time equally; the event stack
// is used only for pieces without one.
func TestCPUSamples(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.sample(20, 1, frames("main.f:10", "main.main:1"))
	s.sample(60, 1, frames("main.g:20", "main.main:2"))
	s.sample(70, 1, frames("main.g:20", "main.main:2"))
	s.block(90, 1, frames("main.main:3"))
	s.unblock(95, noG, trace.NoStack, 1)
	s.start(100, 1)
	s.exit(110, 1)
	p := s.profile()
	sameMap(t, "work", stacksOf(p, false), map[string]int64{
		"main.main:1;main.f:10": 30, // 90/3
		"main.main:2;main.g:20": 60,
		"main.main:3":           10, // the last piece, no sample: the latest stack
	})
	if p.Trace.CPUSamples != 3 || p.Trace.Sampled != 90 {
		t.Errorf("%d samples placed %d ns, want 3 and 90", p.Trace.CPUSamples, p.Trace.Sampled)
	}
}

// TestSyscalls: a system call is the strand's while the goroutine keeps its
// P; when the P is taken from it, it is blocked, and its next strand has
// only its own past before it.
func TestSyscalls(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.goTrans(10, 1, frames("syscall.read:1", "main.main:2"), 1, trace.GoRunning, trace.GoSyscall, trace.NoStack)
	s.goTrans(15, 1, trace.NoStack, 1, trace.GoSyscall, trace.GoRunning, trace.NoStack) // short: kept its P
	// A long one: its P (0, as MakeEvent's events say) is stolen at 40.
	s.goTrans(20, 1, frames("syscall.read:1", "main.main:3"), 1, trace.GoRunning, trace.GoSyscall, trace.NoStack)
	st := trace.MakeProcStateTransition(0, trace.ProcRunning, trace.ProcIdle)
	s.add(trace.MakeEvent(trace.EventConfig[trace.StateTransition]{Time: 40, Kind: trace.EventStateTransition, Goroutine: noG, Proc: 1, Details: st}))
	s.goTrans(1000, 1, trace.NoStack, 1, trace.GoSyscall, trace.GoRunnable, trace.NoStack)
	s.start(1010, 1)
	s.exit(1020, 1)
	p := s.profile()
	if p.Work != 50 || p.Span != 50 || p.Trace.Syscall != 25 || p.Trace.Strands != 2 {
		t.Errorf("work %d span %d syscall %d strands %d; want 50, 50, 25, 2", p.Work, p.Span, p.Trace.Syscall, p.Trace.Strands)
	}
	// Time in a call is the call's; before it, its caller's.
	sameMap(t, "work", stacksOf(p, false), map[string]int64{
		"main.main:2":                10,
		"main.main:2;syscall.read:1": 5,
		"main.main:3":                15,
		"main.main:3;syscall.read:1": 20,
	})
}

// TestRecursionFolded: a goroutine's stacks hang below its creator's go
// statement, and a site already in the context returns to it.
func TestRecursionFolded(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.create(10, 1, frames("main.f:3", "main.f:3", "main.main:1"), 2, frames("main.f.func1:4"))
	s.start(10, 2)
	s.sample(15, 2, frames("main.f:5", "main.f:3", "main.f.func1:4"))
	s.exit(20, 2)
	s.exit(30, 1)
	p := s.profile()
	sameMap(t, "work", stacksOf(p, false), map[string]int64{
		"main.main:1;main.f:3": 30,
		// f.func1's call of f returns to f's context.
		"main.main:1;main.f:3;main.f:5": 10,
	})
}

// TestTask: a task's critical path follows its own strands and the edges
// between them; work outside the task is not in it.
func TestTask(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.running(0, 3) // not in the task: it runs the whole time
	s.task(10, 1, trace.EventTaskBegin, 7, "req", frames("main.handle:1"))
	s.create(20, 1, frames("main.handle:2"), 2, frames("main.work:1"))
	s.start(25, 2)
	s.block(30, 1, frames("main.handle:3"))
	s.unblock(75, 2, frames("main.work:5"), 1)
	s.exit(75, 2)
	s.start(80, 1)
	s.task(90, 1, trace.EventTaskEnd, 7, "", frames("main.handle:4"))
	s.exit(100, 1)
	s.exit(200, 3)
	p := s.profile()
	if len(p.Tasks) != 1 {
		t.Fatalf("%d task types, want 1", len(p.Tasks))
	}
	ts := p.Tasks[0]
	// The task: main 10-20, the child 25-75, main 80-90: span 70; work
	// 10+10+50+10.
	if ts.Type != "req" || ts.Count != 1 || ts.LatencyMean != 80 || ts.SpanMean != 70 || ts.WorkMean != 80 {
		t.Errorf("task %+v; want type req, 1 task, latency 80, span 70, work 80", ts)
	}
	if len(ts.Functions) != 2 || ts.Functions[0].Func != "main.work" || ts.Functions[0].Span != 50 || ts.Functions[1].Func != "main.handle" {
		t.Errorf("task functions %+v; want main.work 50, then main.handle", ts.Functions)
	}
	if p.Span != 200 {
		t.Errorf("span %d, want 200 (goroutine 3)", p.Span)
	}
}

// TestTaskRegion: a worker that enters a region of the task after the
// task's goroutine woke it continues the task's path from that wake-up.
func TestTaskRegion(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.running(0, 2)
	s.block(1, 2, frames("main.worker:1"))
	s.task(10, 1, trace.EventTaskBegin, 3, "job", frames("main.submit:1"))
	s.unblock(30, 1, frames("main.submit:2"), 2) // task path 20
	s.block(40, 1, frames("main.submit:3"))
	s.start(50, 2)
	s.region(52, 2, trace.EventRegionBegin, 3, frames("main.worker:2"))
	s.region(92, 2, trace.EventRegionEnd, 3, frames("main.worker:3"))
	s.unblock(95, 2, frames("main.worker:4"), 1)
	s.block(96, 2, frames("main.worker:1"))
	s.start(100, 1)
	s.task(105, 1, trace.EventTaskEnd, 3, "", frames("main.submit:4"))
	s.exit(110, 1)
	p := s.profile()
	ts := p.Tasks[0]
	// Path: submit 10-30 (20), the worker's region 52-92 (40); the worker
	// after its region and main before the wake-up are not the task's.
	// Main resumes after the worker's wake-up, which came from outside
	// the task: its own task path (30) + 5.
	if ts.SpanMean != 60 || ts.WorkMean != 20+10+40+5 || ts.LatencyMean != 95 {
		t.Errorf("task %+v; want span 60, work 75, latency 95", ts)
	}
}

// TestTaskUnfinished: a task still open at the end is counted apart.
func TestTaskUnfinished(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.task(10, 1, trace.EventTaskBegin, 1, "a", frames("main.main:1"))
	s.task(20, 1, trace.EventTaskEnd, 9, "", frames("main.main:2")) // began before the trace
	s.exit(30, 1)
	p := s.profile()
	if len(p.Tasks) != 1 || p.Tasks[0].Unfinished != 1 || p.Tasks[0].Count != 0 {
		t.Errorf("tasks %+v; want one type with 1 unfinished", p.Tasks)
	}
}

// TestLibraryFramesTrimmed: an event inside a library (errgroup's Go holds
// the go statement) ends a piece spent in the module's code that called
// it; with no frame of the module, only the runtime's frames go, unless the
// goroutine was started by the module's code: then its piece goes to the go
// statement (a WaitGroup.Go's child, its function returned, wakes the
// waiter inside sync).
func TestLibraryFramesTrimmed(t *testing.T) {
	s := &synth{t: t}
	s.running(0, 1)
	s.running(0, 3)
	s.create(10, 1, frames("golang.org/x/sync/errgroup.(*Group).Go:78", "main.fib:9"), 2, frames("golang.org/x/sync/errgroup.(*Group).Go.func1:79"))
	s.start(10, 2)
	s.block(30, 1, frames("runtime.gopark:1", "sync.(*WaitGroup).Wait:2", "main.fib:10"))
	s.unblock(50, 2, frames("sync.(*WaitGroup).Add:1", "sync.(*WaitGroup).Done:2", "golang.org/x/sync/errgroup.(*Group).Go.func1:80"), 1)
	s.block(60, 3, frames("runtime.gopark:1", "net/http.(*conn).serve:5"))
	p := s.profile()
	sameMap(t, "work", stacksOf(p, false), map[string]int64{
		"main.fib:9":               60, // main 10, the child 50
		"main.fib:10":              20,
		"net/http.(*conn).serve:5": 60,
	})
}

// TestCPUBound: once the samples show the profiler's period (4 ms here), a
// piece longer than its samples allow is cut to what they allow: its
// thread did not run the rest.
func TestCPUBound(t *testing.T) {
	const ms = 1_000_000
	s := &synth{t: t}
	s.running(0, 1)
	for i := 1; i <= 40; i++ {
		s.sample(trace.Time(4*ms*i), 1, frames("main.f:1"))
	}
	s.block(164*ms, 1, frames("main.main:2"))
	s.unblock(200*ms, noG, trace.NoStack, 1)
	s.start(200*ms, 1)
	s.block(230*ms, 1, frames("main.main:3")) // 30 ms, no sample
	p := s.profile()
	period := int64(1 << 22) // the upper edge of 4 ms's quarter-octave bin
	if p.Trace.Period != period || p.Work != 164*ms+period || p.Trace.Excluded != 30*ms-period || p.Trace.Corrected != 1 {
		t.Errorf("period %d, work %d, excluded %d, corrected %d; want %d, %d, %d, 1",
			p.Trace.Period, p.Work, p.Trace.Excluded, p.Trace.Corrected, period, 164*ms+period, 30*ms-period)
	}
}
