package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/speedup"
)

var cmdSpeedup = &command{
	name:  "speedup",
	usage: "spanprof speedup [flags] [PKG] [-- ARGS...]",
	short: "measure the empirical factored speedup on 1 to NumCPU cores",
	run:   runSpeedup,
}

func init() {
	w, h := speedup.PNGSize()
	cmdSpeedup.long = `Speedup measures how the main package PKG (default .) speeds up with the
number of processors, and why it does not speed up more: the factored
speedup of Acar, Charguéraud and Rainey ("Parallel Work Inflation, Memory
Effects, and their Empirical Analysis"), drawn over the speedup bounds that
Cilkview derives from a span profile of the same program.

Speedup builds PKG as it is (go build, no instrumentation) and runs it with
ARGS and GOMAXPROCS=P for each P of -procs, -runs times each. Every time is
the median of its runs:

	T_P        the wall-clock time of a run, from process start to exit
	I_P        the idle time: P·T_P less the processor time (user and system)
	           the process used and less the time its threads waited for a
	           CPU that other processes held (Linux's run delay)
	T_1        T_P at P=1, measured even when -procs leaves 1 out
	T_s        the sequential baseline: the program with -baseline-args
	           added, or the command -baseline, at GOMAXPROCS=1; without
	           either, T_s = T_1 and the output says so
	T_elision  the serial elision: PKG built with spanprof's
	           instrumentation and run with SPANPROF_MODE=elision, which
	           runs every spawn as a plain call, at GOMAXPROCS=1

The runs go round by round (the baseline, every P, the elision, and again),
so that a slow spell of a shared machine falls on every P alike. Then PKG is
profiled once, in serial mode with the default measure, into
DIR/profile.pb.gz. If it cannot be instrumented or the instrumented program
fails, speedup says so and leaves out the elision and the bounds.

Idle time is measured from outside, so that nothing is added to the program:
the process's processor time when it exits, and the run delay of each of its
threads from /proc/PID/task/TID/schedstat, read every 10 ms while it runs. A
thread that waits for a CPU while other processes run is busy, not idle for
want of work. What this gets wrong: on a busy machine the polling misses up
to 10 ms of delay per thread, and the delay of threads that hold no P
(sysmon) counts as work; the Go scheduler's spinning in search of work
counts as work, where the paper counts the search for work as idle; start-up
and exit, about a millisecond on one thread, count the other P−1 processors
idle; and I_P is 0 when threads without a P took more than was idle. A
program idle for more than a tenth of T_1 at P=1, where it has nothing to
wait for, gets a warning. The runtime's /cpu/classes/idle metric would need
code in the program, and it also counts spinning as busy.

The curves, every one a speedup over T_s, as the paper measures them all
against the one baseline:

	linear              P
	elision             P·T_s/T_elision (the plot only)
	maximal             P·T_s/T_1: no idle time and no inflation
	idle-specific       P·T_s/(T_1+I_P): no inflation
	inflation-specific  P·T_s/W_P, W_P = P·T_P − I_P: no idle time
	actual              T_s/T_P
	upper_bound         min(P, T1/T∞)·T_s/T_1
	lower_bound         T1/(T1/P + 1.7·burdened span)·T_s/T_1

Linear to maximal is the overhead of the parallel program over the baseline
(elision to maximal the part of it that spawning costs); maximal to
idle-specific is idle time, too little parallelism; maximal to
inflation-specific is work inflation, the extra work of parallel runs
(memory bandwidth, contention, false sharing); actual is below both. A
curve that flattens names the factor that stops the program scaling.

The bounds are Cilkview's, from the profile's work T1, span T∞ and burdened
span (see "spanprof help report"): bounds on the speedup over the program's
own one-processor time, multiplied by T_s/T_1 to be speedups over T_s like
the curves. So the upper bound is the maximal curve capped by the
parallelism. Only the profile's ratios enter, not its times, which
instrumentation stretches.

In DIR, speedup writes speedup.csv, speedup.svg, speedup.png (` + strconv.Itoa(w) + `×` + strconv.Itoa(h) + `
pixels: 8 by 5 inches at 150 dpi) and profile.pb.gz, and it prints the
table to standard output. The columns of both, one row per P:

	procs               P
	t_s, t_1, t_p       T_s, T_1 and T_P, in seconds
	idle                I_P, in seconds
	work_p              W_P = P·T_P − I_P, in seconds
	inflation           F_P = W_P − T_1, in seconds
	linear, maximal, idle_specific, inflation_specific, actual
	                    the curves
	upper_bound, lower_bound
	                    the bounds; empty in the CSV file, "-" in the
	                    table, without a profile
	others              the processor time other processes took while a
	                    run at P ran, in seconds: the machine's busy and
	                    steal time in /proc/stat, read before and after the
	                    run, less the program's own processor time; empty or
	                    "-" without /proc/stat
	wait                the time the program's threads waited for a CPU
	                    during a run at P (their run delay), in seconds

Other processes' load is not work inflation, but it slows every run and
its wait counts as work: T_P, idle and inflation include it. When other
processes took more than a tenth of the machine's processor time over all
the runs, or the program waited for a CPU more than a tenth of the time it
wanted one (in runs with P at most the number of CPUs), speedup prints one
line above the table, and on the plot, that says the machine was busy, by
how much, and to measure again on a quiet machine.

Progress goes to standard error, a line a run. The program's output is
discarded, but for its standard error when it fails.

The flags are:

	-procs list
		the processor counts, comma-separated, such as 1,2,4 (default 1
		to the number of CPUs). More than the number of CPUs is allowed:
		the threads then wait for CPUs, which is run delay, so it shows
		as work inflation.
	-runs n
		run each configuration n times and take the medians (default 3).
	-baseline-args args
		measure T_s as the program with args added after ARGS, split on
		spaces, such as -baseline-args -serial.
	-baseline command
		measure T_s as command, split on spaces (no shell), in the
		current directory.
	-o dir
		write the files to dir, created if need be (default
		spanprof-speedup).
	-burden duration
		the scheduling cost charged to each spawn in the burdened span of
		the profile, and so in the lower bound (default: calibrated).

Exit status: 0 on success, 1 if the program or the baseline failed (its
standard error is shown), 2 on a usage or build error.
`
}

