// Package spanprofile is the in-memory form of a spanprof span profile: the
// whole-run summary of Cilkview (work, span, burdened span, spawns, syncs) and
// the per-site, per-calling-context measurements of Cilkprof (top-call-site,
// top-caller and local, each on work and on span).
//
// The shadow runtime fills a Profile at the end of a run; Write encodes it as
// the gzipped pprof protobuf of docs/profile-format.md and Read decodes such
// a file back, so
// that everything `spanprof report` prints is recoverable from the file alone.
package spanprofile

import (
	"fmt"
	"strings"
)

// Triple is one Cilkprof measurement of a set of invocations: how many, the
// sum of their work and the sum of their spans.
type Triple struct {
	Count int64 `json:"count"`
	Work  int64 `json:"work"`
	Span  int64 `json:"span"`
}

// Add returns t with u added field by field.
func (t Triple) Add(u Triple) Triple {
	return Triple{t.Count + u.Count, t.Work + u.Work, t.Span + u.Span}
}

// Measurement holds the three Cilkprof measurements of a site (Section 6 of
// the Cilkprof paper): top-call-site, top-caller and local.
type Measurement struct {
	TopCallSite Triple `json:"top_call_site"`
	TopCaller   Triple `json:"top_caller"`
	Local       Triple `json:"local"`
}

// Add returns m with n added field by field.
func (m Measurement) Add(n Measurement) Measurement {
	return Measurement{m.TopCallSite.Add(n.TopCallSite), m.TopCaller.Add(n.TopCaller), m.Local.Add(n.Local)}
}

// Kind says what a site is.
type Kind string

// The kinds of site.
const (
	KindRoot   Kind = "root"   // the program itself: strands outside any instrumented invocation
	KindSpawn  Kind = "spawn"  // go statement, wg.Go, errgroup Go/TryGo, parlib spawn
	KindCall   Kind = "call"   // call of an instrumented function
	KindRegion Kind = "region" // a region of package region (region.Begin, region.Do), measured as a call; Func is its name
	KindFrame  Kind = "frame"  // trace mode: a stack frame, a function at a line
)

// Site is a static place in the source that invokes work: a spawn, a call of
// an instrumented function, or a region.
type Site struct {
	// File is the site's file, relative to the profiled module's root.
	File string `json:"file"`
	Line int    `json:"line"`
	// Column tells apart sites on one line (fib(n-1) + fib(n-2)); 0 when
	// unknown.
	Column int `json:"column,omitempty"`
	// Func is the Go name of the spawned or called function, as the
	// compiler names it (closures as main.worker.func1); a spawned
	// literal made of one call is named by its callee (main.pqsort for
	// go func() { defer wg.Done(); pqsort(a[:p]) }()).
	Func string `json:"func"`
	// Caller is the Go name of the function that contains the site.
	Caller string `json:"caller"`
	Kind   Kind   `json:"kind"`
	// Loop says, for a spawn, how the loops of its function enclose it:
	// LoopNone, LoopFlat, LoopNested or LoopParlib; "" when unknown (not a spawn, or
	// a profile from an older spanprof). The report's advice on a grain
	// too fine depends on it: a flat loop has no outer loop to move to.
	Loop string `json:"loop,omitempty"`
	// LimitKind and LimitAt name, for a spawn whose children a limit
	// holds to a number of slots, the limit the analyzer sees: LimitKind
	// "errgroup SetLimit" or "semaphore", LimitAt its file:line (the
	// SetLimit call, or the send that takes a semaphore's slot).
	LimitKind string `json:"limit_kind,omitempty"`
	LimitAt   string `json:"limit_at,omitempty"`
}

// The values of Site.Loop.
const (
	LoopNone   = "none"   // in no loop of its function (recursion, a fixed set of spawns)
	LoopFlat   = "loop"   // in a loop that no other loop of its function encloses
	LoopNested = "nested" // in a loop inside another loop of its function
	LoopParlib = "parlib" // a parallel loop of parlib (For, ForRange, ForEach): its pieces are the spawns
)

// LeftOutCall is a call that was not instrumented although it may carry
// work: its place, its callee, its caller and why it was left out.
type LeftOutCall struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
	Func   string `json:"func"`
	Caller string `json:"caller"`
	Why    string `json:"why"`
}

