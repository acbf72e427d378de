package shadow

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// TestStartStopWritesProfile runs a small program through the package-level
// API with the real clock, as generated code does, and checks the file it
// writes: it reads back, and `go tool pprof` shows the critical path. It
// uses the process-wide run, which it leaves to the next test (unstart).
func TestStartStopWritesProfile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	t.Setenv(envOut, out)
	measure := steadyMeasure()
	t.Setenv(envMeasure, measure)
	t.Setenv(envBurden, "1us")
	base := register([]SiteInfo{
		{File: "api_test.go", Line: 1, Func: "shadow.busy", Caller: "shadow.TestStartStopWritesProfile", Kind: spanprofile.KindSpawn},
		{File: "api_test.go", Line: 2, Func: "shadow.busy", Caller: "shadow.TestStartStopWritesProfile", Kind: spanprofile.KindCall},
	})
	o, err := optionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := start(o); err != nil {
		t.Fatal(err)
	}
	defer unstart() // so that -count or -cpu may run it again
	if err := start(o); err == nil {
		t.Error("a second start succeeded")
	}
	obj := unsafe.Pointer(new(wgStub))
	for i := 0; i < 4; i++ {
		spawn(base, obj, func() { sink += busy(2_000_000) })
	}
	join(obj)
	call(base+1, func() { sink += busy(1_000_000) })
	if err := stopAndWrite(); err != nil {
		t.Fatal(err)
	}
	if err := stopAndWrite(); err != nil {
		t.Errorf("second stopAndWrite: %v", err)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Measure != measure || p.Spawns != 4 || p.Syncs != 1 || (measure == "clock" && p.Burden != 1000) {
		t.Errorf("profile header = burden %d measure %s unit %s spawns %d syncs %d", p.Burden, p.Measure, p.Unit, p.Spawns, p.Syncs)
	}
	// Four equal children then a call half as long: parallelism about
	// (4+0.5)/(1+0.5) = 3, whatever the machine's speed. The children run
	// long enough (about 0.7 ms each) that the root's own strands, up to
	// 60 µs on a loaded machine, do not move it. With CPU time
	// (no counters) a strand runs up to about 1.5x slower while another
	// process keeps its sibling hyperthread busy (one child read 1.36x
	// its siblings' average in a busy go test ./..., 1.47x beside two busy
	// loops, which read 2.14); the span takes the slowest child, so one
	// child slowed 1.75x reads 4.5/(1.75+0.5) = 2.0.
	if par := p.Parallelism(); measure == "clock" {
		t.Logf("parallelism %.2f by the clock (about 3 on an idle machine)", par)
	} else if par < 2.0 || par > 3.5 {
		t.Errorf("parallelism %.2f, want about 3 (work %d span %d, contexts %+v)", par, p.Work, p.Span, p.Contexts)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command for go tool pprof")
	}
	cmd := exec.Command("go", "tool", "pprof", "-top", "-sample_index=span", out)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	top, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	if !strings.Contains(string(top), "shadow.busy") {
		t.Errorf("go tool pprof -top does not show shadow.busy:\n%s", top)
	}
}

// sink keeps busy's result alive.
var sink int

//go:noinline
func busy(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i
	}
	return x
}

// steadyMeasure is the measure for tests that run a profile: instructions
// where the counter opens, since the clock stretches whichever strands
// other processes preempt and go test ./... runs other test binaries
// beside this one; else the default, cpu, which excludes the time the
// thread did not run. (With the clock, TestParlibForOnSpan failed under
// make test beside two busy loops: a preempted root strand held 43% of the
// span.)
func steadyMeasure() string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := perf.Open("instructions")
	if err != nil {
		return perf.Default()
	}
	m.Close()
	return "instructions"
}
