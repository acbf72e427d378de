package shadow

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/spanprofile"
)

// The environment of an instrumented program (docs/cli.md); `spanprof run`
// sets these.
const (
	EnvOut     = "SPANPROF_OUT"     // profile file; default spanprof.pb.gz
	EnvMode    = "SPANPROF_MODE"    // serial (default), parallel, or elision (no profile; see Start)
	EnvMeasure = "SPANPROF_MEASURE" // cpu (default), clock, instructions, cycles, task-clock
	EnvBurden  = "SPANPROF_BURDEN"  // a duration such as 2us; default: calibrated at start-up
)

// DefaultOut is the profile file written when SPANPROF_OUT is not set.
const DefaultOut = "spanprof.pb.gz"

// Options configure a run started with Start.
type Options struct {
	Out     string // profile file
	Mode    runMode
	Measure string        // a perf measure name
	Burden  time.Duration // 0: calibrate the cost of a goroutine hand-off
}

// OptionsFromEnv reads the options from the environment and, for those it
// does not set, from the defaults that `spanprof build` links in.
func OptionsFromEnv() (Options, error) {
	o := Options{Out: cmp.Or(os.Getenv(EnvOut), DefaultOut), Measure: cmp.Or(os.Getenv(EnvMeasure), defaultMeasure)}
	if s := os.Getenv(EnvBurden); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return o, fmt.Errorf("spanprof: %s=%q is not a duration such as 2us", EnvBurden, s)
		}
		o.Burden = d
	} else if defaultBurden != "" {
		d, err := time.ParseDuration(defaultBurden)
		if err != nil {
			return o, err
		}
		o.Burden = d
	}
	var err error
	o.Mode, err = parseMode(cmp.Or(os.Getenv(EnvMode), defaultMode))
	return o, err
}

var (
	current  *Engine // the run the package-level functions report to
	startMu  sync.Mutex
	runOpts  Options
	measure  perf.Measure
	started  time.Time
	atStart  machine // the machine's counters at Start, for the trust figures
	pinned   = -1    // the CPU serial mode keeps the profiled thread on (pinThread), or -1
	stopOnce sync.Once
)