// speedupFlags are the flags of the speedup command.
type speedupFlags struct {
	procs        []int
	runs         int
	baselineArgs []string
	baseline     []string
	out          string
	burden       time.Duration
}

// parseProcs parses the -procs list: positive integers, comma-separated.
// The counts come back sorted, each once; "" is 1 to runtime.NumCPU().
func parseProcs(s string) ([]int, error) {
	if s == "" {
		procs := make([]int, runtime.NumCPU())
		for i := range procs {
			procs[i] = i + 1
		}
		return procs, nil
	}
	var procs []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-procs %s: %q is not a processor count (want a list such as 1,2,4)", s, f)
		}
		procs = append(procs, n)
	}
	slices.Sort(procs)
	return slices.Compact(procs), nil
}

// speedupArgs parses the flags and arguments of the speedup command.
func speedupArgs(c *command, args []string) (f speedupFlags, pkg string, progArgs []string, err error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	procs := fs.String("procs", "", "run with GOMAXPROCS set to each of the comma-separated `list` (default 1 to NumCPU)")
	fs.IntVar(&f.runs, "runs", 3, "run each configuration `n` times and take the medians")
	baselineArgs := fs.String("baseline-args", "", "time the baseline T_s as the program with `args` added")
	baseline := fs.String("baseline", "", "time the baseline T_s as `command` (split on spaces)")
	fs.StringVar(&f.out, "o", "spanprof-speedup", "write speedup.csv, speedup.svg, speedup.png and profile.pb.gz to `dir`")
	fs.DurationVar(&f.burden, "burden", 0, "charge `duration` to each spawn in the burdened span (default: calibrated)")
	args, progArgs = splitArgs(args) // before flag.Parse takes a leading "--"
	if err := parseFlags(c, fs, args); err != nil {
		return f, "", nil, err
	}
	usage := func(format string, args ...any) (speedupFlags, string, []string, error) {
		return f, "", nil, usageError(c, format, args...)
	}
	if f.procs, err = parseProcs(*procs); err != nil {
		return usage("%v", err)
	}
	if f.runs < 1 {
		return usage("-runs %d: want 1 or more", f.runs)
	}
	if *baselineArgs != "" && *baseline != "" {
		return usage("-baseline-args and -baseline are two ways to give the baseline: give one")
	}
	f.baselineArgs = strings.Fields(*baselineArgs)
	f.baseline = strings.Fields(*baseline)
	if f.burden < 0 {
		return usage("-burden %v: want a duration of 0 or more", f.burden)
	}
	if f.out == "" {
		return usage("-o: want a directory")
	}
	if pkg, err = onePackage(c, fs.Args()); err != nil {
		return f, "", nil, err
	}
	return f, pkg, progArgs, nil
}

