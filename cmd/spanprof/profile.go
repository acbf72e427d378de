package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/rewrite"
	"github.com/spanprof/spanprof/shadow"
	"github.com/spanprof/spanprof/spanprofile"
)

// profileFlags documents the flags of run, test and build, in run's help;
// test's and build's refer to it. The measures come from perf, so that a
// new measure needs no change here. The text is the same on every system:
// the package documentation is generated from it.
var profileFlags = `
The flags of run, test and build are:

	-o file
		write the span profile to file (default spanprof.pb.gz); for build,
		the binary (required).
	-mode serial|parallel|elision|trace
		serial (the default) runs every serially elidable spawn inline, as
		Cilkview does, so results are deterministic; a spawn the analyzer
		finds not elidable still runs as a goroutine, profiled as parallel
		mode profiles goroutines. parallel runs every spawn as a goroutine,
		in parallel, and is the mode for programs whose goroutines talk to
		each other; it measures with the clock unless -measure names
		another. With cpu or a counter, each goroutine keeps its OS thread
		and measures it, which costs tens to hundreds of microseconds per
		goroutine. elision profiles nothing and runs every spawn as a plain
		call: the serial elision, for timing the instrumentation's cost.
		trace rewrites nothing: run builds the program as written with a
		file added (in an overlay) that turns Go's execution tracer and
		CPU profiler on before the main package's initialization and off
		when the program exits (main returns or os.Exit is called), test
		runs go test -trace a package at a time; the profile is then
		computed from the trace, as "spanprof trace" does (see "spanprof
		help trace"). -measure, -count and -burden do not apply to it, and
		build does not take it.
	-measure ` + strings.Join(perf.Names(), "|") + `
		what a strand's length is measured in (default ` + perf.CPU + `, or ` + perf.Clock + ` where
		the system cannot read a thread's CPU time, as on Windows; clock in
		parallel mode): cpu is the profiled thread's running time, which
		leaves out the time other processes take from it; clock is wall
		time; instructions and cycles count the thread's user-mode
		instructions and cycles, and task-clock is its CPU time, as Linux
		perf events (instructions and cycles where the hardware counts them).
	-count n|auto
		run and test: run the program n times in serial mode and keep each
		strand's shortest time over the runs (a deterministic program makes
		the same strands every run). auto, the default, runs again only
		while the profile says the machine disturbed the run, at most 5
		times. Runs after the first get no input and their output is
		discarded.
	-burden duration
		the scheduling cost charged to each spawn in the burdened span
		(default: calibrated on the machine that runs the program).
	-whatif targets|off
		what-if profile: for each target, comma-separated, and for all of
		them together, the work, span and parallelism the run would have
		had if the target's strands took a half, a quarter, an eighth and
		none of their time. A target is a site (file:line or
		file:line:column, the file relative to the module root or any tail
		of that path), a function (main.prepare: its instrumented calls and
		spawns) or a region (region.Begin's name). Without -whatif, run
		estimates the top five sites of the span profile: a second run of
		the program, after the first found them; off skips it. The default
		is $SPANPROF_WHATIF, targets or off. build does not take it: run
		the binary with SPANPROF_WHATIF=targets. See docs/what-if.md.
	-a
		rewrite the packages anew rather than take the rewrite from the
		cache (see below), and cache the new one.

The rewrite of a module is cached by content, in spanprof/rewrite in the
user's cache directory (or $SPANPROF_CACHE): a run of the same spanprof on
the same files, go.mod, go.sum and go.work, go settings, packages and flags
builds without loading or rewriting anything. SPANPROF_CACHE=off turns the
cache off; removing the directory clears it. Entries unused for 5 days go,
and the oldest go past 1 GiB.

An instrumented binary reads SPANPROF_OUT, SPANPROF_MODE, SPANPROF_MEASURE,
SPANPROF_BURDEN and SPANPROF_WHATIF from its environment; spanprof run and
test set them.

Before anything is loaded, rewritten, built or run, run, test and build
check that the measure opens on this machine (run and test: -measure, else
$SPANPROF_MEASURE, else the default; build: -measure, if given) and that a
file can be created where -o says, without touching a file already there: a
measure that does not open or an -o that cannot be written is a one-line
error and exit status 2.
`