// Start begins profiling with the given options. Generated code calls it
// (through StartFromEnv) before main runs; a second Start is an error.
//
// Mode elision starts no profile: every spawn runs as a plain call and no
// event is measured, so an instrumented binary times its own serial elision
// (the benchmarks compare it with the profiled run).
func Start(o Options) error {
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
		o.Out = DefaultOut
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
	cfg := Config{Measure: m, MeasureName: m.Name(), Unit: m.Unit(), Mode: o.Mode, PerThread: m.PerThread()}
	if cfg.PerThread {
		// A goroutine spawned for real (every spawn in parallel mode, a
		// Goroutine site in serial mode) keeps its thread and counts with a
		// counter of its own: a per-thread counter cannot follow a
		// goroutine from thread to thread.
		cfg.Open = func() (Reader, func(), error) {
			c, err := perf.Open(o.Measure)
			if err != nil {
				return nil, nil, err
			}
			return c, func() { closeMeasure(c) }, nil
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
	e := NewEngine(cfg)
	e.merge = merge
	current = e
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

// StartFromEnv starts profiling with the options in the environment and
// exits with status 2 and a one-line message if that fails: an instrumented
// program that cannot profile must not run as if it did.
func StartFromEnv() {
	o, err := OptionsFromEnv()
	if err == nil {
		err = Start(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// Stop ends the run and writes the profile to the file of the options. It
// is safe to call more than once and from a deferred function while a panic
// unwinds; only the first call writes.
func Stop() error {
	var err error
	stopOnce.Do(func() {
		e := current
		if e == nil {
			err = errors.New("spanprof: Stop without Start")
			return
		}
		p := e.Stop()
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

// StopOrExit is Stop for generated code: on failure it prints the error and
// exits with status 2, as testing does when it cannot write a profile.
func StopOrExit() {
	if err := Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// Current returns the running engine, or nil.
func Current() *Engine { return current }

// The events that instrumented code emits. Each takes the site's ID from the
// package's static table or the join object's address: no strings, no maps
// keyed by strings, no runtime.Caller.

// The package-level entry points below, like emit.go's, are real
// functions, never inlined, that first measure the depth of their caller
// (depth.go).

// CallBegin marks the start of an instrumented call at site.
//
//go:noinline
func CallBegin(site SiteID) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.callBegin(site, d)
	} else if e := parEngine(); e != nil {
		e.parCallBegin(site, d)
	}
}

// CallEnd marks the return of the innermost instrumented call.
//
//go:noinline
func CallEnd() {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
}

// RegionBegin marks the start of a region annotation at site; regions are
// measured as invocations of their own site.
//
//go:noinline
func RegionBegin(site SiteID) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.callBegin(site, d)
	} else if e := parEngine(); e != nil {
		e.parCallBegin(site, d)
	}
}

// RegionEnd marks the end of the innermost region.
//
//go:noinline
func RegionEnd() {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
}

// SpawnBegin marks a spawn at site; the child runs next, inline.
//
// SpawnBegin and SpawnEnd are the inline form for hand-written
// instrumentation: the child always runs inline, in every mode.
//
//go:noinline
func SpawnBegin(site SiteID) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.spawnBeginAt(site, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnInline(site, d)
	}
}

// SpawnEnd marks the return of the spawned child; obj is the join object its
// return signals (wg.Go, errgroup's Go), or nil.
//
//go:noinline
func SpawnEnd(obj unsafe.Pointer) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.spawnEndAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnEnd(obj, d)
	}
}

// Done marks a contribution to join object obj (wg.Done, wg.Add(-n)).
//
//go:noinline
func Done(obj unsafe.Pointer) {
	g, d := gdepth()
	doneAt(g, d|depthOff, obj)
}

// Wait marks the return of a wait on join object obj. In parallel
// accounting the time since the goroutine's last event counts as a strand,
// the time blocked in the wait included; the helpers the rewriter calls
// (WaitGroupWait, GroupWait, ParlibGroupSync, ParlibTaskWait) read the
// measure before the wait blocks instead, so that it is no strand's.
//
//go:noinline
func Wait(obj unsafe.Pointer) {
	g, d := gdepth()
	waitAt(g, d|depthOff, obj)
}

// waitAt takes the return of a wait on obj from goroutine g at depth d.
func waitAt(g, d uintptr, obj unsafe.Pointer) {
	if e := begin(g, -1); e != nil {
		e.waitAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parWait(obj, e.beforeWait(), d)
	}
}

// calibrateOverhead measures the instrumentation's own cost per event, in
// the measure's unit, by running empty calls through a scratch engine: every
// strand such a run records is instrumentation. The median of several
// batches resists an interrupt landing in one of them.
//
// In parallel mode the events run through the locked path, whose strands
// exclude the engine's own work already (parallel.go): what is left is the
// cost of reaching the engine and reading the measure.
func calibrateOverhead(m Reader, name string, mode runMode, perThread bool) int64 {
	tab := &siteTable{}
	tab.add([]SiteInfo{{File: "calibrate", Func: "calibrate", Caller: "calibrate", Kind: spanprofile.KindCall}})
	const batches, pairs = 9, 2000
	per := make([]int64, batches)
	for b := range per {
		e := newEngine(Config{Measure: m, MeasureName: name, Mode: mode, PerThread: perThread}, tab)
		for i := 0; i < pairs; i++ {
			if mode == parallelMode {
				e.parCallBegin(0, noDepth)
				e.parCallEnd(noDepth)
			} else {
				e.CallBegin(0)
				e.CallEnd()
			}
		}
		per[b] = e.work / (2 * pairs)
	}
	slices.Sort(per)
	return per[batches/2]
}

// burdenIn returns the burden in m's unit: the given duration, or the
// measured cost of handing a goroutine off (start one, let it signal a
// WaitGroup, wait for it), the Go counterpart of Cilkview's steal cost.
func burdenIn(m perf.Measure, d time.Duration) int64 {
	if d == 0 {
		d = HandOffCost()
	}
	if m.Unit() == perf.UnitNanoseconds {
		return int64(d)
	}
	// A counter: convert at the rate it runs on a busy loop.
	return int64(float64(d) * counterRate(m))
}

// HandOffCost measures the median wall time of spawning a goroutine and
// waiting for it on this machine.
//
// It measures from a goroutine of its own: the caller may be locked to its
// OS thread (the runtime locks the main goroutine while packages initialize,
// and per-thread measures lock it for the run), and a locked goroutine that
// parks hands its thread off, which costs some 30 µs instead of about one.
func HandOffCost() time.Duration {
	c := make(chan time.Duration)
	go func() { c <- handOffCost() }()
	return <-c
}

func handOffCost() time.Duration {
	const n = 201
	costs := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range costs {
		t0 := time.Now()
		wg.Add(1)
		go wg.Done()
		wg.Wait()
		costs[i] = time.Since(t0)
	}
	slices.Sort(costs)
	return costs[n/2]
}

// counterRate returns how many units of m pass per nanosecond of a busy
// loop: the fastest of several short windows, because a window in which the
// thread was preempted counts wall time without counting instructions.
func counterRate(m perf.Measure) float64 {
	best := 0.0
	for i := 0; i < 10; i++ {
		t0, c0 := time.Now(), m.Read()
		x := 0
		for time.Since(t0) < 500*time.Microsecond {
			x++
		}
		_ = x
		if r := float64(m.Read()-c0) / float64(time.Since(t0)); r > best {
			best = r
		}
	}
	return best
}
