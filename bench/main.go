// Bench measures spanprof's overhead on the benchmark suite the way Figure 11
// of the Cilkprof paper does: for every example listed in examples/suite.txt
// it compares the running time of the program built with spanprof (serial
// mode, the default measure) with the same program built without it.
//
// Usage:
//
//	go run ./bench [-runs N] [-o results.csv] [-only name,name] [-procs P] [-parprocs Q] [-time wall|cpu]
//
// It builds five binaries of each example: the plain program (go build); its
// serial elision (spanprof build -mode elision: every spawn a plain call,
// nothing measured); the profiled program (spanprof build); the plain
// program with Go's execution tracer on (runtime/trace started by an init
// function added with go build -overlay), the reference a Go programmer
// already has; and the program profiled in parallel mode (spanprof build
// -mode parallel). It then runs them, one after another, N times each on the
// default input with GOMAXPROCS=P, except that the parallel-mode program
// runs with GOMAXPROCS=Q, next to a run of the plain program at Q. It
// prints a table (the median of each time, and the median of each round's
// ratios, with their geometric mean and maximum) and writes the same numbers as CSV. The table shows wall time,
// or with -time cpu the user + system time of the process, which other
// processes on the same cores disturb less; the CSV holds both. Every run
// must exit 0: the examples check their own results. docs/benchmarks.md
// explains the columns.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spanprof/spanprof/bench/suite"
)

func main() {
	if os.Getenv(spawnerEnv) != "" {
		os.Exit(spawnerMain())
	}
	runs := flag.Int("runs", 5, "run each binary `n` times")
	out := flag.String("o", "bench-results.csv", "write the results as CSV to `file`")
	only := flag.String("only", "", "measure only the comma-separated `examples`")
	procs := flag.Int("procs", 1, "run the programs with GOMAXPROCS=`n`")
	parProcs := flag.Int("parprocs", 2, "run the parallel-mode program, and the plain one it is compared with, with GOMAXPROCS=`n`")
	timeFlag := flag.String("time", "wall", "show times on `clock` wall or cpu (user + system) in the table")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench [-runs N] [-o results.csv] [-only name,name] [-procs P] [-parprocs Q] [-time wall|cpu]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c, err := parseClock(*timeFlag)
	if err != nil || flag.NArg() > 0 || *runs < 1 || *procs < 1 || *parProcs < 1 {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		flag.Usage()
		os.Exit(2)
	}
	if err := bench(*runs, *procs, *parProcs, c, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is an error in the command line rather than in a build or a run.
type usageError struct{ error }

func bench(runs, procs, parProcs int, c clock, only, out string) error {
	root, err := moduleRoot()
	if err != nil {
		return usageError{err}
	}
	list, err := suite.ParseFile(filepath.Join(root, "examples", "suite.txt"))
	if err != nil {
		return usageError{err}
	}
	examples, err := choose(list, only)
	if err != nil {
		return usageError{err}
	}
	// The spawner first, while the driver is small: its peak is the
	// floor of every run's peak RSS (spawner.go).
	sp, err := startSpawner()
	if err != nil {
		return err
	}
	defer sp.close()
	tmp, err := os.MkdirTemp("", "spanprof-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	p := newProgress(os.Stderr)
	bins, err := buildAll(root, tmp, examples, p)
	if err != nil {
		p.done()
		return err
	}
	for i := range bins {
		bins[i].stress = examples[i].Stress
	}
	r := &runner{dir: tmp, procs: procs, parProcs: parProcs, env: baseEnv(os.Environ()), sp: sp}
	var results []result
	for i, b := range bins {
		rounds, err := r.measure(b, runs, func(round int) {
			p.printf("%d/%d %s run %d/%d", i+1, len(bins), b.name, round, runs)
		})
		if err != nil {
			p.done()
			return err
		}
		res := summarize(b.name, procs, rounds)
		res.stress = examples[i].Stress
		results = append(results, res)
	}
	p.done()

	what := map[clock]string{wallClock: "wall time", cpuClock: "user + system time"}[c]
	fmt.Printf("GOMAXPROCS=%d (parallel and parallel/plain: %d), median of %d runs, %s; %s %s/%s, %d CPUs\n\n",
		procs, parProcs, runs, what, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if err := writeTable(os.Stdout, results, c); err != nil {
		return err
	}
	if err := writeParallelFive(os.Stdout, results, c); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := writeCSV(f, results, c); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Fprintf(os.Stderr, "bench: results in %s\n", out)
	return nil
}

// moduleRoot returns the directory of spanprof's go.mod, so that the driver
// works from any directory of the module.
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not in a module: run go run ./bench in the spanprof module")
	}
	root := filepath.Dir(gomod)
	if _, err := os.Stat(filepath.Join(root, "examples", "suite.txt")); err != nil {
		return "", fmt.Errorf("%s has no examples/suite.txt: run go run ./bench in the spanprof module", root)
	}
	return root, nil
}

// choose returns the ready examples of the list, or those named in only (a
// comma-separated list), in the list's order.
func choose(list []suite.Example, only string) ([]suite.Example, error) {
	ready := suite.Ready(list)
	if only == "" {
		if len(ready) == 0 {
			return nil, errors.New("examples/suite.txt lists no example that is ready")
		}
		return ready, nil
	}
	want := strings.Split(only, ",")
	for _, name := range want {
		i := slices.IndexFunc(list, func(e suite.Example) bool { return e.Name == name })
		switch {
		case i < 0:
			return nil, fmt.Errorf("-only: %q is not in examples/suite.txt", name)
		case list[i].Pending:
			return nil, fmt.Errorf("-only: %s is not ready (its line in examples/suite.txt says %s)", name, suite.Pending)
		}
	}
	var chosen []suite.Example
	for _, e := range ready {
		if slices.Contains(want, e.Name) {
			chosen = append(chosen, e)
		}
	}
	return chosen, nil
}