// instrumentation documents what the instrumented build does, in run's
// help; test's and build's refer to it.
const instrumentation = `
The packages of the main module that PKG imports are instrumented with it,
in a temporary copy given to the go command with -overlay, and the spanprof
runtime comes in through a temporary go.work that uses the module and the
runtime: the module's files, go.mod and go.sum stay as they are, and its
code is compiled with the go line of its go.mod.

Instrumented are the spawns (go statements, WaitGroup.Go, errgroup's Go and
TryGo, parlib), the join contributions and waits, and the calls of the
packages' own functions, except those the compiler inlines and deferred
calls. A spawn that cannot run inline (the analyzer finds it not serially
elidable: it may wait for something its continuation does) runs as a real
goroutine in serial mode too, and is profiled as parallel mode profiles
goroutines; spanprof names each such spawn, and why. Code that runs only on
goroutines the runtime does not know (functions given to time.AfterFunc,
runtime.SetFinalizer or testing.B's RunParallel, and what they call) is
left as written, and its spawns are not profiled; spanprof names them too.

The profile is written when main returns, when it panics, when code of the
instrumented packages calls os.Exit, when the program deadlocks (it stops
as Go would stop it, status 2), and on SIGINT or SIGTERM unless the program
imports os/signal (it dies of the signal; spanprof exits with 130 or 143);
then the profile holds what ran and says how the run ended. It is not
written when the program ends any other way (log.Fatal, a panic on another
goroutine, os.Exit in another package).
`

// asForRun is the part of test's and build's help that refers to run's.
const asForRun = `
What is instrumented, when the profile is written, the flags and the
environment are as for run: see "spanprof help run".
`

var cmdRun = &command{
	name:  "run",
	usage: "spanprof run [flags] [PKG] [-- ARGS...]",
	short: "build a main package instrumented, run it, write the profile, print the summary",
	long: `Run builds the main package PKG (default .) with spanprof's instrumentation,
runs it with ARGS, writes the span profile and prints the summary of
"spanprof report" (the top 10 sites) to standard error.
` + instrumentation + `
Exit status: 0 on success, 1 if the profiled program failed (its status is
shown), 2 on a usage or build error or when the instrumented program
refuses to start (its one line says why).
` + profileFlags,
	run: runRun,
}

var cmdTest = &command{
	name:  "test",
	usage: "spanprof test [flags] [PKGS...] [-- GOTESTFLAGS...]",
	short: "the same as run, for the tests of packages",
	long: `Test builds the tests of PKGS (default .) with spanprof's instrumentation, runs
them with "go test" and GOTESTFLAGS, writes the span profile and prints the
summary. With several packages, each writes its own profile, named after -o
and the package: spanprof.PKG.pb.gz.

The tests get a generated TestMain that starts the profiled run, runs the
tests and writes the profile. A package's own TestMain is renamed and called
from it: the profile is written when it returns or when it calls os.Exit.
Serial mode profiles one goroutine at a time, so parallel tests run one at a
time (unless GOTESTFLAGS set -parallel).
` + asForRun + `
After "spanprof rewrite -w", "go test ./pkg -spanprofile=FILE" writes FILE
without spanprof test.

Exit status: 0 on success, 1 if the tests failed, 2 on a usage or build error.
`,
	run: runTest,
}

var cmdBuild = &command{
	name:  "build",
	usage: "spanprof build [flags] -o BIN [PKG]",
	short: "build the instrumented binary without running it",
	long: `Build builds the main package PKG (default .) with spanprof's instrumentation
into BIN. Running BIN writes a span profile to $SPANPROF_OUT (default
spanprof.pb.gz); -mode, -measure and -burden become the binary's defaults,
which the environment overrides. -count applies to run and test only.
` + asForRun + `
Exit status: 0 on success, 2 on a usage or build error.
`,
	run: runBuild,
}

// profFlags are the flags of run, test and build.
type profFlags struct {
	out, mode, measure string
	burden             time.Duration
	count              countFlag
	fresh              bool   // -a
	whatif             string // -whatif: targets, off, or "" for run's top five
}

