package shadow

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// The run's lifecycle in the process. Generated code starts the run before
// the program's first event (Init, StartIfNeeded), tells a test binary's
// run where its profile goes (TestOutput), and ends it when main returns
// or panics, or the program exits (Finish, BeforeExit). The profile of a
// run that something else ends is written by the watchdog (watchdog.go)
// or on a signal (signal.go).

// The environment of an instrumented program (docs/cli.md); `spanprof run`
// sets these.
const (
	envOut     = "SPANPROF_OUT"     // profile file; default spanprof.pb.gz
	envMode    = "SPANPROF_MODE"    // serial (default), parallel, or elision (no profile; see start)
	envMeasure = "SPANPROF_MEASURE" // cpu (default), clock, instructions, cycles, task-clock
	envBurden  = "SPANPROF_BURDEN"  // a duration such as 2us; default: calibrated at start-up
	envWhatIf  = EnvWhatIf
)

// EnvWhatIf names the environment variable of the what-if targets,
// comma-separated (whatif.go); none by default, or when it says off.
const EnvWhatIf = "SPANPROF_WHATIF"

// defaultOut is the profile file written when SPANPROF_OUT is not set.
const defaultOut = "spanprof.pb.gz"

// options configure a run started with start.
type options struct {
	Out     string // profile file
	Mode    runMode
	Measure string        // a perf measure name
	Burden  time.Duration // 0: calibrate the cost of a goroutine hand-off
	WhatIf  []string      // what-if targets
}

// Defaults for the run's options where the environment sets none; `spanprof
// build` sets them with -ldflags=-X so that a built binary profiles with the
// flags it was built with.
var (
	defaultMode    string
	defaultMeasure string
	defaultBurden  string
)

// optionsFromEnv reads the options from the environment and, for those it
// does not set, from the defaults that `spanprof build` links in.
func optionsFromEnv() (options, error) {
	o := options{Out: cmp.Or(os.Getenv(envOut), defaultOut), Measure: cmp.Or(os.Getenv(envMeasure), defaultMeasure)}
	if s := os.Getenv(envBurden); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return o, fmt.Errorf("spanprof: %s=%q is not a duration such as 2us", envBurden, s)
		}
		o.Burden = d
	} else if defaultBurden != "" {
		d, err := time.ParseDuration(defaultBurden)
		if err != nil {
			return o, err
		}
		o.Burden = d
	}
	if s := os.Getenv(envWhatIf); s != "" && s != "off" {
		t, err := ParseTargets(s)
		if err != nil {
			return o, fmt.Errorf("spanprof: %s: %v", envWhatIf, err)
		}
		o.WhatIf = t
	}
	var err error
	o.Mode, err = parseMode(cmp.Or(os.Getenv(envMode), defaultMode))
	return o, err
}

var (
	current  *engine // the run the package-level functions report to
	startMu  sync.Mutex
	runOpts  options
	measure  perf.Measure
	started  time.Time
	atStart  machine // the machine's counters at start, for the trust figures
	pinned   = -1    // the CPU serial mode keeps the profiled thread on (pinThread), or -1
	stopOnce sync.Once
)

// Init registers an instrumented package's static site table and returns
// the ID of its first site, starting the run first if needed. Generated code
// calls it from the initializer of the package's site-table variable, which
// Go initializes before any package-level variable whose initialization
// runs instrumented code.
func Init(sites []SiteInfo) SiteID {
	StartIfNeeded()
	return register(sites)
}