// mainPackage checks with "go list" that pkg is a main package and returns
// its import path, shortened to be relative to its module.
func mainPackage(pkg string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command("go", "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}", pkg)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", errors.New(firstOutputLine(errOut.String(), err))
	}
	fields := strings.Split(strings.TrimSpace(out.String()), "\t")
	if len(fields) != 3 {
		return "", fmt.Errorf("go list %s: unexpected output %q", pkg, out.String())
	}
	name, path, mod := fields[0], fields[1], fields[2]
	if name != "main" {
		return "", fmt.Errorf("package %s is not a main package", path)
	}
	if rel, ok := strings.CutPrefix(path, mod+"/"); ok && mod != "" {
		return rel, nil
	}
	return path, nil
}

// firstOutputLine returns the first line of a tool's output that is not a
// "#" heading, or err's text when there is none.
func firstOutputLine(output string, err error) string {
	for l := range strings.Lines(output) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return strings.TrimPrefix(l, "./")
		}
	}
	return err.Error()
}

// A config is one program and environment that speedup times.
type config struct {
	label string   // in the progress line: "P=2", "baseline", "elision"
	procs int      // GOMAXPROCS
	argv  []string // the command line
	env   []string // added to the environment
	// lenient configs are spanprof's own (the instrumented binary): their
	// failure drops what they measure instead of stopping everything.
	lenient bool
	failed  bool
	samples []speedup.Sample
}

// walls returns the wall-clock times of the config's samples.
func (c *config) walls() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Wall
	}
	return w
}

// others returns the processor time other processes took during each of
// the config's samples, where it was measured.
func (c *config) others() []float64 {
	var w []float64
	for _, s := range c.samples {
		if s.Machine > 0 {
			w = append(w, s.Others)
		}
	}
	return w
}

// waits returns the run delays of the config's samples.
func (c *config) waits() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Delay
	}
	return w
}

// idles returns the idle times of the config's samples.
func (c *config) idles() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Idle(c.procs)
	}
	return w
}

// run runs the config once and records the sample. On failure it prints
// the program's standard error and returns the error.
func (c *config) run(stderr io.Writer) error {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = append(append(os.Environ(), c.env...), "GOMAXPROCS="+strconv.Itoa(c.procs))
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	s, err := speedup.Run(cmd)
	if err != nil {
		stderr.Write(errOut.Bytes())
		return err
	}
	c.samples = append(c.samples, s)
	return nil
}

// quote returns a command line for messages.
func quote(argv []string) string {
	return strings.Join(argv, " ")
}