func addProfFlags(fs *flag.FlagSet, outUsage string) *profFlags {
	f := &profFlags{}
	fs.StringVar(&f.out, "o", "", outUsage)
	fs.StringVar(&f.mode, "mode", "", "profile in `mode` serial, parallel, elision or trace (default serial)")
	fs.StringVar(&f.measure, "measure", "", "measure strands in `unit` "+orList(perf.Names())+" (default "+perf.Default()+"; clock in parallel mode)")
	fs.DurationVar(&f.burden, "burden", 0, "charge `duration` to each spawn in the burdened span (default: calibrated)")
	fs.Var(&f.count, "count", "run the program `n` times and keep each strand's shortest time; auto runs again while the machine disturbs the runs (default auto)")
	fs.BoolVar(&f.fresh, "a", false, "rewrite the packages anew instead of taking the rewrite from the cache")
	fs.StringVar(&f.whatif, "whatif", "", "estimate the run with `targets` (file:line, function or region names, comma-separated) faster; off: none (default: run's top five sites)")
	return f
}

// check validates the flags' values.
// whatIfDefault gives run and test -whatif's default: the environment's
// targets, or off, so that a script or a test suite that runs spanprof run
// often can turn the second run off once. (build leaves it to the binary,
// which reads the same variable.)
func (f *profFlags) whatIfDefault() {
	if f.whatif == "" {
		f.whatif = os.Getenv(shadow.EnvWhatIf)
	}
}

func (f *profFlags) check() error {
	if f.mode != "" && f.mode != "serial" && f.mode != "parallel" && f.mode != "elision" && f.mode != "trace" {
		return fmt.Errorf("unknown -mode %q (valid: serial, parallel, elision, trace)", f.mode)
	}
	if f.measure != "" && !slices.Contains(perf.Names(), f.measure) {
		return fmt.Errorf("unknown -measure %q (valid: %s)", f.measure, strings.Join(perf.Names(), ", "))
	}
	if f.burden < 0 {
		return fmt.Errorf("-burden %v: want a duration of 0 or more", f.burden)
	}
	if f.whatif != "" && f.whatif != "off" {
		if _, err := shadow.ParseTargets(f.whatif); err != nil {
			return fmt.Errorf("-whatif: %v", err)
		}
	}
	if f.mode == "trace" {
		return f.checkTrace("")
	}
	if f.count.n > 1 && f.mode == "parallel" {
		return fmt.Errorf("-count %d needs serial mode: goroutines running in parallel end their strands in a different order every run", f.count.n)
	}
	return nil
}

// env returns the environment of an instrumented program.
func (f *profFlags) env(out string) []string {
	env := os.Environ()
	if out != "" {
		env = append(env, "SPANPROF_OUT="+out)
	}
	if f.mode != "" {
		env = append(env, "SPANPROF_MODE="+f.mode)
	} else if os.Getenv("SPANPROF_MODE") == "" {
		// The mode asks for the profile: a rewritten test binary profiles
		// nothing unless asked (its profile file is built in).
		env = append(env, "SPANPROF_MODE=serial")
	}
	if f.measure != "" {
		env = append(env, "SPANPROF_MEASURE="+f.measure)
	}
	if f.burden > 0 {
		env = append(env, "SPANPROF_BURDEN="+f.burden.String())
	}
	if f.whatif != "" && f.whatif != "off" {
		env = append(env, shadow.EnvWhatIf+"="+f.whatif)
	}
	return env
}

// splitArgs splits arguments at the first "--".
func splitArgs(args []string) (before, after []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}

// testHookRewrite, when set by a test, sees the rewritten files before the
// build: a test breaks them to check how a build failure is reported.
var testHookRewrite func(*rewrite.Result)

// instrumentedCalls counts the calls of instrumented, so that tests can
// check that a refused command loaded nothing.
var instrumentedCalls atomic.Int64

// testHookCache, when set by a test, sees the rewrite cache before it is
// used: a test gives it another ToolID, as another spanprof would have.
var testHookCache func(*rewrite.Cache)

// rewriteNotes are what a rewrite has to say before the build: its warnings
// (spawns that run as goroutines or are not profiled), its statistics, and
// that it found no spawn at all.
type rewriteNotes struct {
	warnings []string
	stats    string
	cached   bool
	noSpawn  string // the module, when it has no spawn
}

// print prints the notes to w, one line each.
func (n *rewriteNotes) print(w io.Writer) {
	if n == nil {
		return
	}
	for _, warning := range n.warnings {
		errorf(w, "%s", warning)
	}
	from := ""
	if n.cached {
		from = " (rewrite cached)"
	}
	fmt.Fprintf(w, "spanprof: %s%s\n", n.stats, from)
	if n.noSpawn != "" {
		// A program whose goroutines all start in a library (a worker
		// pool, say) gets a profile with no parallelism in it: say why
		// before the user reads it.
		fmt.Fprintf(w, "spanprof: no spawn in the packages of module %s: spawns in other modules (libraries) run as written and unseen, so the profile shows no parallelism\n", n.noSpawn)
	}
}

