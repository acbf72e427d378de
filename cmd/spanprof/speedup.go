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

func runSpeedup(c *command, args []string, stdout, stderr io.Writer) int {
	f, pkg, progArgs, err := speedupArgs(c, args)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	fail := func(code int, err error) int {
		return finish(stdout, stderr, failure(code, "speedup: %v", err))
	}
	if len(f.baseline) > 0 {
		if _, err := exec.LookPath(f.baseline[0]); err != nil {
			return fail(exitUsage, fmt.Errorf("-baseline: %w", err))
		}
	}
	name, err := speedup.MainPackage(pkg)
	if err != nil {
		return fail(exitUsage, err)
	}
	out, err := filepath.Abs(f.out)
	if err == nil {
		err = os.MkdirAll(out, 0o755)
	}
	if err != nil {
		return fail(exitUsage, err)
	}
	tmp, err := os.MkdirTemp("", "spanprof-speedup-")
	if err != nil {
		return fail(exitUsage, err)
	}
	defer os.RemoveAll(tmp)
	progress := func(msg string) { fmt.Fprintf(stderr, "speedup: %s\n", msg) }
	profFile := filepath.Join(out, "profile.pb.gz")
	pf := &profFlags{mode: "serial", burden: f.burden} // the default measure
	e := &speedup.Experiment{
		Pkg: pkg, Name: name, Args: progArgs,
		Procs: f.procs, Runs: f.runs,
		BaselineArgs: f.baselineArgs, Baseline: f.baseline,
		Dir:         tmp,
		Instrument:  func(bin string) error { return buildInstrumented(pkg, bin, stderr) },
		ProfileFile: profFile, ProfileEnv: pf.env(profFile),
		Progress: progress,
		Warn: func(err error) {
			showProgramError(stderr, err)
			errorf(stderr, "speedup: %v", err)
		},
	}
	res, err := e.Run()
	if err != nil {
		showProgramError(stderr, err)
		return fail(speedupStatus(err), err)
	}

	title := strings.Join(append([]string{name}, progArgs...), " ")
	subtitle, err := printSpeedup(stdout, title, f, res, profFile)
	if err != nil {
		return fail(exitUsage, err)
	}
	chart := speedup.Chart{Title: "Factored speedup of " + title, Subtitle: subtitle, Points: res.Points, Busy: res.Busy}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"speedup.csv", func(w io.Writer) error { return speedup.WriteCSV(w, res.Points) }},
		{"speedup.svg", chart.WriteSVG},
		{"speedup.png", chart.WritePNG},
	}
	for _, file := range files {
		if err := writeFile(filepath.Join(out, file.name), file.write); err != nil {
			return fail(exitUsage, err)
		}
	}
	progress("wrote speedup.csv, speedup.svg and speedup.png in " + out)
	return exitOK
}

// speedupStatus returns the exit status of an experiment that failed with
// err: a usage or build error when the program does not build, else a
// failed program (docs/cli.md).
func speedupStatus(err error) int {
	var build *speedup.BuildError
	if errors.As(err, &build) {
		return exitUsage
	}
	return exitFailed
}

// showProgramError writes the standard error of the program that err says
// failed, if it says one did: it tells why.
func showProgramError(w io.Writer, err error) {
	var run *speedup.RunError
	if errors.As(err, &run) {
		w.Write(run.Stderr)
	}
}

// printSpeedup prints the summary of the experiment's result above the
// table to w, and returns the chart's subtitle, which sums up the same.
func printSpeedup(w io.Writer, title string, f speedupFlags, res *speedup.Result, profFile string) (subtitle string, err error) {
	in, prof := res.Input, res.Input.Profile
	var serialDoc string
	switch {
	case len(f.baselineArgs) > 0:
		serialDoc = "the program with " + strings.Join(f.baselineArgs, " ")
	case len(f.baseline) > 0:
		serialDoc = strings.Join(f.baseline, " ")
	default:
		serialDoc = "no baseline given (-baseline-args or -baseline): T_s = T_1"
	}
	runs := "the median of " + strconv.Itoa(f.runs) + " runs"
	if f.runs == 1 {
		runs = "1 run"
	}
	fmt.Fprintf(w, "factored speedup of %s, %s\n", title, runs)
	fmt.Fprintf(w, "T_s        %.3f s  %s\n", in.Serial, serialDoc)
	fmt.Fprintf(w, "T_1        %.3f s  GOMAXPROCS=1\n", in.One)
	subtitle = fmt.Sprintf("T_s %.3f s (%s), T_1 %.3f s", in.Serial, strings.TrimSuffix(serialDoc, ": T_s = T_1"), in.One)
	if in.Elision > 0 {
		fmt.Fprintf(w, "T_elision  %.3f s  serial elision, GOMAXPROCS=1\n", in.Elision)
		subtitle += fmt.Sprintf(", T_elision %.3f s", in.Elision)
	} else {
		fmt.Fprintf(w, "T_elision  -        not measured\n")
	}
	if prof != nil {
		fmt.Fprintf(w, "profile    parallelism %.2f, burdened parallelism %.2f (%s)\n", prof.Parallelism(), prof.BurdenedParallelism(), profFile)
		subtitle += fmt.Sprintf("; parallelism %.1f, burdened %.1f", prof.Parallelism(), prof.BurdenedParallelism())
	} else {
		fmt.Fprintf(w, "profile    -        none: no bounds\n")
	}
	if res.Busy != "" {
		fmt.Fprintln(w, res.Busy)
	}
	fmt.Fprintln(w)
	return subtitle, speedup.WriteTable(w, res.Points)
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
		return fmt.Errorf("the instrumented code does not build, a spanprof bug: %s", strings.TrimPrefix(goError(buildOut.String(), err), "./"))
	}
	return nil
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