// LimitUse is what a limit on a spawn site's children did in a run: how
// many spawns found every slot taken and waited for the first to free, and
// how far those waits moved the spawning path. A wait that moves it is
// time the spawner spends not spawning, which is on the span when the
// spawner's path is; see docs/model.md.
type LimitUse struct {
	Site  int   `json:"site"`  // index into Profile.Sites: the spawn site
	N     int64 `json:"n"`     // the number of slots (SetLimit's argument, the semaphore's capacity)
	Waits int64 `json:"waits"` // spawns that waited for a slot that was not yet free
	Delay int64 `json:"delay"` // the sum of those waits, in the profile's unit
}

// Context is one folded calling context: a stack of sites from the root to a
// leaf, where recursion has been folded (a site already on the stack returns
// to that frame's context), with the measurements of the invocations whose
// innermost site is the leaf in this context.
type Context struct {
	// Stack holds indexes into Profile.Sites, root first. The root context
	// (strands outside every instrumented invocation) has an empty stack.
	Stack  []int       `json:"stack"`
	OnWork Measurement `json:"on_work"`
	OnSpan Measurement `json:"on_span"`
}

// Profile is a span profile of one run.
type Profile struct {
	Mode    string `json:"mode"`    // serial, parallel or trace
	Measure string `json:"measure"` // clock, instructions, cycles, task-clock, synthetic
	Unit    string `json:"unit"`    // nanoseconds, instructions, cycles, count

	Work         int64 `json:"work"`
	Span         int64 `json:"span"`
	BurdenedSpan int64 `json:"burdened_span"`
	Burden       int64 `json:"burden"` // per spawn, in Unit
	Spawns       int64 `json:"spawns"`
	Syncs        int64 `json:"syncs"`

	// Overhead is the per-event cost of the instrumentation that was
	// subtracted from every strand (calibrated at start-up), in Unit, and
	// Subtracted the total removed from the work over the run.
	Overhead   int64 `json:"overhead"`
	Subtracted int64 `json:"subtracted"`

	// ShadowBytes is the peak memory the shadow runtime's own structures
	// held during the run (frames, path profiles, records, contexts, join
	// accumulators), in bytes; 0 when unknown.
	ShadowBytes int64 `json:"shadow_bytes,omitempty"`

	// Procs is GOMAXPROCS when the run ended; 0 when unknown. With the
	// clock, the work cannot exceed Procs times the run's duration unless
	// strands include time goroutines spent blocked (report.Warnings).
	Procs int64 `json:"procs,omitempty"`

	// TimeNanos is when the run started (Unix nanoseconds) and
	// DurationNanos how long it took, both 0 when unknown. They are copied
	// into the pprof file as they are, never read from the clock, so the
	// same Profile always encodes to the same bytes.
	TimeNanos     int64 `json:"time_nanos,omitempty"`
	DurationNanos int64 `json:"duration_nanos,omitempty"`

	// Ended says how the run ended when it did not complete: "deadlock"
	// (every goroutine asleep), "watchdog" (serial mode's inline run
	// deadlocked), "stack" (serial mode's inline spawns nested past Go's
	// stack limit), "signal SIGINT", "exit 3" (os.Exit with a nonzero
	// status), "panic" (main panicked); "" or "completed" when it did. The profile then holds what
	// ran until then.
	Ended string `json:"ended,omitempty"`
	// Trust says how far to trust the numbers; nil when unknown (a
	// profile from an older spanprof, or built by hand).
	Trust *Trust `json:"trust,omitempty"`
	// NotProfiled is what the run saw but could not profile, by reason;
	// empty when it profiled everything it saw.
	NotProfiled []NotProfiled `json:"not_profiled,omitempty"`

	// Trace says what trace mode read and what it left out of the work;
	// Tasks summarize the runtime/trace tasks of the run. Both are nil
	// outside trace mode (see trace.go).
	Trace *TraceInfo    `json:"trace,omitempty"`
	Tasks []TaskSummary `json:"tasks,omitempty"`

	// Limits are the limits that made spawns wait for a slot in the
	// run (errgroup SetLimit, buffered-channel semaphores), by spawn
	// site; empty when none did or the mode does not model them.
	Limits []LimitUse `json:"limits,omitempty"`
	// LeftOut are the calls of the profiled packages that were not
	// instrumented although their callees loop or make calls, so that
	// they may carry a real share of their caller's time, which the
	// caller's site is charged with.
	LeftOut []LeftOutCall `json:"left_out,omitempty"`

	Sites    []Site    `json:"sites"`
	Contexts []Context `json:"contexts"`

	// WhatIf is the what-if profile of the run (docs/what-if.md): for
	// each target and factor, and all targets together, what the run
	// would have measured had the target's strands taken 1/factor of
	// their time; empty when the run had no targets.
	WhatIf []WhatIf `json:"what_if,omitempty"`
}