// instrumented loads, rewrites and prepares the build of patterns, or takes
// the rewrite from the cache (rewrite.Cache) unless fresh; extra is what
// else the rewrite depends on (the profile names of test's TestMains). The
// notes come once the rewrite is made, with an error of the build's
// preparation too: they are said before it.
func instrumented(cfg rewrite.Config, patterns []string, fresh bool, extra []string, prepare func(*rewrite.Program)) (*rewrite.Program, *rewrite.Build, *rewriteNotes, error) {
	instrumentedCalls.Add(1)
	prog, res, cached, err := rewriteProgram(cfg, patterns, fresh, extra, prepare)
	if err != nil {
		return nil, nil, nil, err
	}
	if testHookRewrite != nil {
		testHookRewrite(res)
	}
	notes := &rewriteNotes{warnings: res.Warnings, stats: res.Stats.String(), cached: cached}
	if st := res.Stats; st.Spawns+st.SpawnsGoroutine+st.SpawnsNotProfiled == 0 {
		notes.noSpawn = prog.Module.Path
	}
	b, err := rewrite.NewBuild(prog, res)
	if err != nil {
		if b != nil {
			os.RemoveAll(b.Dir)
		}
		return nil, nil, notes, err
	}
	return prog, b, notes, nil
}

// rewriteProgram returns the rewrite of patterns: from the cache when it
// holds one for these inputs and fresh is false, else loaded, rewritten
// and stored in the cache. prepare sees the program before it is rewritten.
func rewriteProgram(cfg rewrite.Config, patterns []string, fresh bool, extra []string, prepare func(*rewrite.Program)) (*rewrite.Program, *rewrite.Result, bool, error) {
	cache := rewrite.OpenCache()
	if cache != nil && testHookCache != nil {
		testHookCache(cache)
	}
	var key *rewrite.CacheKey
	if cache != nil {
		// A key that cannot be computed (go list fails) leaves it to the
		// load to say what is wrong.
		if k, err := cache.Key(cfg, patterns, extra...); err == nil {
			key = k
			if prog, res, ok := cache.Get(k); ok && !fresh {
				if prepare != nil {
					prepare(prog)
				}
				return prog, res, true, nil
			}
		}
	}
	prog, err := rewrite.Load(cfg, patterns)
	if err != nil {
		return nil, nil, false, err
	}
	if prepare != nil {
		prepare(prog)
	}
	if err := prog.Inline(); err != nil {
		return nil, nil, false, err
	}
	res, err := prog.Rewrite()
	if err != nil {
		return nil, nil, false, err
	}
	if key != nil {
		// Not stored, the next run rewrites again: nothing worse.
		cache.Put(key, prog, res)
	}
	return prog, res, false, nil
}

// goCommand runs the go command with the build's flags in the working
// directory, its output going to out, passing on the signals that in
// catches (in may be nil).
func goCommand(in *interrupts, b *rewrite.Build, env []string, out io.Writer, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Env = b.Env(env)
	cmd.Stdout, cmd.Stderr = out, out
	return in.run(cmd, true)
}

// runtimeFlags returns the -ldflags settings of the runtime for a build of
// prog: catch SIGINT and SIGTERM to write the profile of what ran, unless
// the program may handle signals itself (shadow/signal.go).
func runtimeFlags(prog *rewrite.Program) []string {
	if prog.Signals {
		return nil
	}
	return []string{"-X=github.com/spanprof/spanprof/shadow.catchSignals=1"}
}

// ldflags returns the -ldflags flag for settings, or nothing.
func ldflags(settings []string) []string {
	if len(settings) == 0 {
		return nil
	}
	return []string{"-ldflags=" + strings.Join(settings, " ")}
}

// interrupted returns the error that ends a command a signal interrupted,
// whose status is 128 plus the signal's number, or nil.
func interrupted(in *interrupts) error {
	if code, ok := in.status(); ok {
		return &exitError{code: code, msg: "interrupted"}
	}
	return nil
}

