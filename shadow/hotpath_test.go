package shadow

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/parlib"
	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
	"golang.org/x/sync/errgroup"
)

func benchTable() *siteTable {
	tab := &siteTable{}
	tab.add([]SiteInfo{
		{File: "b.go", Line: 1, Func: "child", Caller: "main", Kind: spanprofile.KindSpawn},
		{File: "b.go", Line: 2, Func: "callee", Caller: "main", Kind: spanprofile.KindCall},
		{File: "b.go", Line: 3, Func: "fib", Caller: "fib", Kind: spanprofile.KindSpawn},
		{File: "b.go", Line: 4, Func: "fib", Caller: "fib", Kind: spanprofile.KindCall},
	})
	return tab
}

// benchTableOf is benchTable grown to n sites, each a call of a function
// of its own from a caller of its own, as a large program's rewrite makes
// them.
func benchTableOf(n int) *siteTable {
	tab := benchTable()
	var more []SiteInfo
	for i := len(tab.sites); i < n; i++ {
		more = append(more, SiteInfo{File: "more.go", Line: i, Func: fmt.Sprint("callee", i), Caller: fmt.Sprint("caller", i), Kind: spanprofile.KindCall})
	}
	tab.add(more)
	return tab
}

func clockEngine(tb testing.TB) *engine {
	m, err := perf.Open(perf.Clock)
	if err != nil {
		tb.Fatal(err)
	}
	return newEngine(config{Measure: m, MeasureName: "clock", Unit: "nanoseconds", Overhead: calibrateOverhead(m, m.Name(), serialMode, m.PerThread())}, benchTable())
}

// defaultEngine returns an engine that reads the default measure (cpu
// where the platform has it), on the calling goroutine's thread, locked
// as a serial run's is: the measure a profiled program reads, so the cost
// per event that the benchmarks report is a run's. (A run also keeps the
// thread on one CPU; the benchmarks do not, so as not to leave a pinned
// thread behind.) The caller defers done.
//
// With SPANPROF_BENCH_INSTR=1, as bench/instr runs them under Valgrind to
// count their instructions, they read a stepClock instead.
func defaultEngine(tb testing.TB) (e *engine, done func()) {
	runtime.LockOSThread()
	if os.Getenv("SPANPROF_BENCH_INSTR") == "1" {
		e = newEngine(config{Measure: &stepClock{}, MeasureName: perf.Clock, Unit: perf.UnitNanoseconds}, benchTable())
		return e, runtime.UnlockOSThread
	}
	m, err := perf.Open(perf.Default())
	if err != nil {
		runtime.UnlockOSThread()
		tb.Fatal(err)
	}
	e = newEngine(config{Measure: m, MeasureName: m.Name(), Unit: m.Unit(), PerThread: m.PerThread(), Overhead: calibrateOverhead(m, m.Name(), serialMode, m.PerThread())}, benchTable())
	tb.Logf("measure %s, read by %s; overhead %d per event", m.Name(), perf.Source(m), e.overhead)
	return e, runtime.UnlockOSThread
}

type wgStub struct{ n int64 }

// stepClock is the measure of the microbenchmarks that bench/instr counts:
// a clock, read twice per event as the clock is, that advances a fixed step
// at every read, with no overhead subtracted. Every strand then has the same
// length and the engine takes the same path on every run. On the real
// clock under Valgrind, which path of two was longer at a wait changed from
// run to run, and the engine's work with it (BenchmarkSpawnDoneSync's count
// varied by up to 370 instructions per operation); and Valgrind cannot run the
// cpu measure's RDTSCP.
type stepClock struct{ now uint64 }

func (c *stepClock) Read() uint64 {
	c.now += 1000
	return c.now
}

