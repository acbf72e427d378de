package parlib

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// catch runs f and returns the value it panicked with, or nil.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// asPanicError asserts that r is a *PanicError and returns it.
func asPanicError(t *testing.T, r any) *PanicError {
	t.Helper()
	p, ok := r.(*PanicError)
	if !ok {
		t.Fatalf("recovered %T %v, want *PanicError", r, r)
	}
	return p
}

func TestGroupRunsEveryChild(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			var g Group
			got := make([]int, n)
			for i := range n {
				g.Spawn(func() { got[i]++ })
			}
			g.Sync()
			for i, c := range got {
				if c != 1 {
					t.Errorf("child %d ran %d times, want 1", i, c)
				}
			}
		})
	}
}

func TestSyncWithoutSpawns(t *testing.T) {
	t.Parallel()
	var g Group
	if r := catch(g.Sync); r != nil {
		t.Fatalf("Sync on an empty Group panicked: %v", r)
	}
	if r := catch(g.Sync); r != nil {
		t.Fatalf("second Sync on an empty Group panicked: %v", r)
	}
}

func TestGroupReuse(t *testing.T) {
	t.Parallel()
	var g Group
	var n atomic.Int64
	for round := range 3 {
		for range 4 {
			g.Spawn(func() { n.Add(1) })
		}
		g.Sync()
		if got, want := n.Load(), int64(4*(round+1)); got != want {
			t.Fatalf("after round %d: %d children ran, want %d", round, got, want)
		}
	}
}

func TestChildSpawnsIntoSameGroup(t *testing.T) {
	t.Parallel()
	var g Group
	var n atomic.Int64
	var rec func(depth int)
	rec = func(depth int) {
		n.Add(1)
		if depth > 0 {
			g.Spawn(func() { rec(depth - 1) })
			g.Spawn(func() { rec(depth - 1) })
		}
	}
	g.Spawn(func() { rec(5) })
	g.Sync()
	if got, want := n.Load(), int64(1<<6-1); got != want {
		t.Fatalf("%d calls, want %d", got, want)
	}
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	var g Group
	var x int
	g.Spawn(func() { x = fib(n - 1) })
	y := fib(n - 2)
	g.Sync()
	return x + y
}

