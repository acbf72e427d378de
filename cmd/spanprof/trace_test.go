package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
)

// recordTrace records an execution trace of this test process running a
// few goroutines that hand work to each other over a channel, and writes
// it to a file.
func recordTrace(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skip("cannot trace (go test -trace?):", err)
	}
	ch := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for x := range ch {
				traceWork(x)
			}
		})
	}
	for i := range 200 {
		ch <- i
	}
	close(ch)
	wg.Wait()
	trace.Stop()
	name := filepath.Join(t.TempDir(), "trace.out")
	if err := os.WriteFile(name, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	return name
}

var traceSink int

//go:noinline
func traceWork(n int) {
	for i := range 1000 * (n%7 + 1) {
		traceSink += i
	}
}

func TestTraceCommand(t *testing.T) {
	file := recordTrace(t)
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	code, stdout, stderr := spanprof("trace", "-o", out, file)
	if code != exitOK {
		t.Fatalf("spanprof trace: status %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Span profile: trace mode") || !strings.Contains(stdout, "4) Functions on the critical path") {
		t.Errorf("the report lacks trace mode's sections:\n%s", stdout)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "trace" || p.Trace == nil || p.Trace.Events == 0 || p.Work <= 0 || p.Span <= 0 || p.Span > p.Work {
		t.Fatalf("profile: mode %q, trace %+v, work %d, span %d", p.Mode, p.Trace, p.Work, p.Span)
	}
	// The 4 workers and their hand-offs are in it, with the function that
	// did the work.
	if p.Spawns < 4 || p.Syncs == 0 {
		t.Errorf("%d goroutines created, %d wake-ups; want at least 4 and some", p.Spawns, p.Syncs)
	}
	funcs := report.Functions(p)
	if !slices.ContainsFunc(funcs, func(f report.FunctionSummary) bool {
		return strings.HasSuffix(f.Func, ".recordTrace.func1") && f.WorkCum > 0
	}) {
		t.Errorf("no work in the workers (recordTrace.func1): %+v", funcs)
	}
	// The JSON report has trace mode's fields.
	code, js, stderr := spanprof("report", "-format", "json", out)
	if code != exitOK {
		t.Fatalf("spanprof report: %d %s", code, stderr)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"trace", "functions"} {
		if _, ok := s[f]; !ok {
			t.Errorf("the JSON report has no %q", f)
		}
	}
	if s["mode"] != "trace" {
		t.Errorf("JSON mode %v, want trace", s["mode"])
	}
}

// TestTraceBadFiles: a file that is no trace, a truncated one, a missing
// one: one line naming the file, status 2, and no profile.
func TestTraceBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(recordTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"garbage.out":   []byte("this is not a trace\n"),
		"empty.out":     nil,
		"truncated.out": good[:len(good)*2/3],
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name)
			if err := os.WriteFile(file, data, 0o666); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+".pb.gz")
			code, _, stderr := spanprof("trace", "-o", out, file)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, file) {
				t.Errorf("status %d, stderr %q; want 2 and one line naming %s", code, stderr, file)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a profile was written for %s", name)
			}
		})
	}
	code, _, stderr := spanprof("trace", filepath.Join(dir, "missing.out"))
	if code != exitUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("missing file: status %d, stderr %q; want 2 and one line", code, stderr)
	}
	code, _, stderr = spanprof("trace")
	if code != exitUsage || !strings.Contains(stderr, "usage: spanprof trace") {
		t.Errorf("no file: status %d, stderr %q; want 2 and the usage", code, stderr)
	}
}

// TestModeTraceRefusals: the flags trace mode has no use for, and build.
func TestModeTraceRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-mode", "trace", "-measure", "cpu"},
		{"run", "-mode", "trace", "-count", "3"},
		{"test", "-mode", "trace", "-burden", "1us"},
		{"build", "-mode", "trace", "-o", filepath.Join(t.TempDir(), "bin")},
	} {
		code, _, stderr := spanprof(args...)
		if code != exitUsage || !strings.Contains(stderr, "trace") {
			t.Errorf("spanprof %s: status %d, stderr %q; want 2 and why", strings.Join(args, " "), code, stderr)
		}
	}
}

// handoffMain hands items from main to a worker goroutine over a channel,
// and ends with os.Exit(3): the trace must be complete all the same.
const handoffMain = `package main

import (
	"fmt"
	"os"
)

//go:noinline
func work(n int) int {
	x := n
	for i := 0; i < 5_000_000; i++ {
		x = x*31 + i
	}
	return x
}

func worker(in <-chan int, out chan<- int) {
	for n := range in {
		out <- work(n)
	}
	close(out)
}

func main() {
	in, out := make(chan int), make(chan int)
	go worker(in, out)
	go func() {
		for i := range 20 {
			in <- i
		}
		close(in)
	}()
	sum := 0
	for x := range out {
		sum += x
	}
	fmt.Println("sum", sum)
	os.Exit(3)
}
`