// cpuTimer reports, besides ns/op, the process's CPU time per op: on a
// shared machine other processes stretch wall time but not our CPU time, so
// cpu-ns/op is the number to compare with the targets. Where the machine
// has a hardware instruction counter it reports instructions/op too,
// counted on the calling thread, which the caller has locked (defaultEngine).
// events is how many engine events an op makes (0: not a fixed number);
// where it is known the figures are also given per event.
func cpuTimer(b *testing.B, events int) func() {
	cpu := func() int64 { return int64(processCPU()) }
	ins, err := perf.Open(perf.Instructions)
	if err != nil {
		ins = nil
	}
	b.ResetTimer()
	t0 := cpu()
	var i0 uint64
	if ins != nil {
		i0 = ins.Read()
	}
	return func() {
		b.StopTimer()
		per := func(v float64, unit string) {
			b.ReportMetric(v/float64(b.N), unit+"/op")
			if events > 0 {
				b.ReportMetric(v/float64(b.N)/float64(events), unit+"/event")
			}
		}
		if ins != nil {
			per(float64(ins.Read()-i0), "instructions")
			ins.Close()
		}
		per(float64(cpu()-t0), "cpu-ns")
	}
}

// BenchmarkSpawnSync is a spawn of an empty child and the wait that joins
// it, in serial mode with the clock: the cost every fork/join pays.
func BenchmarkSpawnSync(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	obj := unsafe.Pointer(new(wgStub))
	defer cpuTimer(b, 3)()
	for i := 0; i < b.N; i++ {
		e.SpawnBegin(0)
		e.SpawnEnd(obj)
		e.Wait(obj)
	}
}

// BenchmarkSpawnDoneSync is the go + defer wg.Done() form of the same.
func BenchmarkSpawnDoneSync(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	obj := unsafe.Pointer(new(wgStub))
	defer cpuTimer(b, 4)()
	for i := 0; i < b.N; i++ {
		e.SpawnBegin(0)
		e.Done(obj)
		e.SpawnEnd(nil)
		e.Wait(obj)
	}
}

// BenchmarkSpawnDoneLastSync is BenchmarkSpawnDoneSync with the Done the
// child's last action (glue.go): no event for it.
func BenchmarkSpawnDoneLastSync(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	obj := unsafe.Pointer(new(wgStub))
	defer cpuTimer(b, 3)()
	for i := 0; i < b.N; i++ {
		e.SpawnBegin(0)
		e.DoneLast(obj)
		e.SpawnEnd(nil)
		e.Wait(obj)
	}
}

// BenchmarkCall is an instrumented call's enter and exit.
func BenchmarkCall(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	defer cpuTimer(b, 2)()
	for i := 0; i < b.N; i++ {
		e.CallBegin(1)
		e.CallEnd()
	}
}

// BenchmarkFib runs the event stream of fib(20) (spawn fib(n-1), call
// fib(n-2), sync) per iteration: recursion, folding and path sharing.
func BenchmarkFib(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	defer cpuTimer(b, fibEventCount(20))()
	for i := 0; i < b.N; i++ {
		fibEvents(e, 20)
	}
}

// BenchmarkFibGlued is BenchmarkFib with the events that have nothing
// between them glued as the rewriter glues profiled fib's (glue.go): the
// child's end to the call's begin, the call's end to the wait.
func BenchmarkFibGlued(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	defer cpuTimer(b, fibEventCount(20))()
	for i := 0; i < b.N; i++ {
		fibEventsGlued(e, 20)
	}
}

func fibEventsGlued(e *engine, n int) {
	if n < 2 {
		return
	}
	obj := fibObjs[n]
	e.SpawnBegin(2)
	fibEventsGlued(e, n-1)
	e.SpawnEndGlue(obj)
	e.CallBegin(3)
	fibEventsGlued(e, n-2)
	e.CallEndGlue()
	e.Wait(obj)
}

// fibObjs holds one join object per recursion depth, as a program's
// WaitGroups would be, allocated once so the benchmark measures the shadow
// runtime and not the program's own allocations.
var fibObjs = func() (objs [64]unsafe.Pointer) {
	for i := range objs {
		objs[i] = unsafe.Pointer(new(wgStub))
	}
	return
}()

// fibEventCount is the number of events fibEvents(e, n) makes: five per
// spawn, and fib(n) spawns fib(n+1)-1 times.
func fibEventCount(n int) int {
	a, b := 0, 1
	for range n + 1 {
		a, b = b, a+b
	}
	return 5 * (a - 1)
}