func runSpeedup(c *command, args []string, stdout, stderr io.Writer) int {
	f, pkg, progArgs, err := speedupArgs(c, args)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	if len(f.baseline) > 0 {
		if _, err := exec.LookPath(f.baseline[0]); err != nil {
			errorf(stderr, "speedup: -baseline: %v", err)
			return exitUsage
		}
	}
	name, err := mainPackage(pkg)
	if err != nil {
		errorf(stderr, "speedup: %v", err)
		return exitUsage
	}
	out, err := filepath.Abs(f.out)
	if err == nil {
		err = os.MkdirAll(out, 0o755)
	}
	if err != nil {
		errorf(stderr, "speedup: %v", err)
		return exitUsage
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(stderr, "speedup: "+format+"\n", args...)
	}
	if p := f.procs[len(f.procs)-1]; p > runtime.NumCPU() {
		progress("P=%d is more than the %d CPUs: the threads' wait for CPUs will show as work inflation", p, runtime.NumCPU())
	}
	title := strings.Join(append([]string{name}, progArgs...), " ")
	tmp, err := os.MkdirTemp("", "spanprof-speedup-")
	if err != nil {
		errorf(stderr, "speedup: %v", err)
		return exitUsage
	}
	defer os.RemoveAll(tmp)

	progress("building %s", name)
	bin := filepath.Join(tmp, filepath.Base(name))
	var buildOut bytes.Buffer
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Stdout, build.Stderr = &buildOut, &buildOut
	if err := build.Run(); err != nil {
		errorf(stderr, "speedup: %s", firstOutputLine(buildOut.String(), err))
		return exitUsage
	}
	// The configurations, in the order each round runs them.
	var configs []*config
	var baseline *config
	switch {
	case len(f.baselineArgs) > 0:
		baseline = &config{label: "baseline", argv: slices.Concat([]string{bin}, progArgs, f.baselineArgs)}
	case len(f.baseline) > 0:
		baseline = &config{label: "baseline", argv: f.baseline}
	}
	if baseline != nil {
		baseline.procs = 1
		configs = append(configs, baseline)
	}
	byProcs := make(map[int]*config)
	for _, p := range slices.Concat([]int{1}, f.procs) {
		if byProcs[p] == nil {
			byProcs[p] = &config{label: "P=" + strconv.Itoa(p), procs: p, argv: slices.Concat([]string{bin}, progArgs)}
			configs = append(configs, byProcs[p])
		}
	}
	// The instrumented binary is built when the first round gets to the
	// elision, so that a program that fails with these arguments does so
	// before that longer build.
	instr := filepath.Join(tmp, "instrumented")
	elision := &config{label: "elision", procs: 1, argv: slices.Concat([]string{instr}, progArgs),
		env: []string{"SPANPROF_MODE=elision", "SPANPROF_OUT=" + filepath.Join(tmp, "elision.pb.gz")}, lenient: true}
	configs = append(configs, elision)
	for r := 1; r <= f.runs; r++ {
		for _, cfg := range configs {
			if cfg == elision && r == 1 {
				progress("building %s instrumented, for the serial elision and the span profile", name)
				if err := buildInstrumented(pkg, instr, stderr); err != nil {
					progress("no serial elision and no bounds: %v", err)
					instr, elision.failed = "", true
				}
			}
			if cfg.failed {
				continue
			}
			progress("%s run %d/%d", cfg.label, r, f.runs)
			err := cfg.run(stderr)
			switch {
			case err == nil:
			case cfg.lenient:
				errorf(stderr, "speedup: the %s (%s) failed: %v; it is left out", cfg.label, quote(cfg.argv), err)
				cfg.failed = true
			default:
				what := name
				if cfg == baseline {
					what = "the baseline " + quote(cfg.argv)
				}
				errorf(stderr, "speedup: %s failed at %s (run %d/%d): %v", what, cfg.label, r, f.runs, err)
				return exitFailed
			}
		}
	}

	var prof *spanprofile.Profile
	profFile := filepath.Join(out, "profile.pb.gz")
	os.Remove(profFile) // a profile of an earlier run must not pass for this one's
	if instr != "" {
		progress("profiling %s (serial mode)", name)
		prof = profileRun(instr, progArgs, profFile, f.burden, stderr)
	}

	// T_s, T_1 and T_elision, and the measurements at each P.
	one := speedup.Median(byProcs[1].walls())
	in := speedup.Input{Serial: one, One: one, Profile: prof}
	if baseline != nil {
		in.Serial = speedup.Median(baseline.walls())
	}
	if !elision.failed {
		in.Elision = speedup.Median(elision.walls())
	}
	for _, p := range f.procs {
		cfg := byProcs[p]
		in.Runs = append(in.Runs, speedup.Measurement{Procs: p, Time: speedup.Median(cfg.walls()), Idle: speedup.Median(cfg.idles()),
			Others: speedup.Median(cfg.others()), Wait: speedup.Median(cfg.waits())})
	}
	// Other processes' load over every run, the baseline's and the
	// elision's included: they all set the curves.
	var load speedup.Load
	for _, cfg := range configs {
		for _, s := range cfg.samples {
			load.Add(s, cfg.procs, runtime.NumCPU())
		}
	}
	busy := load.Warning()
	points, err := speedup.Factor(in)
	if err != nil {
		errorf(stderr, "speedup: %v", err)
		return exitFailed
	}
	// A fork/join program on one processor has nothing to wait for: idle
	// time there is I/O, sleeps, or other processes' time that the run
	// delay did not catch, and it is in every I_P as well.
	if idle := speedup.Median(byProcs[1].idles()); idle > 0.1*in.One {
		progress("at P=1 the program was idle %.0f%% of T_1: it waits for something (input, sleeps, another process), or this system does not report run delays and other processes took that time", 100*idle/in.One)
	}

	// The summary above the table, and the chart's subtitle.
	var serialDoc string
	switch {
	case len(f.baselineArgs) > 0:
		serialDoc = "the program with " + quote(f.baselineArgs)
	case len(f.baseline) > 0:
		serialDoc = quote(f.baseline)
	default:
		serialDoc = "no baseline given (-baseline-args or -baseline): T_s = T_1"
	}
	runs := "the median of " + strconv.Itoa(f.runs) + " runs"
	if f.runs == 1 {
		runs = "1 run"
	}
	fmt.Fprintf(stdout, "factored speedup of %s, %s\n", title, runs)
	fmt.Fprintf(stdout, "T_s        %.3f s  %s\n", in.Serial, serialDoc)
	fmt.Fprintf(stdout, "T_1        %.3f s  GOMAXPROCS=1\n", in.One)
	subtitle := fmt.Sprintf("T_s %.3f s (%s), T_1 %.3f s", in.Serial, strings.TrimSuffix(serialDoc, ": T_s = T_1"), in.One)
	if in.Elision > 0 {
		fmt.Fprintf(stdout, "T_elision  %.3f s  serial elision, GOMAXPROCS=1\n", in.Elision)
		subtitle += fmt.Sprintf(", T_elision %.3f s", in.Elision)
	} else {
		fmt.Fprintf(stdout, "T_elision  -        not measured\n")
	}
	if prof != nil {
		fmt.Fprintf(stdout, "profile    parallelism %.2f, burdened parallelism %.2f (%s)\n", prof.Parallelism(), prof.BurdenedParallelism(), profFile)
		subtitle += fmt.Sprintf("; parallelism %.1f, burdened %.1f", prof.Parallelism(), prof.BurdenedParallelism())
	} else {
		fmt.Fprintf(stdout, "profile    -        none: no bounds\n")
	}
	if busy != "" {
		fmt.Fprintln(stdout, busy)
	}
	fmt.Fprintln(stdout)
	if err := speedup.WriteTable(stdout, points); err != nil {
		errorf(stderr, "speedup: %v", err)
		return exitUsage
	}

	chart := speedup.Chart{Title: "Factored speedup of " + title, Subtitle: subtitle, Points: points, Busy: busy}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"speedup.csv", func(w io.Writer) error { return speedup.WriteCSV(w, points) }},
		{"speedup.svg", chart.WriteSVG},
		{"speedup.png", chart.WritePNG},
	}
	for _, file := range files {
		if err := writeFile(filepath.Join(out, file.name), file.write); err != nil {
			errorf(stderr, "speedup: %v", err)
			return exitUsage
		}
	}
	progress("wrote speedup.csv, speedup.svg and speedup.png in %s", out)
	return exitOK
}

