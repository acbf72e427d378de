package main

import (
	"os/exec"
	"strings"
	"testing"
)

// A callgrind output file as Valgrind 3.19 writes it, cut down: names
// compressed after their first use, a read method called through its
// wrapper (which must count once), and calls of other functions.
const sample = `# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 5000

ob=(1) shadow.test
fl=(1) shadow/engine.go
fn=(10) github.com/spanprof/spanprof/shadow.(*engine).tick
26 25
+1 10
cfi=(2) shadow/hotpath_test.go
cfn=(20) github.com/spanprof/spanprof/shadow.(*stepClock).Read
calls=3 +53
* 180
cfn=(30) github.com/spanprof/spanprof/shadow.(*engine).tickAt
calls=3 0
* 900

fl=(2)
fn=(20)
53 30
cfn=(21) github.com/spanprof/spanprof/shadow.(*stepClock).Read
calls=3 0
* 60
cfn=(22) runtime.nanotime
calls=3 0
* 120

fl=(1)
fn=(11) github.com/spanprof/spanprof/shadow.(*engine).restart
+4 8
cfn=(20)
calls=1 -2
* 60

totals: 5000
`

func TestParseCallgrind(t *testing.T) {
	p, err := parseCallgrind(strings.NewReader(sample), readFuncs)
	if err != nil {
		t.Fatal(err)
	}
	// Four reads (three from tick, one from restart) of 60 instructions;
	// the wrapper's call of the method inside it is not a fifth.
	if want := (profile{total: 5000, reads: 4, readCost: 240}); p != want {
		t.Errorf("parseCallgrind = %+v, want %+v", p, want)
	}
}

func TestParseCallgrindErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"truncated", "events: Ir\nfn=(1) f\n1 2\n", "no summary line"},
		{"bad count", "summary: 10\nfn=(1) f\ncfn=(2) g\ncalls=x 1\n* 5\n", "line 4"},
		{"no cost", "summary: 10\nfn=(1) f\ncfn=(2) shadow.(*stepClock).Read\ncalls=1 1\n*\n", "line 5: cost line without a cost"},
	} {
		_, err := parseCallgrind(strings.NewReader(tc.in), readFuncs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestPerOp(t *testing.T) {
	b := bench{name: "Call", events: 2, n: 100}
	r, err := perOp(b, profile{total: 10_000, reads: 402, readCost: 24_120}, profile{total: 98_000, reads: 802, readCost: 48_120})
	if err != nil {
		t.Fatal(err)
	}
	if r.instr != 880 || r.reads != 4 || r.readInstr != 240 {
		t.Errorf("perOp = %+v, want 880 instructions, 4 reads of 240", r)
	}
	// A longer run that counted fewer instructions is no measurement.
	if _, err := perOp(b, profile{total: 98_000}, profile{total: 10_000}); err == nil {
		t.Error("perOp accepted a longer run with fewer instructions")
	}
}

// TestCallUnderValgrind counts BenchmarkCall's instructions where Valgrind
// is installed (.ci/run installs it): a call pair reads the measure four
// times, twice per event, and takes some hundreds of instructions.
func TestCallUnderValgrind(t *testing.T) {
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		t.Skip("valgrind is not installed (apt-get install valgrind)")
	}
	if testing.Short() {
		t.Skip("builds and runs the shadow test binary under valgrind")
	}
	dir := t.TempDir()
	bin, err := buildShadowTest(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := count(vg, bin, dir, bench{name: "Call", events: 2, n: 2000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BenchmarkCall: %.0f instructions/op, %.1f reads/op of %.0f instructions", r.instr, r.reads, r.readInstr)
	if r.reads != 4 {
		t.Errorf("reads/op = %v, want 4 (two per event)", r.reads)
	}
	if r.instr < 200 || r.instr > 5000 || r.readInstr <= 0 {
		t.Errorf("instructions/op = %v with %v in reads: not a call pair's", r.instr, r.readInstr)
	}
}
