package spanprofile_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

func encode(t *testing.T, p *spanprofile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := spanprofile.Write(&buf, p); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	kindRoot := spanprofiletest.Profile()
	kindRoot.Sites = append(kindRoot.Sites, spanprofile.Site{File: "main.go", Line: 20, Func: "main.main", Kind: spanprofile.KindRoot})
	// The header fields that the fixture leaves zero, set.
	full := spanprofiletest.Profile()
	full.ShadowBytes, full.Procs, full.TimeNanos, full.DurationNanos = 123456, 16, 1_700_000_000e9, 2e9
	full.Ended = "signal SIGINT"
	full.NotProfiled = []spanprofile.NotProfiled{
		{Reason: spanprofile.NotProfiledOtherGoroutine, Events: 17, Goroutines: 2,
			Creators: []spanprofile.Creator{{Where: "time.goFunc (sleep.go:215)", Goroutines: 2}},
			Sites:    []spanprofile.SiteEvents{{Site: 3, Events: 9}}},
		{Reason: spanprofile.NotProfiledUnmatchedEnd, Events: 1},
		{Reason: spanprofile.NotProfiledUnwound, Events: 4},
		{Reason: spanprofile.NotProfiledNoCounter, Goroutines: 5},
	}
	for name, p := range map[string]*spanprofile.Profile{
		"quicksort": spanprofiletest.Profile(),
		"full":      full,
		"empty":     spanprofiletest.Empty(),
		"zero":      {},
		"root-site": kindRoot,
		"what-if":   spanprofiletest.WhatIf(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := encode(t, p)
			got, err := spanprofile.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, p) {
				t.Errorf("Read(Write(p)) differs from p\ngot:  %+v\nwant: %+v", got, p)
			}
			// Same profile, same bytes: a second Write, and the Write of
			// what Read returned.
			if again := encode(t, p); !bytes.Equal(again, data) {
				t.Errorf("two Writes of one profile differ")
			}
			if again := encode(t, got); !bytes.Equal(again, data) {
				t.Errorf("Write(Read(Write(p))) differs from Write(p)")
			}
		})
	}
}

func TestWriteFileReadFile(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "spanprof.pb.gz")
	p := spanprofiletest.Profile()
	if err := spanprofile.WriteFile(name, p); err != nil {
		t.Fatal(err)
	}
	got, err := spanprofile.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("ReadFile(WriteFile(p)) differs from p")
	}
	if _, err := spanprofile.ReadFile(name + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want a not-exist error", err)
	}
}

func TestPprof(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	pp, err := p.Pprof()
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Errorf("CheckValid: %v", err)
	}
	if pp.TimeNanos != p.TimeNanos || pp.DurationNanos != p.DurationNanos {
		t.Errorf("time, duration = %d, %d; want %d, %d", pp.TimeNanos, pp.DurationNanos, p.TimeNanos, p.DurationNanos)
	}
	if pp.SampleType[0].Type != "work" || pp.SampleType[1].Type != "span" || pp.DefaultSampleType != "span" {
		t.Errorf("sample types %v, default %q; want work, span first and span the default", pp.SampleType, pp.DefaultSampleType)
	}
	// pprof's web UI titles the profile "<mapping file> <sample type>":
	// "spanprof span", not "unknown span".
	if len(pp.Mapping) != 1 || pp.Mapping[0].File != spanprofile.MappingFile || pp.PeriodType == nil || pp.PeriodType.Type != "span" || pp.PeriodType.Unit != "nanoseconds" {
		t.Errorf("mappings %v, period type %v; want one mapping of file %q and period type span/nanoseconds", pp.Mapping, pp.PeriodType, spanprofile.MappingFile)
	}
	// The totals of the flame-graph values are the run's work and span.
	var work, span int64
	for _, s := range pp.Sample {
		work += s.Value[0]
		span += s.Value[1]
	}
	if work != p.Work || span != p.Span {
		t.Errorf("sample totals work=%d span=%d, want %d, %d", work, span, p.Work, p.Span)
	}
	// String formats TimeNanos in the local time zone: leave it out of the
	// golden text.
	pp.TimeNanos = 0
	golden(t, "quicksort.pprof.txt", []byte(pp.String()))
}