func TestNestedGroups(t *testing.T) {
	t.Parallel()
	tests := []struct{ n, want int }{{0, 0}, {1, 1}, {2, 1}, {10, 55}, {18, 2584}}
	for _, tt := range tests {
		if got := fib(tt.n); got != tt.want {
			t.Errorf("fib(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestSpawnWait(t *testing.T) {
	t.Parallel()
	var fibTask func(n int) int
	fibTask = func(n int) int {
		if n < 2 {
			return n
		}
		x := Spawn(func() int { return fibTask(n - 1) })
		y := fibTask(n - 2)
		return x.Wait() + y
	}
	if got := fibTask(15); got != 610 {
		t.Fatalf("fib(15) = %d, want 610", got)
	}

	task := Spawn(func() string { return "done" })
	for i := range 3 {
		if got := task.Wait(); got != "done" {
			t.Fatalf("Wait #%d = %q, want %q", i, got, "done")
		}
	}
}

func TestTaskPanicsAtEveryWait(t *testing.T) {
	t.Parallel()
	task := Spawn(func() int { panic("task failed") })
	for i := range 2 {
		p := asPanicError(t, catch(func() { task.Wait() }))
		if p.Value != "task failed" {
			t.Fatalf("Wait #%d: Value = %v, want %q", i, p.Value, "task failed")
		}
	}
}

//go:noinline
func panickingChild(v any) { panic(v) }

func TestPanicPropagates(t *testing.T) {
	t.Parallel()
	errSentinel := errors.New("sentinel")
	tests := []struct {
		name  string
		value any
	}{
		{"string", "boom"},
		{"error", errSentinel},
		{"wrapped error", fmt.Errorf("context: %w", errSentinel)},
		{"int", 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g Group
			g.Spawn(func() { panickingChild(tt.value) })
			p := asPanicError(t, catch(g.Sync))
			if p.Value != tt.value {
				t.Errorf("Value = %v, want %v", p.Value, tt.value)
			}
			// The stack starts at the frame that panicked, not in parlib's
			// recovery code.
			if _, rest, _ := strings.Cut(string(p.Stack), "\n"); !strings.HasPrefix(rest, "github.com/spanprof/spanprof/parlib.panickingChild(") {
				t.Errorf("Stack does not start at the child's frame:\n%s", p.Stack)
			}
			if !strings.Contains(p.Error(), fmt.Sprint(tt.value)) {
				t.Errorf("Error() = %q, does not mention the value", p.Error())
			}
			if err, ok := tt.value.(error); ok && !errors.Is(p, errSentinel) {
				t.Errorf("errors.Is(%v, sentinel) = false, want true (value %v)", p, err)
			}
			// The slot is cleared: the Group is reusable.
			g.Spawn(func() {})
			if r := catch(g.Sync); r != nil {
				t.Errorf("Sync after a recovered panic panicked again: %v", r)
			}
		})
	}
}

//go:noinline
func indexChild(s []int, i int) int { return s[i] }

func TestRuntimeErrorPanic(t *testing.T) {
	t.Parallel()
	var g Group
	g.Spawn(func() { indexChild(nil, 3) })
	p := asPanicError(t, catch(g.Sync))
	var re runtime.Error
	if !errors.As(p, &re) {
		t.Fatalf("Value = %T %v, want a runtime.Error", p.Value, p.Value)
	}
	if !strings.Contains(string(p.Stack), "parlib.indexChild(") {
		t.Fatalf("Stack does not show the faulting frame:\n%s", p.Stack)
	}
}

func TestPanicNil(t *testing.T) {
	t.Parallel()
	var g Group
	g.Spawn(func() { panic(nil) })
	p := asPanicError(t, catch(g.Sync))
	var pn *runtime.PanicNilError
	if !errors.As(p, &pn) {
		t.Fatalf("Value = %T, want *runtime.PanicNilError", p.Value)
	}
}

func TestSyncWaitsForAllChildrenAfterPanic(t *testing.T) {
	t.Parallel()
	var g Group
	release := make(chan struct{})
	var finished atomic.Int64
	for range 8 {
		g.Spawn(func() {
			<-release
			finished.Add(1)
		})
	}
	g.Spawn(func() {
		// Let the others go only once this child is already panicking.
		defer close(release)
		panic("first")
	})
	asPanicError(t, catch(g.Sync))
	if got := finished.Load(); got != 8 {
		t.Fatalf("Sync returned with %d of 8 other children finished", got)
	}
}

func TestFirstPanicWins(t *testing.T) {
	t.Parallel()
	var g Group
	g.Spawn(func() { panic("first") })
	g.Spawn(func() {
		// Wait until the first child's panic has been recorded.
		for g.panic.Load() == nil {
			runtime.Gosched()
		}
		panic("second")
	})
	p := asPanicError(t, catch(g.Sync))
	if p.Value != "first" {
		t.Fatalf("Value = %v, want %q", p.Value, "first")
	}
}

func TestNestedPanicPassesThroughUnchanged(t *testing.T) {
	t.Parallel()
	var outer Group
	outer.Spawn(func() {
		var inner Group
		inner.Spawn(func() { panickingChild("deep") })
		inner.Sync()
	})
	p := asPanicError(t, catch(outer.Sync))
	if p.Value != "deep" {
		t.Fatalf("Value = %#v, want %q (not wrapped twice)", p.Value, "deep")
	}
	if !strings.Contains(string(p.Stack), "parlib.panickingChild(") {
		t.Fatalf("Stack is not the innermost child's:\n%s", p.Stack)
	}
}

func TestGoexitInChild(t *testing.T) {
	t.Parallel()
	var g Group
	var after atomic.Bool
	g.Spawn(func() {
		runtime.Goexit()
	})
	g.Spawn(func() { after.Store(true) })
	if r := catch(g.Sync); r != nil {
		t.Fatalf("Sync panicked after a child called Goexit: %v", r)
	}
	if !after.Load() {
		t.Fatal("Sync returned before the other child ran")
	}
}

func TestDo(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 3, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			ran := make([]int, n)
			fs := make([]func(), n)
			for i := range fs {
				fs[i] = func() { ran[i]++ }
			}
			Do(fs...)
			for i, c := range ran {
				if c != 1 {
					t.Errorf("function %d ran %d times, want 1", i, c)
				}
			}
		})
	}
}

func TestDoRunsLastOnCaller(t *testing.T) {
	t.Parallel()
	var first, last string
	Do(
		func() { first = string(debug.Stack()) },
		func() { last = string(debug.Stack()) },
	)
	if !strings.Contains(first, "parlib.run(") {
		t.Errorf("first function did not run on a spawned goroutine:\n%s", first)
	}
	if strings.Contains(last, "parlib.run(") || !strings.Contains(last, "parlib.TestDoRunsLastOnCaller(") {
		t.Errorf("last function did not run on the calling goroutine:\n%s", last)
	}
}