// buildError is the error of rewritten code that does not build: a bug of
// spanprof, since the original built. The rewritten files are kept.
func buildError(b *rewrite.Build, output string) error {
	first := ""
	for l := range strings.Lines(output) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			first = strings.TrimPrefix(l, "./")
			break
		}
	}
	return failure(exitUsage, "%s: the instrumented code does not build, a spanprof bug; the rewritten files are kept in %s", first, b.Dir)
}

func runRun(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	pf := addProfFlags(fs, "write the span profile to `file` (default spanprof.pb.gz)")
	// Split at "--" before the flags are parsed: flag.Parse would take a
	// "--" that comes first ("spanprof run -- -n 5") as its own end of
	// flags, and the program's arguments would pass for packages.
	args, progArgs := splitArgs(args)
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	pf.whatIfDefault()
	if err := pf.check(); err != nil {
		return finish(stdout, stderr, err)
	}
	pkg, err := onePackage(c, fs.Args())
	if err != nil {
		return finish(stdout, stderr, err)
	}
	out, err := filepath.Abs(cmp.Or(pf.out, "spanprof.pb.gz"))
	if err != nil {
		return finish(stdout, stderr, err)
	}
	if err := preflight(pf, out); err != nil {
		return finish(stdout, stderr, err)
	}
	if pf.mode == "trace" {
		return runTraced(pkg, progArgs, out, stdout, stderr)
	}
	in := catchInterrupts()
	defer in.stop()
	prog, b, notes, err := instrumentMain(pkg, pf.fresh)
	notes.print(stderr)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	keep := false // a build that fails keeps its files
	defer func() {
		if !keep {
			os.RemoveAll(b.Dir)
		}
	}()
	if err := interrupted(in); err != nil {
		return finish(stdout, stderr, err)
	}
	bin := filepath.Join(b.Dir, "bin", filepath.Base(prog.Roots[0].PkgPath))
	var buildOut bytes.Buffer
	goArgs := append(append(append([]string{"build"}, b.Flags()...), ldflags(runtimeFlags(prog))...), "-o", bin, pkg)
	if err := goCommand(in, b, os.Environ(), &buildOut, goArgs...); err != nil {
		if err := interrupted(in); err != nil {
			return finish(stdout, stderr, err)
		}
		keep = true
		return finish(stdout, stderr, buildError(b, buildOut.String()))
	}

	runs, err := newRuns(pf)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	defer runs.close()
	// A profile left by an earlier run must not pass for this one's.
	os.Remove(out)
	var runErr error
	// The first run's stderr goes through progErr, whose last line says why
	// a program that refused to start did.
	progErr := &tailWriter{w: stderr}
	k := 1
	for ; ; k++ {
		cmd := exec.Command(bin, progArgs...)
		cmd.Env = append(pf.env(out), runs.env(k)...)
		var later bytes.Buffer
		if k == 1 {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, progErr
		} else {
			// The program's output was shown once; a later run only
			// measures, and speaks only if it fails.
			cmd.Stdout, cmd.Stderr = io.Discard, &later
		}
		runErr = in.run(cmd, false)
		if runErr != nil {
			stderr.Write(later.Bytes())
			break
		}
		more, notes := runs.again(readProfiles(out))
		printNotes(stderr, notes)
		if !more {
			break
		}
	}
	if runErr == nil && pf.whatif == "" && pf.mode != "elision" {
		runErr = autoWhatIf(in, bin, progArgs, pf, runs, k+1, out, stderr)
	}
	code := exitOK
	if runErr != nil {
		var exit *exec.ExitError
		if !errors.As(runErr, &exit) {
			if err := interrupted(in); err != nil {
				return finish(stdout, stderr, err)
			}
			return finish(stdout, stderr, failure(exitFailed, "running %s: %v", prog.Roots[0].PkgPath, runErr))
		}
		if _, err := os.Stat(out); err != nil && startRefused(exit.ExitCode(), progErr.lastLine()) {
			// The runtime's one line says why (a measure that opened
			// here a moment ago but not in the program, say).
			return exitUsage
		}
		code = exitFailed
	}
	if pf.mode == "elision" {
		// The serial elision measures nothing: there is no profile to show.
		if code == exitOK {
			fmt.Fprintln(stderr, "spanprof: -mode elision ran every spawn as a plain call and wrote no profile")
		}
	} else if err := printProfile(stderr, out, ""); err != nil {
		errorf(stderr, "%v", err)
		code = exitFailed
	}
	if runErr != nil {
		errorf(stderr, "%s: %v", prog.Roots[0].PkgPath, runErr)
	}
	if err := interrupted(in); err != nil {
		return finish(stdout, stderr, err)
	}
	return code
}