func fibEvents(e *engine, n int) {
	if n < 2 {
		return
	}
	obj := fibObjs[n]
	e.SpawnBegin(2)
	fibEvents(e, n-1)
	e.SpawnEnd(obj)
	e.CallBegin(3)
	fibEvents(e, n-2)
	e.CallEnd()
	e.Wait(obj)
}

// TestNoAllocationsInSteadyState: spawn, Done, wait and calls allocate
// nothing once the pools are warm.
func TestNoAllocationsInSteadyState(t *testing.T) {
	e := clockEngine(t)
	obj := unsafe.Pointer(new(wgStub))
	step := func() {
		e.SpawnBegin(0)
		e.CallBegin(1)
		e.CallEnd()
		e.Done(obj)
		e.SpawnEnd(nil)
		e.SpawnBegin(0)
		e.SpawnEnd(obj)
		e.Wait(obj)
		fibEvents(e, 6)
	}
	for i := 0; i < 100; i++ {
		step()
	}
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Errorf("%v allocations per run of spawns, calls, Done and waits; want 0", a)
	}
}

// TestMemoryDoesNotGrowWithRunLength: the heap after 10^7 spawns is no
// larger than after 10^5 (O(D·S) space, as in Cilkprof).
func TestMemoryDoesNotGrowWithRunLength(t *testing.T) {
	if testing.Short() {
		t.Skip("10^7 spawns take a few seconds")
	}
	heapAfter := func(spawns int) uint64 {
		m := &synthetic{}
		e := newEngine(config{Measure: m, MeasureName: "synthetic"}, benchTable())
		obj := unsafe.Pointer(new(wgStub))
		for i := 0; i < spawns/2; i++ {
			m.now += 3
			e.SpawnBegin(0)
			m.now += 5
			e.CallBegin(1)
			m.now += 2
			e.CallEnd()
			e.SpawnEnd(obj)
			e.SpawnBegin(0)
			m.now++
			e.Done(obj)
			e.SpawnEnd(nil)
			e.Wait(obj)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(e)
		return ms.HeapAlloc
	}
	small := heapAfter(100_000)
	large := heapAfter(10_000_000)
	t.Logf("heap after 10^5 spawns: %d bytes; after 10^7: %d bytes", small, large)
	if large > small+small/4+64<<10 {
		t.Errorf("heap grew with run length: %d bytes after 10^5 spawns, %d after 10^7", small, large)
	}
}

// BenchmarkCallAPI is BenchmarkCall through the package-level entry points
// that rewritten code calls, which first check the goroutine (gate.go).
func BenchmarkCallAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	defer cpuTimer(b, 2)()
	for i := 0; i < b.N; i++ {
		CallBegin(1)
		CallEnd()
	}
}

// BenchmarkSpawnSyncAPI is BenchmarkSpawnSync through the entry points that
// rewritten code calls: spawn and join, each measuring its caller's depth
// (depth.go) and checking the goroutine (gate.go).
func BenchmarkSpawnSyncAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	obj := unsafe.Pointer(new(wgStub))
	f := func() {}
	defer cpuTimer(b, 3)()
	for i := 0; i < b.N; i++ {
		spawn(0, obj, f)
		join(obj)
	}
}

// BenchmarkEnterLeaveAPI is an instrumented call in an expression, as the
// rewriter writes most calls: Leave(Enter(site), f()).
func BenchmarkEnterLeaveAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	x := 0
	defer cpuTimer(b, 2)()
	for i := 0; i < b.N; i++ {
		x = Leave(Enter(1), x+1)
	}
	benchSink = x
}

var benchSink int

// BenchmarkGoAPI is a spawn as the rewriter writes a go statement whose
// child signals a WaitGroup, with the wait that joins it, through the entry
// points of generated code: Go, WaitGroupDone, WaitGroupWait.
func BenchmarkGoAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	var wg sync.WaitGroup
	f := func() { WaitGroupDone(&wg) }
	defer cpuTimer(b, 4)()
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		Go(0, f)
		WaitGroupWait(&wg)
	}
}