func TestDoPanics(t *testing.T) {
	t.Parallel()
	for _, which := range []int{0, 2} {
		t.Run(fmt.Sprint(which), func(t *testing.T) {
			t.Parallel()
			var finished atomic.Int64
			fs := make([]func(), 3)
			for i := range fs {
				fs[i] = func() { finished.Add(1) }
			}
			fs[which] = func() {
				defer finished.Add(1)
				panickingChild(which)
			}
			p := asPanicError(t, catch(func() { Do(fs...) }))
			if p.Value != which {
				t.Errorf("Value = %v, want %d", p.Value, which)
			}
			if !strings.Contains(string(p.Stack), "parlib.panickingChild(") {
				t.Errorf("Stack does not show the panicking frame:\n%s", p.Stack)
			}
			if got := finished.Load(); got != 3 {
				t.Errorf("Do returned with %d of 3 functions finished", got)
			}
		})
	}
}

// loopCase is one For/ForRange test: a range, a grain and how many pieces
// (calls of the ForRange body) to expect, -1 for any number.
type loopCase struct {
	lo, hi, grain int
	pieces        int
}

var loopCases = []loopCase{
	{0, 0, 1, 0},
	{5, 5, 0, 0},
	{5, 4, 1, 0},  // hi < lo: empty, as in a for statement
	{3, -3, 0, 0}, // hi < lo with a default grain
	{0, 1, 1, 1},
	{0, 1, 0, 1},
	{0, 1, -7, 1},  // negative grain picks the default
	{0, 10, 1, 10}, // grain 1: one piece per index
	{0, 10, 3, 4},  // 10 → 5+5 → 2+3+2+3
	{0, 10, 10, 1},
	{0, 10, 100, 1},
	{-10, 10, 4, 8},
	{-25, -3, 5, -1},
	{1, 1000, 7, -1},
	{0, 1 << 12, 64, 64},
	{0, 1 << 12, 0, -1},
	{0, 1000, -1, -1},
	{math.MaxInt - 5, math.MaxInt, 2, -1},
	{math.MinInt, math.MinInt + 9, 2, -1},
}

func TestForCoversEachIndexOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range loopCases {
		t.Run(fmt.Sprintf("lo=%d,hi=%d,grain=%d", tt.lo, tt.hi, tt.grain), func(t *testing.T) {
			t.Parallel()
			n := max(0, tt.hi-tt.lo) // no overflow in these cases
			count := make([]atomic.Int32, n)
			var outside atomic.Int32
			For(tt.lo, tt.hi, tt.grain, func(i int) {
				if i < tt.lo || i >= tt.hi {
					outside.Add(1)
					return
				}
				count[i-tt.lo].Add(1)
			})
			if got := outside.Load(); got != 0 {
				t.Errorf("body called %d times outside [lo, hi)", got)
			}
			for k := range count {
				if c := count[k].Load(); c != 1 {
					t.Errorf("index %d visited %d times, want 1", tt.lo+k, c)
				}
			}
		})
	}
}

func TestForRangePieces(t *testing.T) {
	t.Parallel()
	for _, tt := range loopCases {
		t.Run(fmt.Sprintf("lo=%d,hi=%d,grain=%d", tt.lo, tt.hi, tt.grain), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var pieces [][2]int
			ForRange(tt.lo, tt.hi, tt.grain, func(lo, hi int) {
				mu.Lock()
				pieces = append(pieces, [2]int{lo, hi})
				mu.Unlock()
			})
			checkPieces(t, tt.lo, tt.hi, tt.grain, pieces)
			if tt.pieces >= 0 && len(pieces) != tt.pieces {
				t.Errorf("%d pieces, want %d: %v", len(pieces), tt.pieces, pieces)
			}
		})
	}
}

// byStart orders pieces by their first index.
func byStart(a, b [2]int) int { return cmp.Compare(a[0], b[0]) }