// onePackage returns the one package that run and build take (default .),
// or a usage error.
func onePackage(c *command, pkgs []string) (string, error) {
	switch len(pkgs) {
	case 0:
		return ".", nil
	case 1:
		return pkgs[0], nil
	}
	return "", usageError(c, "%s takes one package, got %d: %s", c.name, len(pkgs), strings.Join(pkgs, " "))
}

// instrumentMain rewrites the main package pkg and the packages of its
// module it imports into an overlay. The rewrite's notes come with an error
// that follows the rewrite: they are said before it.
func instrumentMain(pkg string, fresh bool) (*rewrite.Program, *rewrite.Build, *rewriteNotes, error) {
	prog, b, notes, err := instrumented(rewrite.Config{Mode: rewrite.Overlay, Deps: true}, []string{pkg}, fresh, nil, nil)
	if err != nil {
		return nil, nil, notes, err
	}
	if prog.Roots[0].Name != "main" {
		os.RemoveAll(b.Dir)
		return nil, nil, notes, fmt.Errorf("package %s is not a main package", prog.Roots[0].PkgPath)
	}
	return prog, b, notes, nil
}

// printProfile prints the summary of the profile in file to w. A missing
// or unreadable profile is an error, which it leaves to the caller to say.
func printProfile(w io.Writer, file, pkg string) error {
	p, err := spanprofile.ReadFile(file)
	if err != nil {
		return fmt.Errorf("no profile: %w", err)
	}
	if pkg != "" {
		fmt.Fprintf(w, "spanprof: profile of %s in %s\n", pkg, file)
	} else {
		fmt.Fprintf(w, "spanprof: profile in %s\n", file)
	}
	return report.Text(w, p, report.Options{Top: 10})
}

func runTest(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	pf := addProfFlags(fs, "write the span profile to `file` (default spanprof.pb.gz)")
	// Split at "--" before the flags are parsed: flag.Parse would take a
	// "--" that comes first ("spanprof run -- -n 5") as its own end of
	// flags, and the program's arguments would pass for packages.
	args, testArgs := splitArgs(args)
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	pf.whatIfDefault()
	if err := pf.check(); err != nil {
		return finish(stdout, stderr, err)
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	out, err := filepath.Abs(cmp.Or(pf.out, "spanprof.pb.gz"))
	if err != nil {
		return finish(stdout, stderr, err)
	}
	// With several packages the profiles go next to out, under other
	// names: the same directory.
	if err := preflight(pf, out); err != nil {
		return finish(stdout, stderr, err)
	}
	if pf.mode == "trace" {
		return testTraced(pkgs, testArgs, out, stdout, stderr)
	}
	in := catchInterrupts()
	defer in.stop()
	outs := make(map[string]string) // package path → its profile
	// The profile names are written into the generated TestMains.
	prog, b, notes, err := instrumented(rewrite.Config{Mode: rewrite.Overlay, Deps: true, Tests: true}, pkgs, pf.fresh, []string{out}, func(prog *rewrite.Program) {
		for _, r := range prog.Roots {
			outs[r.PkgPath] = out
			if len(prog.Roots) > 1 {
				rel := strings.TrimPrefix(strings.TrimPrefix(r.PkgPath, prog.Module.Path), "/")
				if rel == "" {
					rel = filepath.Base(prog.Module.Path)
				}
				base := strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".pb")
				outs[r.PkgPath] = base + "." + strings.ReplaceAll(rel, "/", "_") + ".pb.gz"
			}
		}
		prog.SetTestOut(func(path string) string { return outs[path] })
	})
	notes.print(stderr)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	for _, o := range outs {
		os.Remove(o)
	}
	if err := interrupted(in); err != nil {
		os.RemoveAll(b.Dir)
		return finish(stdout, stderr, err)
	}
	runs, err := newRuns(pf)
	if err != nil {
		os.RemoveAll(b.Dir)
		return finish(stdout, stderr, err)
	}
	defer runs.close()
	var tee bytes.Buffer
	goArgs := append(append(append(append([]string{"test"}, b.Flags()...), ldflags(runtimeFlags(prog))...), "-count=1"), pkgs...)
	goArgs = append(goArgs, testArgs...)
	var testErr error
	for k := 1; ; k++ {
		tee.Reset()
		var w io.Writer = &tee
		if k == 1 {
			w = io.MultiWriter(stdout, &tee)
		}
		testErr = goCommand(in, b, append(pf.env(""), runs.env(k)...), w, goArgs...)
		if testErr != nil {
			if k > 1 {
				stdout.Write(tee.Bytes()) // a later run failed: show why
			}
			break
		}
		more, notes := runs.again(readProfiles(slices.Collect(maps.Values(outs))...))
		printNotes(stderr, notes)
		if !more {
			break
		}
	}
	_, signalled := in.status()
	if testErr != nil && !signalled && (strings.Contains(tee.String(), "[build failed]") || strings.Contains(tee.String(), "[setup failed]")) {
		return finish(stdout, stderr, buildError(b, tee.String()))
	}
	os.RemoveAll(b.Dir)
	for _, r := range prog.Roots {
		if _, err := os.Stat(outs[r.PkgPath]); err == nil {
			if err := printProfile(stderr, outs[r.PkgPath], r.PkgPath); err != nil {
				errorf(stderr, "%v", err)
			}
		}
	}
	if err := interrupted(in); err != nil {
		return finish(stdout, stderr, err)
	}
	if testErr != nil {
		return finish(stdout, stderr, failure(exitFailed, "go test: %v", testErr))
	}
	return exitOK
}