// WhatIfAll is the Target of the entries for all targets together.
const WhatIfAll = "all"

// WhatIf is one estimate of a what-if profile: the work, span and
// burdened span of the run had the strands of Target (a region, a site or
// a function, or all of them: WhatIfAll) taken 1/Factor of their time.
type WhatIf struct {
	Target string `json:"target"`
	// Site and Func are the first site the target matched, as Site names
	// them; empty for a region and for all the targets together.
	Site string `json:"site"`
	Func string `json:"func"`
	// Sites counts the sites the target matched; 0 means the estimate is
	// the run itself.
	Sites int `json:"sites"`
	// Factor divides the target's strands; 0 stands for ∞: they take no
	// time.
	Factor       int64 `json:"factor"`
	Work         int64 `json:"work"`
	Span         int64 `json:"span"`
	BurdenedSpan int64 `json:"burdened_span"`
}

// Parallelism is the estimate's work over its span.
func (w WhatIf) Parallelism() float64 { return Ratio(w.Work, w.Span) }

// BurdenedParallelism is the estimate's work over its burdened span.
func (w WhatIf) BurdenedParallelism() float64 { return Ratio(w.Work, w.BurdenedSpan) }

// The reasons of NotProfiled.
const (
	// NotProfiledOtherGoroutine: events from goroutines that did not hold
	// the engine: goroutines the run did not start (a b.RunParallel body,
	// a time.AfterFunc callback, another package's goroutines calling
	// back, a goroutine an earlier test left running), and tests that ran
	// while another test held it (-parallel above 1). They ran as
	// written, unprofiled.
	NotProfiledOtherGoroutine = "other-goroutine"
	// NotProfiledUnmatchedEnd: returns whose start was not profiled (it
	// came while the goroutine did not hold the engine) or was closed
	// already; they were ignored.
	NotProfiledUnmatchedEnd = "unmatched-end"
	// NotProfiledUnwound: invocations that a panic or runtime.Goexit
	// (t.Fatal) unwound before their end; they ended where the program
	// went on, at its next event or at the end of its test. Events counts
	// the invocations.
	NotProfiledUnwound = "unwound"
	// NotProfiledNoCounter: goroutines that could not open a counter of
	// their own (out of file descriptors); their strands read another
	// thread's counter and are wrong. Goroutines counts them.
	NotProfiledNoCounter = "no-counter"
	// NotProfiledThreadLimit: goroutines measured by the clock instead of
	// their thread's CPU time, because a thousand others held threads of
	// their own. Goroutines counts them.
	NotProfiledThreadLimit = "thread-limit"
	// NotProfiledAfterStop: events of goroutines still running after the
	// profile was taken.
	NotProfiledAfterStop = "after-stop"
)

// NotProfiled is one reason why some of what a run did was not profiled,
// with how much of it there was and where it came from.
type NotProfiled struct {
	Reason string `json:"reason"` // one of the NotProfiled constants
	Events int64  `json:"events,omitempty"`
	// Goroutines is how many distinct goroutines made the events (at
	// least), and Creators where they were created, most first.
	Goroutines int64     `json:"goroutines,omitempty"`
	Creators   []Creator `json:"creators,omitempty"`
	// Sites are the sites whose begins were among the events, most first.
	Sites []SiteEvents `json:"sites,omitempty"`
}

// Creator is where goroutines were created: the function of the go
// statement, as runtime stacks name it, and its file and line.
type Creator struct {
	Where      string `json:"where"`
	Goroutines int64  `json:"goroutines"`
}

// SiteEvents counts the events at one site (an index into Profile.Sites).
type SiteEvents struct {
	Site   int   `json:"site"`
	Events int64 `json:"events"`
}

// Why says in a sentence what a reason means for the profile.
func (n NotProfiled) Why() string {
	switch n.Reason {
	case NotProfiledOtherGoroutine:
		return "events from goroutines that did not hold the profiler (goroutines the run did not start, such as b.RunParallel bodies, callbacks from other packages' goroutines or goroutines an earlier test left running, and tests run in parallel with the profiled one) ran unprofiled"
	case NotProfiledUnmatchedEnd:
		return "returns whose start was not profiled, or was closed already, were ignored"
	case NotProfiledUnwound:
		return "invocations that a panic or runtime.Goexit (t.Fatal) unwound were closed where the program went on"
	case NotProfiledNoCounter:
		return "goroutines could not open a counter of their own (raise the limit on open files, or use -measure cpu); their strands are wrong"
	case NotProfiledThreadLimit:
		return "goroutines started while a thousand others each kept a thread of their own were measured by the clock, which counts their blocked and descheduled time"
	case NotProfiledAfterStop:
		return "events of goroutines still running when the profile was taken were not profiled"
	}
	return n.Reason
}