func TestWriteBadStack(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	p.Contexts[3].Stack = []int{0, len(p.Sites)}
	var buf bytes.Buffer
	err := spanprofile.Write(&buf, p)
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Write with a stack naming a missing site: %v, want an out of range error", err)
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cpuProfile returns a CPU profile as runtime/pprof writes it. Nothing else
// in this package's tests profiles the CPU, so starting the profiler here is
// safe.
func cpuProfile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	pprof.StopCPUProfile()
	return buf.Bytes()
}

func TestReadRejects(t *testing.T) {
	good := encode(t, spanprofiletest.Profile())

	// A pprof profile of the right shape whose site table disagrees with
	// its locations.
	pp, err := spanprofiletest.Profile().Pprof()
	if err != nil {
		t.Fatal(err)
	}
	pp.Location[1].Line[0].Line = 99
	var tampered bytes.Buffer
	if err := pp.Write(&tampered); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"truncated", good[:len(good)/2], "decompressing profile"},
		{"garbage", []byte("this is not a profile\n"), "parsing profile"},
		{"gzipped garbage", gzipped(t, []byte{0xff, 0xff, 0xff, 0xff}), "parsing profile"},
		{"cpu profile", cpuProfile(t), "no spanprof.v1 comment (sample types samples/count, cpu/nanoseconds)"},
		{"heap profile", heapProfile(t), "no spanprof.v1 comment"},
		{"tampered", tampered.Bytes(), "location 2 does not match site qsort.go:20 main.partition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spanprofile.Read(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatal("Read succeeded, want an error")
			}
			if !errors.Is(err, spanprofile.ErrNotSpanProfile) {
				t.Errorf("Read: %v, not ErrNotSpanProfile", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "not a span profile: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("Read: %q, want one line starting %q and containing %q", msg, "not a span profile: ", tc.want)
			}
		})
	}

	// ReadFile names the file.
	name := filepath.Join(t.TempDir(), "cpu.pprof")
	if err := os.WriteFile(name, cpuProfile(t), 0o666); err != nil {
		t.Fatal(err)
	}
	_, err = spanprofile.ReadFile(name)
	if err == nil || !strings.HasPrefix(err.Error(), name+" is not a span profile: no spanprof.v1 comment") {
		t.Errorf("ReadFile of a CPU profile: %v, want %q", err, name+" is not a span profile: no spanprof.v1 comment ...")
	}
}

func heapProfile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.ParseData(buf.Bytes()); err != nil {
		t.Fatalf("the heap profile itself does not parse: %v", err)
	}
	return buf.Bytes()
}