func runBuild(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	pf := addProfFlags(fs, "write the instrumented binary to `file` (required)")
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	if err := pf.check(); err != nil {
		return finish(stdout, stderr, err)
	}
	if pf.mode == "trace" {
		return finish(stdout, stderr, pf.checkTrace("build"))
	}
	if pf.whatif != "" {
		// A region's name may hold spaces, which -ldflags cannot carry
		// unquoted; the environment carries anything.
		return finish(stdout, stderr, usageError(c, "-whatif does not apply to build: run the binary with %s=TARGETS", shadow.EnvWhatIf))
	}
	if pf.out == "" {
		return finish(stdout, stderr, usageError(c, "build needs -o BIN"))
	}
	pkg, err := onePackage(c, fs.Args())
	if err != nil {
		return finish(stdout, stderr, err)
	}
	bin, err := filepath.Abs(pf.out)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	// The binary opens its measure where it runs, perhaps another machine;
	// a measure named here must open here all the same, or the build would
	// be of no use on this machine.
	if pf.measure != "" {
		if err := checkMeasure(pf.measure, "-measure "+pf.measure); err != nil {
			return finish(stdout, stderr, err)
		}
	}
	if err := checkBinaryOut(bin); err != nil {
		return finish(stdout, stderr, err)
	}
	in := catchInterrupts()
	defer in.stop()
	prog, b, notes, err := instrumentMain(pkg, pf.fresh)
	notes.print(stderr)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	// The flags become the binary's defaults.
	ld := runtimeFlags(prog)
	for name, v := range map[string]string{"defaultMode": pf.mode, "defaultMeasure": pf.measure} {
		if v != "" {
			ld = append(ld, "-X=github.com/spanprof/spanprof/shadow."+name+"="+v)
		}
	}
	if pf.burden > 0 {
		ld = append(ld, "-X=github.com/spanprof/spanprof/shadow.defaultBurden="+pf.burden.String())
	}
	// The binary profiles when run, without SPANPROF_OUT.
	ld = append(ld, "-X=github.com/spanprof/spanprof/shadow.profileByDefault=1")
	slices.Sort(ld)
	goArgs := append(append([]string{"build"}, b.Flags()...), "-o", bin)
	goArgs = append(goArgs, "-ldflags="+strings.Join(ld, " "))
	var buildOut bytes.Buffer
	if err := goCommand(in, b, os.Environ(), &buildOut, append(goArgs, pkg)...); err != nil {
		if err := interrupted(in); err != nil {
			os.RemoveAll(b.Dir)
			return finish(stdout, stderr, err)
		}
		return finish(stdout, stderr, buildError(b, buildOut.String()))
	}
	os.RemoveAll(b.Dir)
	return finish(stdout, stderr, interrupted(in))
}