// Summary says in one line how much was not profiled and why, with where
// the goroutines came from.
func (n NotProfiled) Summary() string {
	var b strings.Builder
	switch {
	case n.Reason == NotProfiledUnwound:
		fmt.Fprintf(&b, "%d invocation(s)", n.Events)
	case n.Events > 0 && n.Goroutines > 0:
		fmt.Fprintf(&b, "%d events from %d goroutines", n.Events, n.Goroutines)
	case n.Events > 0:
		fmt.Fprintf(&b, "%d events", n.Events)
	default:
		fmt.Fprintf(&b, "%d goroutines", n.Goroutines)
	}
	b.WriteString(": " + n.Why())
	if len(n.Creators) > 0 {
		b.WriteString("; created by ")
		for i, c := range n.Creators {
			if i == 3 {
				fmt.Fprintf(&b, " and %d more", len(n.Creators)-3)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Where)
		}
	}
	return b.String()
}

// Partial reports whether the run did not complete (see Ended).
func (p *Profile) Partial() bool { return p.Ended != "" && p.Ended != "completed" }

// Trust says how far to trust a profile's numbers: how much the machine
// interfered with the run, and what the measure did about it. Every field
// is 0 when unknown.
type Trust struct {
	// CPUs is the number of CPUs the machine has, and OtherCPU the CPU
	// time, in nanoseconds, that other processes used on them during the
	// run (all CPUs together): other processes' load.
	CPUs     int64 `json:"cpus,omitempty"`
	OtherCPU int64 `json:"other_cpu,omitempty"`
	// Steal is the time, in nanoseconds over all CPUs, that the hypervisor
	// ran something else while the machine's CPUs wanted to run.
	Steal int64 `json:"steal,omitempty"`
	// RunDelay is the time, in nanoseconds, that the profiled thread was
	// ready to run but waited for a CPU; -1 when the run moved from thread
	// to thread (a test binary) and the figure would be partial.
	RunDelay int64 `json:"run_delay,omitempty"`
	// Excluded is the clock time, in nanoseconds, that the cpu measure
	// subtracted from strands because their thread was not running, in
	// Corrections corrections out of Checks reads of the thread's CPU time.
	Excluded    int64 `json:"excluded,omitempty"`
	Corrections int64 `json:"corrections,omitempty"`
	Checks      int64 `json:"checks,omitempty"`
	// Runs is how many runs of the program the profile merged (-count),
	// each strand its shortest length over them; 0 or 1 for one run.
	// RunsNote says why fewer runs than asked for were merged.
	Runs     int64  `json:"runs,omitempty"`
	RunsNote string `json:"runs_note,omitempty"`
	// Counters says the profiled machine counts instructions (a counter
	// opened at the end of the run), so the report can name that remedy.
	Counters bool `json:"counters,omitempty"`
	// TSCGivenUp says the measure read the time-stamp counter and found it
	// out of step with the kernel's clock during the run (a VM moved or
	// restored, CPUs whose counters disagree), and read the kernel's
	// clock from then on: strands around that moment may be wrong.
	TSCGivenUp bool `json:"tsc_given_up,omitempty"`
	// Outliers are the calling contexts whose invocations on the critical
	// path read far longer than the context's invocations on average,
	// although those are alike: the span then picked out noisy strands.
	Outliers []Outlier `json:"outliers,omitempty"`
}

// Outlier is a calling context whose invocations on the critical path read
// far above its average (Trust.Outliers).
type Outlier struct {
	// Context indexes Profile.Contexts.
	Context int `json:"context"`
	// PathMean is the mean local work of the context's invocations on the
	// critical path, Mean and StdDev those of all its invocations.
	PathMean float64 `json:"path_mean"`
	Mean     float64 `json:"mean"`
	StdDev   float64 `json:"stddev"`
}

// SpeedupEstimate returns the Cilkview bounds that follow from the
// estimate, as Profile.SpeedupEstimate does for the run.
func (w WhatIf) SpeedupEstimate(procs []int) []Bound {
	p := Profile{Work: w.Work, Span: w.Span, BurdenedSpan: w.BurdenedSpan}
	return p.SpeedupEstimate(procs)
}