// checkPieces asserts that pieces are non-empty, no larger than grain (when
// grain > 0), and tile [lo, hi) exactly.
func checkPieces(t *testing.T, lo, hi, grain int, pieces [][2]int) {
	t.Helper()
	slices.SortFunc(pieces, byStart)
	next := lo
	for _, p := range pieces {
		if p[0] != next {
			t.Fatalf("piece %v starts at %d, want %d; pieces %v", p, p[0], next, pieces)
		}
		if p[1] <= p[0] {
			t.Fatalf("empty piece %v", p)
		}
		if size := uint(p[1]) - uint(p[0]); grain > 0 && size > uint(grain) {
			t.Fatalf("piece %v has %d indices, more than grain %d", p, size, grain)
		}
		next = p[1]
	}
	if hi > lo && next != hi {
		t.Fatalf("pieces end at %d, want %d", next, hi)
	}
	if hi <= lo && len(pieces) != 0 {
		t.Fatalf("empty range gave pieces %v", pieces)
	}
}

func TestForRangeWholeIntRange(t *testing.T) {
	t.Parallel()
	// hi-lo overflows int here; with grain MaxInt the loop splits into
	// three pieces and never calls body on an empty or reversed range.
	var mu sync.Mutex
	var pieces [][2]int
	ForRange(math.MinInt, math.MaxInt, math.MaxInt, func(lo, hi int) {
		mu.Lock()
		pieces = append(pieces, [2]int{lo, hi})
		mu.Unlock()
	})
	slices.SortFunc(pieces, byStart)
	want := [][2]int{{math.MinInt, -1}, {-1, 1<<62 - 1}, {1<<62 - 1, math.MaxInt}}
	if !slices.Equal(pieces, want) {
		t.Fatalf("pieces %v, want %v", pieces, want)
	}
}

func TestDefaultGrain(t *testing.T) {
	// Not parallel: it changes GOMAXPROCS.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	tests := []struct{ n, want uint }{
		{0, 1}, {1, 1}, {31, 1}, {32, 1}, {64, 2}, {1000, 31}, {1 << 20, 1 << 15},
	}
	for _, tt := range tests {
		if got := defaultGrain(tt.n); got != tt.want {
			t.Errorf("defaultGrain(%d) with GOMAXPROCS 4 = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestForPanics(t *testing.T) {
	t.Parallel()
	// Index 0 runs on the calling goroutine and 1023 on a spawned one; both
	// must come back as a *PanicError after every other index has run.
	for _, bad := range []int{0, 1023} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			t.Parallel()
			var done atomic.Int64
			r := catch(func() {
				For(0, 1024, 8, func(i int) {
					if i == bad {
						panickingChild(i)
					}
					done.Add(1)
				})
			})
			p := asPanicError(t, r)
			if p.Value != bad {
				t.Errorf("Value = %v, want %d", p.Value, bad)
			}
			// The panicking piece stops at bad; every other piece finishes.
			if got, want := done.Load(), int64(1024-8+bad%8); got != want {
				t.Errorf("%d indices done, want %d", got, want)
			}
		})
	}
}

func TestForSmallRangePanics(t *testing.T) {
	t.Parallel()
	// No spawn happens here, yet the panic is reported like any other.
	p := asPanicError(t, catch(func() { For(0, 1, 1, func(int) { panic("small") }) }))
	if p.Value != "small" {
		t.Fatalf("Value = %v, want %q", p.Value, "small")
	}
}

func TestForEach(t *testing.T) {
	t.Parallel()
	tests := []struct{ n, grain int }{{0, 0}, {1, 1}, {17, 4}, {1000, 0}, {1000, 1}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,grain=%d", tt.n, tt.grain), func(t *testing.T) {
			t.Parallel()
			s := make([]int, tt.n)
			ForEach(s, tt.grain, func(i int, v *int) { *v += i + 1 })
			for i, v := range s {
				if v != i+1 {
					t.Fatalf("s[%d] = %d, want %d", i, v, i+1)
				}
			}
		})
	}
}

// crashEnv names the environment variable that makes the test binary crash
// on purpose, for TestUnrecoveredPanicShowsBothStacks.
const crashEnv = "PARLIB_TEST_CRASH"

//go:noinline
func crashingParent() {
	var g Group
	g.Spawn(func() { panickingChild("crash") })
	g.Sync()
}

func TestUnrecoveredPanicShowsBothStacks(t *testing.T) {
	if os.Getenv(crashEnv) == "1" {
		crashingParent()
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnrecoveredPanicShowsBothStacks$")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("crashing process: err = %v, want a non-zero exit; output:\n%s", err, out)
	}
	for _, want := range []string{
		"panic: parlib: spawned function panicked: crash",
		"parlib.panickingChild(", // the child's stack, from the PanicError
		"parlib.crashingParent(", // the parent's stack, from the runtime
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("crash output lacks %q:\n%s", want, out)
		}
	}
}