// BenchmarkWaitGroupGoAPI is wg.Go and wg.Wait as the rewriter writes them.
func BenchmarkWaitGroupGoAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	var wg sync.WaitGroup
	f := func() {}
	defer cpuTimer(b, 3)()
	for i := 0; i < b.N; i++ {
		WaitGroupGo(0, &wg, f)
		WaitGroupWait(&wg)
	}
}

// BenchmarkFibAPI is profiled fib's node as the rewriter writes it
// (examples/fib), through the entry points of generated code: a glued
// GroupGo whose child runs inline, a call between Enter and LeaveGlue,
// and GroupWait, per internal node of fib(20).
func BenchmarkFibAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	defer cpuTimer(b, fibEventCount(20))()
	for i := 0; i < b.N; i++ {
		benchSink = fibAPI(20)
	}
}

func fibAPI(n int) int {
	if n < 2 {
		return n
	}
	var g errgroup.Group
	var x int
	GroupGo(Glued(2), &g, func() error {
		x = fibAPI(n - 1)
		return nil
	})
	y := LeaveGlue(Enter(3), fibAPI(n-2))
	GroupWait(&g)
	return x + y
}

// BenchmarkParlibForAPI is a parlib.For of 64 iterations split down to one,
// as the rewriter writes it: 63 spawns, 64 pieces, one sync, per op.
func BenchmarkParlibForAPI(b *testing.B) {
	e, done := defaultEngine(b)
	defer done()
	old := current
	current = e
	defer func() { current = old }()
	body := func(int) {}
	defer cpuTimer(b, 0)()
	for i := 0; i < b.N; i++ {
		ParlibFor(0, parlib.For, 0, 64, 1, body)
	}
}

// TestFrameSize: serial mode keeps a frame per live invocation, a million
// of them in a fork chain a million deep (examples/deepchain), so a field
// that breaks the packing costs megabytes.
func TestFrameSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	if got := unsafe.Sizeof(frame{}); got > 112 {
		t.Errorf("a frame takes %d bytes, want at most 112", got)
	}
}

// parallelEngine returns an engine in parallel mode on the clock, the
// measure a parallel run reads by default, made by the calling goroutine,
// which is its root.
func parallelEngine(tb testing.TB, tab *siteTable) *engine {
	m, err := perf.Open(perf.Clock)
	if err != nil {
		tb.Fatal(err)
	}
	return newEngine(config{Measure: m, MeasureName: perf.Clock, Unit: m.Unit(), Mode: parallelMode,
		Overhead: calibrateOverhead(m, perf.Clock, parallelMode, false)}, tab)
}

// BenchmarkParallelGo is BenchmarkGoAPI in parallel mode: each op starts a
// goroutine for real, which signals the WaitGroup, and waits for it. The
// events are the spawn, the child's start and end, its Done and the wait.
// BenchmarkPlainGo is the same loop uninstrumented: the difference of the
// two is what parallel accounting adds to a spawn and its sync. Run at
// GOMAXPROCS=1 the numbers are the engine's, without contention for its
// lock.
func BenchmarkParallelGo(b *testing.B) {
	benchParallelGo(b, func(wg *sync.WaitGroup) { WaitGroupDone(wg) })
}

// BenchmarkParallelGoDoneLast is BenchmarkParallelGo with the child's Done
// deferred as its last action, `defer wg.Done()` as the rewriter writes
// it: the child ends at the Done, in one turn at the engine.
func BenchmarkParallelGoDoneLast(b *testing.B) {
	benchParallelGo(b, func(wg *sync.WaitGroup) { defer WaitGroupDoneLast(wg) })
}

// BenchmarkParallelGoSites is BenchmarkParallelGoDoneLast in a program
// whose site table holds 4, 1,000 or 10,000 sites: what a spawn costs
// must not grow with the sites, which a large program's rewrite makes by
// the thousand, but with the sites open at the spawn (activity.go).
func BenchmarkParallelGoSites(b *testing.B) {
	for _, n := range []int{4, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchParallelGoIn(b, benchTableOf(n), func(wg *sync.WaitGroup) { defer WaitGroupDoneLast(wg) })
		})
	}
}