// goTool runs `go tool pprof ARGS` and returns its standard output.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	cmd := exec.Command(gocmd, append([]string{"tool", "pprof"}, args...)...)
	// pprof may keep files under $HOME/pprof; keep them in the test's
	// directory.
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func TestGoToolPprof(t *testing.T) {
	// One test rather than parallel subtests: the first `go tool pprof`
	// builds pprof, and two builds at once would only compete.
	dir := t.TempDir()
	file := filepath.Join(dir, "quicksort.pb.gz")
	p := spanprofiletest.Profile()
	if err := spanprofile.WriteFile(file, p); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		index string
		total string // the total as pprof prints it
		want  []string
	}{
		// Span 141,990,331 ns, which pprof prints in ms.
		{"span", "of 141.99ms total", []string{"main.partition", "main.pqsort", "main.fib", "main"}},
		// Work 858,569,947 ns.
		{"work", "of 858.57ms total", []string{"main.partition", "main.pqsort", "main.fib", "main"}},
	} {
		// -nodefraction=0: fib is far below pprof's default cut on span.
		out := goTool(t, "-top", "-nodefraction=0", "-sample_index="+tc.index, file)
		// The human-readable comments head the report, the JSON one not.
		if !strings.Contains(out, "spanprof: work=858569947 span=141990331") || strings.Contains(out, "spanprof.v1") {
			t.Errorf("pprof -top -sample_index=%s: want the spanprof: comments and not the JSON one\n%s", tc.index, out)
		}
		if !strings.Contains(out, "Type: "+tc.index) || !strings.Contains(out, tc.total) {
			t.Errorf("pprof -top -sample_index=%s: want Type: %s and %q\n%s", tc.index, tc.index, tc.total, out)
		}
		for _, fn := range tc.want {
			if !strings.Contains(out, " "+fn+"\n") {
				t.Errorf("pprof -top -sample_index=%s: no row for %s\n%s", tc.index, fn, out)
			}
		}
	}

	// With no -sample_index, pprof shows the default: span.
	if out := goTool(t, "-top", file); !strings.Contains(out, "Type: span") {
		t.Errorf("pprof -top without -sample_index does not show span:\n%s", out)
	}

	// A diff of a run where partition got twice as fast on the critical
	// path.
	faster := spanprofiletest.Profile()
	for i := range faster.Contexts {
		c := &faster.Contexts[i]
		if n := len(c.Stack); n > 0 && c.Stack[n-1] == 1 {
			faster.Span -= c.OnSpan.Local.Span / 2
			c.OnSpan.Local.Span -= c.OnSpan.Local.Span / 2
		}
	}
	newFile := filepath.Join(dir, "faster.pb.gz")
	if err := spanprofile.WriteFile(newFile, faster); err != nil {
		t.Fatal(err)
	}
	out := goTool(t, "-top", "-sample_index=span", "-diff_base="+file, newFile)
	if !strings.Contains(out, "main.partition") || !strings.Contains(out, "-70.95ms") {
		t.Errorf("pprof -diff_base: want main.partition with -70.95ms\n%s", out)
	}
}

// TestWhatIfComments: a profile with a what-if profile says, for pprof's
// readers, each target's parallelism by factor on a line of its own.
func TestWhatIfComments(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.WhatIf()
	pp, err := p.Pprof()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range pp.Comments {
		if strings.HasPrefix(c, "spanprof: what_if ") {
			lines = append(lines, c)
		}
	}
	w := p.WhatIf[0]
	want := fmt.Sprintf(`spanprof: what_if target="main.partition" parallelism/2=%.2f parallelism/4=%.2f parallelism/8=%.2f parallelism/0=%.2f`,
		w.Parallelism(), p.WhatIf[1].Parallelism(), p.WhatIf[2].Parallelism(), p.WhatIf[3].Parallelism())
	if len(lines) != 3 || lines[0] != want || !strings.HasPrefix(lines[1], `spanprof: what_if target="build tree" `) || !strings.HasPrefix(lines[2], `spanprof: what_if target="all" `) {
		t.Errorf("what-if comment lines:\n%s\nwant 3, the first\n%s", strings.Join(lines, "\n"), want)
	}
}

// BenchmarkWriteProfile writes a profile with as many calling contexts as
// examples/matmul's (17,611, stacks up to five sites deep) and reports the
// bytes it allocates per context: the shadow runtime's estimate of what a
// profile allocates (profileBytesPerContext) is this figure.
func BenchmarkWriteProfile(b *testing.B) {
	const contexts, fanout = 17_611, 8
	p := &spanprofile.Profile{Mode: "serial", Measure: "clock", Unit: "nanoseconds", Spawns: 28_086, Syncs: 9_362}
	for i := range fanout {
		p.Sites = append(p.Sites, spanprofile.Site{File: "main.go", Line: 100 + i, Func: "main.mm", Caller: "main.mm", Kind: spanprofile.KindSpawn})
	}
	for i := range contexts {
		var stack []int
		for n := i; n > 0; n /= fanout {
			stack = append(stack, n%fanout)
		}
		v := int64(i)*7919 + 1
		tr := spanprofile.Triple{Count: 1 + v%5, Work: v, Span: v / 2}
		p.Contexts = append(p.Contexts, spanprofile.Context{
			Stack:  stack,
			OnWork: spanprofile.Measurement{TopCallSite: tr, TopCaller: tr, Local: tr},
			OnSpan: spanprofile.Measurement{Local: tr},
		})
		p.Work += v
	}
	p.Span = p.Work / 8
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if err := spanprofile.Write(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/contexts, "B/context")
}