// StartIfNeeded starts a run from the environment, unless one is running.
// Every instrumented package calls it (through Init) before its first event
// can happen, so a run covers package initialization too, whichever
// instrumented package the program initializes first. If the run cannot
// start, it exits with status 2 and a one-line message: an instrumented
// program that cannot profile must not run as if it did.
func StartIfNeeded() {
	startMu.Lock()
	running := current != nil || elision
	startMu.Unlock()
	if running || !requested() {
		return
	}
	o, err := optionsFromEnv()
	if err == nil {
		err = start(o)
	}
	if err != nil && current == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// start begins profiling with the given options. Generated code calls it
// (through Init and StartIfNeeded) before main runs; a second start is an
// error.
//
// Mode elision starts no profile: every spawn runs as a plain call and no
// event is measured, so an instrumented binary times its own serial elision
// (the benchmarks compare it with the profiled run).
func start(o options) error {
	startMu.Lock()
	defer startMu.Unlock()
	if current != nil || elision {
		return errors.New("spanprof: profiling already started")
	}
	if o.Mode == elisionMode {
		elision = true
		return nil
	}
	if o.Measure == "" {
		o.Measure = o.Mode.measure()
	}
	if o.Out == "" {
		o.Out = defaultOut
	}
	if !slices.Contains(perf.Names(), o.Measure) {
		return fmt.Errorf("spanprof: unknown measure %q (want one of %s)", o.Measure, strings.Join(perf.Names(), ", "))
	}
	m, err := openMeasure(o.Measure)
	if err != nil {
		return err
	}
	if o.Mode == serialMode && m.PerThread() {
		pinned = pinThread(runCPU())
		recordCPU(pinned)
	}
	cfg := config{Measure: m, MeasureName: m.Name(), Unit: m.Unit(), Mode: o.Mode, PerThread: m.PerThread(), WhatIf: o.WhatIf}
	if cfg.PerThread {
		// A goroutine spawned for real (every spawn in parallel mode, a
		// Goroutine site in serial mode) keeps its thread and counts with a
		// counter of its own: a per-thread counter cannot follow a
		// goroutine from thread to thread.
		cfg.Open = func() (reader, func(), error) {
			c, err := perf.Open(o.Measure)
			if err != nil {
				return nil, nil, err
			}
			return c, func() { closeMeasure(c) }, nil
		}
		if cfg.Unit == "nanoseconds" {
			if c, err := perf.Open(perf.Clock); err == nil {
				cfg.Shared = c
			}
		}
	}
	cfg.Overhead = calibrateOverhead(m, cfg.MeasureName, o.Mode, cfg.PerThread)
	cfg.Burden = burdenIn(m, o.Burden)
	runOpts, measure, started = o, m, time.Now()
	atStart = readMachine(0) // on the profiled thread, which openMeasure locked
	merge, err := openStrands()
	if err != nil {
		return err
	}
	startWatchdog() // before the engine's first reading, so its cost is no strand's
	e := newEngine(cfg, &registry)
	e.setMerge(merge)
	setStackCap()
	current = e
	watchedEngine.Store(e)
	return nil
}

// openMeasure opens a measure for serial mode. Per-thread counters count
// only the OS thread that opened them, and serial mode runs every strand on
// the main goroutine, so that goroutine stays on its thread for the run.
func openMeasure(name string) (perf.Measure, error) {
	runtime.LockOSThread()
	m, err := perf.Open(name)
	if err != nil || !m.PerThread() {
		runtime.UnlockOSThread()
	}
	return m, err
}

// A test binary's profile goes where its -spanprofile flag says (test), or
// else to testDefault, or else to $SPANPROF_OUT; with none of them the run
// writes nothing.
var (
	outMu       sync.Mutex
	testBinary  bool
	testFlag    *string
	testDefault string
)

// TestOutput makes Finish write the profile of a test binary to *flag, read
// when the profile is written (after the test flags are parsed), or to def
// when the flag is empty, or to $SPANPROF_OUT; with none, Finish writes
// nothing, so that a plain `go test` of rewritten code leaves no file.
func TestOutput(flag *string, def string) {
	outMu.Lock()
	defer outMu.Unlock()
	testBinary, testFlag, testDefault = true, flag, def
	// Tests run on goroutines of their own, one at a time, and take the
	// engine where they start (hold.go).
	startMu.Lock()
	e := current
	startMu.Unlock()
	// Serial mode profiles one goroutine at a time, so parallel tests run
	// one at a time, unless -test.parallel says otherwise; a test binary
	// that is not profiled runs them as written.
	if e != nil {
		oneTestAtATime()
	}
}

// Finish ends the run and writes the profile (see TestOutput for test
// binaries). Only the first call writes; it is safe in a deferred call while
// a panic unwinds. Rewritten main functions defer it; generated TestMain
// functions call it after the tests have run.
func Finish() {
	if panicking() {
		setEnded("panic")
	}
	startMu.Lock()
	running := current != nil
	startMu.Unlock()
	if !running || !testOutput() {
		return
	}
	if err := stopAndWrite(); err != nil {
		// As testing does when it cannot write a profile.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// panicking reports whether the caller, deferred, runs while a panic
// unwinds: runtime.gopanic calls the deferred functions. It walks the
// stack once, at the end of the run.
func panicking() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if f.Function == "runtime.gopanic" {
			return true
		}
		if !more {
			return false
		}
	}
}

// testOutput points a test binary's run at its profile file (see
// TestOutput) and reports whether there is one to write; elsewhere the
// options already name it.
func testOutput() bool {
	outMu.Lock()
	defer outMu.Unlock()
	if !testBinary {
		return true
	}
	out := testDefault
	if testFlag != nil && *testFlag != "" {
		out = *testFlag
	}
	if out == "" {
		out = os.Getenv(envOut)
	}
	if out == "" {
		return false
	}
	startMu.Lock()
	runOpts.Out = out
	startMu.Unlock()
	return true
}

// BeforeExit writes the profile as Finish does and returns code:
// instrumented code calls os.Exit(BeforeExit(code)), so that a program that
// exits that way still leaves its profile.
func BeforeExit(code int) int {
	exitStatus(code)
	Finish()
	return code
}

// pgoStop ends the CPU profile of a build with the tag spanprof_pgo
// (pgo.go); nil in every other build.
var pgoStop func()

// stopAndWrite ends the run and writes the profile to the file of the
// options. It
// is safe to call more than once and from a deferred function while a panic
// unwinds; only the first call writes.
func stopAndWrite() error {
	var err error
	stopOnce.Do(func() {
		e := current
		if e == nil {
			err = errors.New("spanprof: Stop without Start")
			return
		}
		p := e.stopAnd(collectBeforeProfile)
		if pgoStop != nil {
			pgoStop()
		}
		for _, n := range p.NotProfiled {
			// Also in the profile and every report: go test hides
			// the stderr of a passing package.
			fmt.Fprintf(os.Stderr, "spanprof: %s\n", n.Summary())
		}
		p.TimeNanos = started.UnixNano()
		p.DurationNanos = int64(time.Since(started))
		p.Ended = runEnded()
		if measure != nil {
			closeMeasure(measure)
		}
		if e.root.close != nil {
			e.root.close() // the measure of the thread the engine moved to last
			e.root.close = nil
		}
		trust := trustFigures(atStart, e.moved)
		trust.Outliers = p.Trust.Outliers
		if e.merge != nil {
			trust.Runs, trust.RunsNote = e.merge.close()
		}
		p.Trust = trust
		if werr := spanprofile.WriteFile(runOpts.Out, p); werr != nil {
			err = fmt.Errorf("spanprof: can't write %s: %w", runOpts.Out, werr)
		}
	})
	return err
}

// profileBytesPerContext is about what making a profile and writing it
// allocate per calling context: the write 750 bytes in spanprofile's
// BenchmarkWriteProfile; the profile's making, less.
const profileBytesPerContext = 750

// collectBeforeProfile runs the collector before a profile of the given
// number of calling contexts is made and written, where that is worth it
// (worthCollecting).
func collectBeforeProfile(contexts int) {
	if worthCollecting(contexts, scanBytes()) {
		runtime.GC()
	}
}

// worthCollecting reports whether the collector should run before a
// profile of the given number of contexts is made and written, in a heap
// whose collection scans scan bytes. What they allocate comes from pages
// the process has never touched unless a collection has freed the
// program's garbage first, and a fresh page faults on its first write (12
// µs a fault on the 2-vCPU VM). A collection costs in proportion to what
// it scans, so it runs only where the profile allocates more than that
// (docs/benchmarks.md).
func worthCollecting(contexts int, scan uint64) bool {
	return scan > 0 && uint64(contexts)*profileBytesPerContext > scan
}

// scanBytes returns what a collection would scan: the scannable heap, as
// of the last collection, the goroutine stacks and the globals; 0 where
// the runtime does not say.
func scanBytes() uint64 {
	ms := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(ms)
	var n uint64
	for _, m := range ms {
		if m.Value.Kind() != metrics.KindUint64 {
			return 0
		}
		n += m.Value.Uint64()
	}
	return n
}