// buildInstrumented builds pkg with spanprof's instrumentation into bin, as
// "spanprof build" does, or returns why not, in one line: the serial
// elision and the bounds are extras that the speedup curves do without.
// The rewriter's notes (its statistics, the spawns it cannot profile) go
// to stderr only when the rewrite has worked.
func buildInstrumented(pkg, bin string, stderr io.Writer) error {
	_, b, notes, err := instrumentMain(pkg, false)
	if err != nil {
		return errors.New(oneLine(err.Error()))
	}
	defer os.RemoveAll(b.Dir)
	notes.print(stderr)
	var buildOut bytes.Buffer
	if err := goCommand(nil, b, os.Environ(), &buildOut, append(append([]string{"build"}, b.Flags()...), "-o", bin, pkg)...); err != nil {
		return fmt.Errorf("the instrumented code does not build, a spanprof bug: %s", firstOutputLine(buildOut.String(), err))
	}
	return nil
}

// profileRun runs the instrumented binary bin once to write its span
// profile to file, and reads it; on failure it says why and returns nil.
func profileRun(bin string, args []string, file string, burden time.Duration, stderr io.Writer) *spanprofile.Profile {
	pf := &profFlags{mode: "serial", burden: burden} // the default measure
	cmd := exec.Command(bin, args...)
	cmd.Env = pf.env(file)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	if err := cmd.Run(); err != nil {
		stderr.Write(errOut.Bytes())
		errorf(stderr, "speedup: the profiled run failed: %v; no bounds", err)
		return nil
	}
	p, err := spanprofile.ReadFile(file)
	if err != nil {
		errorf(stderr, "speedup: no bounds: %v", err)
		return nil
	}
	return p
}

// writeFile creates name and writes it with write.
func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Close()
}
