// Instr counts the instructions of the shadow runtime's events where no
// hardware counter opens (a VM, a container), with Valgrind's callgrind,
// which counts every instruction the program executes: the same count on
// every run, whatever else runs on the machine, where CPU time per event
// varies by a third with the host's load.
//
// Usage:
//
//	go run ./bench/instr [-bench regexp]
//
// It builds the shadow package's test binary and runs each of its event
// microbenchmarks (BenchmarkCall, BenchmarkSpawnSync, ...) under callgrind
// twice, for N and 2N operations; the difference of the two counts, over
// N, is the instructions of one operation, without the start and end of
// the test binary. It prints, per operation and per event, the
// instructions, the reads of the measure among them, and what is left,
// the engine's: the engine's work, and the benchmark loop's few
// instructions (under 25 per operation).
//
// The benchmarks then read a step clock (stepClock in
// shadow/hotpath_test.go): read twice per event, as the clock and cpu
// measures are, but advancing a fixed step at each read, so that the engine
// takes the same path on every run. Its read is 5 instructions; one of
// the clock measure (runtime.nanotime) is 59 under callgrind, and one of
// the cpu measure, which callgrind cannot run, some 15 by its code (a bare
// RDTSC, a multiply and a comparison). `make microbench-instr` runs it;
// docs/benchmarks.md gives its figures.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spanprof/spanprof/rewrite"
)

// A bench is one of the shadow package's microbenchmarks.
type bench struct {
	name   string // without the Benchmark prefix
	events int    // engine events per operation
	n      int    // operations of the shorter run
}

// benches are the serial event benchmarks of shadow/hotpath_test.go, with
// the event counts their cpuTimer calls give.
var benches = []bench{
	{"Call", 2, 100_000},              // an instrumented call's enter and exit
	{"EnterLeaveAPI", 2, 100_000},     // the same through Leave(Enter(site), f())
	{"SpawnSync", 3, 100_000},         // a spawn of an empty child and its wait
	{"SpawnSyncAPI", 3, 50_000},       // the same through the rewritten code's entry points
	{"SpawnDoneSync", 4, 100_000},     // spawn, Done, the child's end, wait
	{"SpawnDoneLastSync", 3, 100_000}, // the same, the Done glued to the end
	{"FibGlued", 54_725, 20},          // the events of fib(20), glued as the rewriter glues fib
}

// readFuncs matches the function that reads the benchmarks' measure.
var readFuncs = regexp.MustCompile(`shadow\.\(\*stepClock\)\.Read$`)

func main() {
	only := flag.String("bench", ".", "count only the benchmarks whose names match `regexp`")
	pgo := flag.Bool("pgo", true, "compile shadow and perf with shadow/engine.pgo, as spanprof's builds do")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench/instr [-bench regexp] [-pgo=false]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	re, err := regexp.Compile(*only)
	if err != nil || flag.NArg() > 0 {
		if err != nil {
			fmt.Fprintln(os.Stderr, "instr: -bench:", err)
		}
		flag.Usage()
		os.Exit(2)
	}
	if err := run(re, *pgo); err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		os.Exit(1)
	}
}

// result is one benchmark's counts per operation.
type result struct {
	bench
	instr, reads, readInstr float64
}

func run(only *regexp.Regexp, pgo bool) error {
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		return errors.New("valgrind not found: install it (apt-get install valgrind); this counts instructions with its callgrind tool")
	}
	tmp, err := os.MkdirTemp("", "spanprof-instr-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := buildShadowTest(tmp, pgo)
	if err != nil {
		return err
	}
	version, _ := exec.Command(vg, "--version").Output()
	with := "with shadow/engine.pgo"
	if !pgo {
		with = "without the runtime's profile"
	}
	fmt.Printf("instructions per operation, counted by callgrind (%s), on a step clock, GOMAXPROCS=1, %s\n\n", strings.TrimSpace(string(version)), with)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tevents/op\tinstructions/op\t/event\treads/op\tread instructions/op\tengine/op\tengine/event\t")
	for _, b := range benches {
		if !only.MatchString(b.name) {
			continue
		}
		r, err := count(vg, bin, tmp, b)
		if err != nil {
			return err
		}
		rest := r.instr - r.readInstr
		fmt.Fprintf(tw, "Benchmark%s\t%d\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.0f\t\n", b.name, b.events, r.instr, r.instr/float64(b.events), r.reads, r.readInstr, rest, rest/float64(b.events))
	}
	return tw.Flush()
}

// buildShadowTest builds the shadow package's test binary in dir, with the
// runtime's profile if pgo.
func buildShadowTest(dir string, pgo bool) (string, error) {
	bin := filepath.Join(dir, "shadow.test")
	args := []string{"test", "-c", "-o", bin}
	if pgo {
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOMOD: %v", err)
		}
		prof, err := rewrite.EnginePGO(filepath.Dir(strings.TrimSpace(string(gomod))))
		if err == nil && prof == "" {
			err = fmt.Errorf("no shadow/engine.pgo")
		}
		if err != nil {
			return "", fmt.Errorf("%v (run in the spanprof module, or with -pgo=false)", err)
		}
		args = append(args, rewrite.PGOFlags(prof)...)
	}
	build := exec.Command("go", append(args, "github.com/spanprof/spanprof/shadow")...)
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the shadow test binary: %v\n%s", err, msg)
	}
	return bin, nil
}

// count runs benchmark b under callgrind for b.n and 2·b.n operations and
// returns the difference per operation.
func count(vg, bin, dir string, b bench) (result, error) {
	var p [2]profile
	for i, n := range []int{b.n, 2 * b.n} {
		out := filepath.Join(dir, fmt.Sprintf("%s.%d.out", b.name, n))
		cmd := exec.Command(vg, "--tool=callgrind", "--callgrind-out-file="+out,
			bin, "-test.run", "^$", "-test.bench", "^Benchmark"+b.name+"$", "-test.benchtime", strconv.Itoa(n)+"x", "-test.count", "1")
		// The step clock, every strand counted, and one thread (see
		// defaultEngine in shadow/hotpath_test.go): the count is then
		// the same on every run within a few instructions per operation.
		// No asynchronous preemption: callgrind 3.19 fails an assertion
		// on the runtime's preemption signal about one run in ten. No
		// RDTSCP for the runtime's lock timing either: Valgrind's CPU
		// claims it and cannot run it, and a contended lock on a busy
		// machine then dies of SIGILL.
		cmd.Env = append(os.Environ(), "SPANPROF_BENCH_INSTR=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return result{}, fmt.Errorf("running Benchmark%s under callgrind: %v\n%s", b.name, err, lastLines(msg, 10))
		}
		f, err := os.Open(out)
		if err != nil {
			return result{}, err
		}
		p[i], err = parseCallgrind(f, readFuncs)
		f.Close()
		if err != nil {
			return result{}, fmt.Errorf("%s: %v", out, err)
		}
	}
	return perOp(b, p[0], p[1])
}

// perOp is the difference of the runs of n and 2n operations, per
// operation.
func perOp(b bench, short, long profile) (result, error) {
	n := float64(b.n)
	r := result{bench: b,
		instr:     float64(long.total-short.total) / n,
		reads:     float64(long.reads-short.reads) / n,
		readInstr: float64(long.readCost-short.readCost) / n}
	if r.instr <= 0 || r.reads < 0 || r.readInstr < 0 || r.readInstr > r.instr {
		return r, fmt.Errorf("counting Benchmark%s: the counts of %d and %d operations do not differ as they should (%d and %d instructions)", b.name, b.n, 2*b.n, short.total, long.total)
	}
	return r, nil
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