// BenchmarkParallelGoCalls adds two instrumented calls to the child of
// each spawn, which the child buffers (parallel.go) and the engine
// replays at its Done.
func BenchmarkParallelGoCalls(b *testing.B) {
	benchParallelGo(b, func(wg *sync.WaitGroup) {
		CallBegin(1)
		CallEnd()
		CallBegin(1)
		CallEnd()
		WaitGroupDone(wg)
	})
}

// benchParallelGo runs b.N spawns of child, each on a goroutine of its own
// in parallel mode, and the wait for it; child signals wg.
func benchParallelGo(b *testing.B, child func(wg *sync.WaitGroup)) {
	benchParallelGoIn(b, benchTable(), child)
}

func benchParallelGoIn(b *testing.B, tab *siteTable, child func(wg *sync.WaitGroup)) {
	e := parallelEngine(b, tab)
	old := current
	current = e
	defer func() { current = old }()
	var wg sync.WaitGroup
	f := func() { child(&wg) }
	stop := cpuTimer(b, 0)
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		Go(0, f)
		WaitGroupWait(&wg)
	}
	stop()
	e.stop()
}

func BenchmarkPlainGo(b *testing.B) {
	var wg sync.WaitGroup
	f := func() { wg.Done() }
	defer cpuTimer(b, 0)()
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		go f()
		wg.Wait()
	}
}

// TestParallelSpawnMakesNoClosure: in parallel mode a spawn for real
// allocates nothing of the engine's once states are free for reuse: Go
// and wg.Go none, errgroup's Go no more than the plain group's own (its
// wrapper); and after each kind of spawn (Go, wg.Go, parlib's, errgroup's)
// a state waiting for reuse keeps no child's function or join object alive.
func TestParallelSpawnMakesNoClosure(t *testing.T) {
	e := parallelEngine(t, benchTable())
	old := current
	current = e
	defer func() { current = old }()
	var wg sync.WaitGroup
	f := func() { defer WaitGroupDoneLast(&wg) }
	spawn := func() {
		wg.Add(1)
		Go(0, f)
		WaitGroupWait(&wg)
	}
	empty := func() {}
	wgGo := func() {
		WaitGroupGo(0, &wg, empty)
		WaitGroupWait(&wg)
	}
	var g errgroup.Group
	nop := func() error { return nil }
	group := func() {
		GroupGo(0, &g, nop)
		GroupWait(&g)
	}
	plain := func() {
		g.Go(nop)
		g.Wait()
	}
	for range 100 {
		spawn()
		wgGo()
		group()
		plain()
	}
	// Checked after each kind of spawn, before a spawn of another kind
	// reuses the states and overwrites what one kind left.
	cleared := func(after string) {
		t.Helper()
		for _, st := range e.allG {
			if st.fn != nil || st.fnErr != nil || st.obj != nil {
				t.Fatalf("after %s, state %d keeps its last child's function or join object", after, st.idx)
			}
		}
	}
	if a := testing.AllocsPerRun(1000, spawn); a != 0 {
		t.Errorf("%v allocations per spawn and wait of Go; want 0", a)
	}
	cleared("Go")
	if a := testing.AllocsPerRun(1000, wgGo); a != 0 {
		t.Errorf("%v allocations per spawn and wait of wg.Go; want 0", a)
	}
	cleared("wg.Go")
	var pg parlib.Group
	for range 100 {
		ParlibGroupSpawn(0, &pg, empty)
		ParlibGroupSync(&pg)
	}
	cleared("parlib's Spawn")
	a, p := testing.AllocsPerRun(1000, group), testing.AllocsPerRun(1000, plain)
	if a > p {
		t.Errorf("%v allocations per spawn and wait of errgroup's Go, %v without the engine; want no more", a, p)
	}
	cleared("errgroup's Go")
	e.stop()
	cleared("the run's end")
}
