package rewrite

import (
	"strings"
	"testing"
)

// loadTests rewrites the module of files, with its tests, as spanprof test
// does.
func loadTests(t *testing.T, files map[string]string) *Result {
	t.Helper()
	needGo(t)
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.24\n"
	writeTree(t, dir, files)
	prog, err := Load(Config{Dir: dir, Mode: InPlace, Tests: true}, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Inline(); err != nil {
		t.Fatal(err)
	}
	res, err := prog.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunParallelTaintsOnlyItsBody (B4): a b.RunParallel in a benchmark
// leaves alone the function it runs, not the package's code that this
// function calls, nor functions reached through function values and
// interfaces. On the old code the spawn of NewCache, which an ordinary test
// calls, was not profiled ("spawn not profiled: it runs on a goroutine
// that is not profiled"), and neither was the one behind the interface.
func TestRunParallelTaintsOnlyItsBody(t *testing.T) {
	t.Parallel()
	res := loadTests(t, map[string]string{
		"m.go": `package m

import "sync"

type Cache struct{ wg sync.WaitGroup }

func NewCache() *Cache {
	c := &Cache{}
	c.wg.Add(1)
	go c.process()
	return c
}

func (c *Cache) process() { c.wg.Done() }

func (c *Cache) Close() { c.wg.Wait() }

type Getter interface{ Get() int }

type sum struct{}

func (sum) Get() int {
	var wg sync.WaitGroup
	parts := make([]int, 2)
	for i := range parts {
		wg.Go(func() { parts[i] = i })
	}
	wg.Wait()
	return parts[0] + parts[1]
}

var Apply = func(f func()) { f() }
`,
		"m_test.go": `package m

import "testing"

func TestCache(t *testing.T) {
	NewCache().Close()
	var g Getter = sum{}
	if g.Get() != 1 {
		t.Fatal("get")
	}
}

func BenchmarkParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var g Getter = sum{}
		for pb.Next() {
			c := NewCache()
			Apply(func() { g.Get() })
			c.Close()
			done := make(chan bool)
			go func() { done <- true }()
			<-done
		}
	})
}
`,
	})
	var notProfiled []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "not profiled") {
			notProfiled = append(notProfiled, w)
		}
	}
	if len(notProfiled) != 1 || !strings.Contains(notProfiled[0], "m_test.go:21: spawn not profiled: RunParallel at m_test.go:14 runs the function it is in on goroutines the profiler does not follow") {
		t.Errorf("warnings of spawns not profiled %q, want one, for the go statement in the RunParallel body", notProfiled)
	}
	if res.Stats.Spawns != 2 || res.Stats.SpawnsNotProfiled != 1 {
		t.Errorf("%d spawns instrumented, %d not profiled; want NewCache's and Get's, and the body's", res.Stats.Spawns, res.Stats.SpawnsNotProfiled)
	}
}

// TestTestsHoldTheEngine: every test, benchmark and fuzz function begins
// with the hand-over of the engine, t.Run and b.Run become TestRun, in
// test files and helpers alike, and t.Parallel TestParallel.
func TestTestsHoldTheEngine(t *testing.T) {
	t.Parallel()
	res := loadTests(t, map[string]string{
		"m.go": `package m

import "testing"

func Check(t *testing.T, f func()) bool {
	return t.Run("sub", func(t *testing.T) { f() })
}
`,
		"m_test.go": `package m

import "testing"

func TestA(t *testing.T) {
	t.Parallel()
	Check(t, func() {})
}

func Testing(t *testing.T) {}

func testLower(t *testing.T) {}

func BenchmarkB(b *testing.B) {
	b.Run("x", benchX)
}

func benchX(b *testing.B) {}

func FuzzC(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {})
}

func TestMain(m *testing.M) { m.Run() }
`,
	})
	out := rewritten(res)
	const hold = "defer _spanprof_shadow.EndTest(_spanprof_shadow.BeginTest())"
	if n := strings.Count(out["m_test.go"], hold); n != 4 {
		t.Errorf("%d functions hold the engine, want 4 (TestA, BenchmarkB, FuzzC and its fuzz function; Testing is none):\n%s", n, out["m_test.go"])
	}
	for file, want := range map[string][]string{
		"m.go": {`_spanprof_shadow.TestRun(_spanprofSites+0, t.Run, "sub", func(t *testing.T) { f() })`},
		"m_test.go": {"_spanprof_shadow.TestParallel(t.Parallel)", `_spanprof_shadow.TestRun(_spanprofTestSites+0, b.Run, "x", benchX)`,
			"_spanprof_shadow.TestFuzz(_spanprofTestSites+1, f.Fuzz, func(t *testing.T, b []byte) {\n\t\tdefer _spanprof_shadow.EndTest(_spanprof_shadow.BeginTest())"},
	} {
		for _, w := range want {
			if !strings.Contains(out[file], w) {
				t.Errorf("%s lacks %s:\n%s", file, w, out[file])
			}
		}
	}
	if !strings.Contains(out["zz_spanprof.go"], `Func: "example.com/m.Check.func1", Caller: "example.com/m.Check", Kind: "call"`) {
		t.Errorf("the t.Run site:\n%s", out["zz_spanprof.go"])
	}
}

// TestDocCommentOnFirstLine: in a module below go1.18 the rewrite adds a
// build constraint above a file's first line; when that line starts the
// package's doc comment, the directive that says where the file's lines
// are cannot go above the comment (it would join it, and gofmt moved it:
// "formatting the rewritten file moved its lines", on esbuild's
// internal/xxhash), so a block directive names the package clause's line.
func TestDocCommentOnFirstLine(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.13\n",
		"p.go": `// Package p sums.
// Its doc comment starts the file.
package p

import "sync"

func Sum(xs []int) int {
	var wg sync.WaitGroup
	var a int
	wg.Add(1)
	go func() { defer wg.Done(); a = len(xs) }()
	wg.Wait()
	return a
}
`,
	})
	prog, err := Load(Config{Dir: dir, Mode: InPlace}, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prog.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if out := rewritten(res)["p.go"]; !strings.Contains(out, "//go:build go1.18\n\n// Package p sums.\n// Its doc comment starts the file.\n/*line p.go:3:1*/ package p\n") {
		t.Errorf("the rewritten file:\n%s", out)
	}
}

// TestExampleOutputStaysLast: an instrumented call right before an
// example's "// Output:" comment gets its CallEnd above the comment, and
// no directive comes between the comment and the closing brace: go vet
// (which go test runs) wants the output comment last in the body. On the
// old code conc's pool and stream tests did not build ("output comment
// block must be the last comment block").
func TestExampleOutputStaysLast(t *testing.T) {
	t.Parallel()
	res := loadTests(t, map[string]string{
		"m.go": "package m\n\nimport \"sync\"\n\n//go:noinline\nfunc Wait(wg *sync.WaitGroup) {\n\twg.Wait()\n}\n",
		"m_test.go": `package m

import (
	"fmt"
	"sync"
)

func ExampleWait() {
	var wg sync.WaitGroup
	wg.Go(func() { fmt.Println("a") })
	Wait(&wg)
	// Output:
	// a
}

func ExampleWait2() {
	var wg sync.WaitGroup
	Wait(&wg)
	// Unordered output:
}
`,
	})
	out := rewritten(res)["m_test.go"]
	for _, want := range []string{
		"\t_spanprof_shadow.CallEnd()\n\t// Output:\n\t// a\n}\n",
		"\t_spanprof_shadow.CallEnd()\n\t// Unordered output:\n}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rewritten examples lack %q:\n%s", want, out)
		}
	}
}
