package tracepath

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

var realSink int

//go:noinline
func realWork(n int) {
	for i := range n {
		realSink += i
	}
}

// recordReal traces this test process running a fork/join and three
// runtime/trace tasks.
func recordReal(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skip("cannot trace (go test -trace?):", err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { realWork(200_000) })
	}
	wg.Wait()
	for range 3 {
		ctx, task := trace.NewTask(context.Background(), "req")
		done := make(chan bool)
		go func() {
			trace.WithRegion(ctx, "half", func() { realWork(100_000) })
			done <- true
		}()
		realWork(100_000)
		<-done
		task.End()
	}
	trace.Stop()
	return buf.Bytes()
}

// TestRealTrace analyses a trace of this process. What it checks holds
// however the goroutines were scheduled: the goroutines and tasks are all
// there, the totals are the work and the span, and the same trace gives
// the same bytes.
func TestRealTrace(t *testing.T) {
	data := recordReal(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Trim: root + string(filepath.Separator)}
	p, err := Analyze(bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, p)
	if p.Mode != "trace" || p.Trace.Bytes != int64(len(data)) || p.Work <= 0 || p.Span <= 0 || p.Span > p.Work {
		t.Fatalf("mode %q, %d bytes of %d, work %d, span %d", p.Mode, p.Trace.Bytes, len(data), p.Work, p.Span)
	}
	if p.Spawns < 11 {
		t.Errorf("%d goroutines created; the test started 11", p.Spawns)
	}
	if len(p.Tasks) != 1 || p.Tasks[0].Type != "req" || p.Tasks[0].Count != 3 ||
		p.Tasks[0].SpanMean <= 0 || p.Tasks[0].SpanMean > p.Tasks[0].WorkMean {
		t.Errorf("tasks %+v; want 3 of type req, 0 < span <= work", p.Tasks)
	}
	// The module's files are named from its root. A WaitGroup.Go child
	// ends in sync, its function returned: its time is at the go
	// statement, in recordReal, with no CPU samples to say better.
	found := false
	for _, s := range p.Sites {
		found = found || s.File == filepath.Join("tracepath", "real_test.go") && strings.HasSuffix(s.Func, "tracepath.recordReal") && s.Kind == spanprofile.KindFrame
	}
	if !found {
		t.Errorf("no frame of recordReal in tracepath/real_test.go among %+v", p.Sites)
	}
	var a, b bytes.Buffer
	if err := spanprofile.Write(&a, p); err != nil {
		t.Fatal(err)
	}
	q, err := Analyze(bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := spanprofile.Write(&b, q); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same trace gave two different profiles")
	}
	// The profile reads back as it was written.
	r, err := spanprofile.Read(&a)
	if err != nil {
		t.Fatal(err)
	}
	if r.Work != p.Work || r.Span != p.Span || r.Trace.Events != p.Trace.Events || len(r.Tasks) != 1 {
		t.Errorf("read back: work %d span %d events %d tasks %d", r.Work, r.Span, r.Trace.Events, len(r.Tasks))
	}
}

// TestNotATrace: errors are one line.
func TestNotATrace(t *testing.T) {
	data := recordReal(t)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"garbage", []byte("this is not a trace\n"), "not a Go execution trace"},
		{"corrupt", []byte("go 1.26 trace\x00\x00\x00 nonsense"), "corrupt"},
		{"empty", nil, "not a Go execution trace"},
		{"truncated", data[:len(data)/2], "truncated"},
	} {
		_, err := Analyze(bytes.NewReader(tc.in), Options{})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one line starting %q", tc.name, err, tc.want)
		}
	}
}