// TestRunModeTrace runs a program as written with the tracer on: its
// output passes through, os.Exit stops the tracer (the exit hook), and the
// profile holds its goroutines' work, the worker on the critical path.
func TestRunModeTrace(t *testing.T) {
	needGo(t)
	dir := module(t, map[string]string{"main.go": handoffMain})
	code, stdout, stderr := spanprofIn(t, dir, offline, "run", "-mode", "trace", "-o", "p.pb.gz", ".")
	if code != exitFailed || !strings.HasPrefix(stdout, "sum ") || !strings.Contains(stderr, "exit status 3") {
		t.Fatalf("status %d (want 1: the program exited 3), stdout %q\n%s", code, stdout, stderr)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "p.pb.gz"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if p.Mode != "trace" || p.Trace.CPU <= 0 || p.Trace.CPUSamples == 0 {
		t.Errorf("mode %q, CPU %d, CPU samples %d; want trace, the program's CPU time, samples", p.Mode, p.Trace.CPU, p.Trace.CPUSamples)
	}
	// Nothing was rewritten, and the sites are the module's files,
	// relative to its root.
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		t.Fatal(err)
	}
	funcs := report.Functions(p)
	if len(funcs) == 0 || funcs[0].Func != "main.work" {
		t.Errorf("functions on the critical path %+v; want main.work first", funcs)
	}
	if !slices.ContainsFunc(p.Sites, func(s spanprofile.Site) bool { return s.File == "main.go" && s.Func == "main.worker" }) {
		t.Errorf("no site main.go main.worker among %+v", p.Sites)
	}
}

// taskTest is a package whose test serves requests as runtime/trace tasks.
// Work takes about 10 ms, long enough for CPU samples to find it.
const taskTest = `package m

import (
	"context"
	"runtime/trace"
	"sync"
	"testing"
)

//go:noinline
func Work(n int) int {
	x := n
	for i := 0; i < 8_000_000; i++ {
		x = x*31 + i
	}
	return x
}

func handle(ctx context.Context, n int) int {
	ctx, task := trace.NewTask(ctx, "request")
	defer task.End()
	var wg sync.WaitGroup
	var a, b int
	wg.Go(func() {
		defer trace.StartRegion(ctx, "half").End()
		a = Work(n)
	})
	b = Work(n + 1)
	wg.Wait()
	return a + b
}

func TestServe(t *testing.T) {
	for i := range 5 {
		handle(context.Background(), i)
	}
}
`

// TestTestModeTrace runs a package's tests with go test -trace and finds
// their runtime/trace tasks; "go test -trace" then "spanprof trace" gives
// the same kind of profile.
func TestTestModeTrace(t *testing.T) {
	needGo(t)
	dir := module(t, map[string]string{"m.go": "package m\n", "m_test.go": taskTest})
	code, _, stderr := spanprofIn(t, dir, offline, "test", "-mode", "trace", "-o", "p.pb.gz", ".")
	if code != exitOK {
		t.Fatalf("status %d\n%s", code, stderr)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "p.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 1 || p.Tasks[0].Type != "request" || p.Tasks[0].Count != 5 {
		t.Fatalf("tasks %+v; want 5 of type request", p.Tasks)
	}
	ts := p.Tasks[0]
	if ts.SpanMean <= 0 || ts.SpanMean > ts.WorkMean || ts.SpanMean > ts.LatencyMean {
		t.Errorf("task means: span %d, work %d, latency %d; want 0 < span <= work, latency", ts.SpanMean, ts.WorkMean, ts.LatencyMean)
	}
	if len(ts.Functions) == 0 || ts.Functions[0].Func != "example.com/m.Work" {
		t.Errorf("the slowest tasks are bound by %+v; want example.com/m.Work first", ts.Functions)
	}
	if !strings.Contains(stderr, `The 5 slowest "request" tasks are bound by: example.com/m.Work`) {
		t.Errorf("the report does not name the function bounding the tasks:\n%s", stderr)
	}

	if out, err := goIn(t, dir, offline, "test", "-trace=t.out", "."); err != nil {
		t.Fatalf("go test -trace: %v\n%s", err, out)
	}
	code, stdout, stderr := spanprofIn(t, dir, offline, "trace", "-o", "q.pb.gz", "t.out")
	if code != exitOK || !strings.Contains(stdout, `"request"`) {
		t.Errorf("spanprof trace t.out: status %d\n%s%s", code, stdout, stderr)
	}
}

// TestPackageProfile: with several packages, test -mode trace names their
// profiles as test does.
func TestPackageProfile(t *testing.T) {
	mod := &struct{ Path, Dir string }{Path: "example.com/m", Dir: "/src/m"}
	for _, tc := range []struct{ pkg, want string }{
		{"example.com/m", "/o/spanprof.m.pb.gz"},
		{"example.com/m/a/b", "/o/spanprof.a_b.pb.gz"},
	} {
		if got := packageProfile("/o/spanprof.pb.gz", goPackage{ImportPath: tc.pkg, Module: mod}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.pkg, got, tc.want)
		}
	}
}
