// Package shadow is the runtime that instrumented programs report to: it
// runs alongside the program (a shadow computation, as in Cilkview and
// Cilkprof) and measures, from the program's parallel-control events, the
// work and span of the whole run and of every site.
//
// # Events
//
// The rewriter turns fork/join idioms into calls of this package's entry
// points, one per idiom (rewrite/doc.go has the table; rewrite/entrypoints.go
// names them all, checked against this package by a test), each carrying a
// small integer SiteID from a static table that generated code registers
// with Init, or the address of a join object. They make the events of the
// DAG below:
//
//	a call         CallBegin(site) / CallEnd(), Enter / Leave, EnterAfter / Leave1-4,
//	               and the ends CallEndGlue, LeaveGlue that a wait follows (glue.go)
//	a spawn        Go, WaitGroupGo, GroupGo, GroupTryGo, ParlibGroupSpawn, ParlibSpawn,
//	               ParlibDo, ParlibFor, ParlibForRange, ParlibForEach: a child at site,
//	               whose return may signal a join object (wg.Go, errgroup's Go, parlib)
//	a contribution WaitGroupDone, WaitGroupAdd(-n): a join contribution;
//	               WaitGroupDoneLast, one that is the child's last action (glue.go)
//	a wait         WaitGroupWait, GroupWait, ParlibGroupSync, ParlibTaskWait, and the
//	               implicit sync of parlib.Do and the loops
//
// In serial mode a spawned child runs inline, inside the entry point, so the
// events arrive in the serial elision's order and results are deterministic
// for deterministic programs. The entry points take events from the
// goroutine that holds the engine only, and count and ignore the others'
// (gate.go); in a test binary the engine is handed from test to test, and to
// subtests and back, where the testing package does the same (hold.go). An
// invocation that a recovered panic unwound is closed at the next event of a
// function above it (depth.go). What was not profiled goes into the profile
// (notprof.go). A spawn at a Goroutine site (one the analyzer finds not
// elidable) runs as a real goroutine, and so does every spawn in parallel
// mode: from then on each goroutine spawned at a site has a shadow state of
// its own and every event but a call takes the engine's lock (parallel
// accounting, parallel.go).
//
// # Files
//
// The interface of generated code (emit.go has what its files share: how a
// spawn's child runs, joins, calls):
//
//	emit_call.go      instrumented calls
//	emit_go.go        go statements
//	emit_waitgroup.go sync.WaitGroup
//	emit_errgroup.go  errgroup.Group, by a constraint rather than an import
//	emit_parlib.go    parlib's groups, tasks and Do
//	emit_loop.go      parlib's loops, split as parlib splits them
//	glue.go           events with no code between them: one read for two
//	hold.go           test binaries: the engine handed from test to test
//	lifecycle.go      the run in the process: its options, start, end and profile file
//
// The engine:
//
//	engine.go         the engine: frames, tasks, strands, and serial mode's events
//	parallel.go       parallel accounting: a state per goroutine, events under a lock
//	gtable.go         parallel accounting's goroutine table, read without a lock
//	mode.go           the run modes, and each one's default measure
//	gate.go           which goroutine's events the engine takes
//	depth.go          invocations that a recovered panic unwound
//	sites.go          the site tables that generated code registers
//	cct.go            the calling-context tree
//	activity.go       the sites open on a goroutine's stack: top-call-site, top-caller, folding
//	prof.go           Cilkprof's prof structure, made persistent
//	record.go         the records of local span along a path
//	joins.go          the join objects' accumulators
//	result.go         the end of a run, and its profile
//	calibrate.go      the instrumentation's cost per event and the burden, at start-up
//	strands.go        several runs merged strand by strand (-count)
//	notprof.go        what the run saw but did not profile
//	trust*.go         the trust figures: what the machine did to the run
//	watchdog.go       serial mode's own deadlocks, and the program's
//	signal.go         how a run ended; SIGINT and SIGTERM
//	request.go        whether the process was asked for a profile
//	getg_*.go, cpu_*.go, die_*.go, pin_*.go, timers_*.go: per platform
//
// # The DAG
//
// A strand is the code between two events; its length is what the measure
// (package perf) advanced between them, less the calibrated cost of the
// instrumentation itself. Strands of one goroutine are in series. A spawn
// has an edge to the child's first strand and a continuation edge to the
// parent's next strand; the continuation edge carries the burden in the
// burdened DAG (Cilkview §3, Figure 13). A Done, and the return of a child
// spawned with a join object, has an edge into the join object; a Wait has
// an edge from the join object to the waiter's next strand. A Wait joins the
// contributions made since the previous Wait on the same object.
//
// Work is the total length of all strands. T(x), the time of point x, is the
// length of the longest path from the start of the program to x. The span is
// the longest path to any sink: the end of the program or of any goroutine,
// joined or not. The critical path is that path; where paths tie, the
// earlier one in program order is kept (a join edge replaces the waiter's own
// path only when strictly longer; among a join object's contributions, and
// among sinks, the first longest wins).
//
// # Per-site measurements (Cilkprof §6)
//
// An invocation is one execution of a site, from its first event to its
// end. For each invocation:
//   - work: the strands executed from its start to its end (its trace, in
//     serial order), children included;
//   - span: T(end) - T(start). For series-parallel code this is the span of
//     the invocation's own sub-DAG, as in Cilkprof; when the invocation waits
//     on work that started outside it, it also includes that wait: how much
//     the invocation delays every path through it;
//   - local work: its own strands, not those of its instrumented children;
//   - local span: its own strands on the longest path to its end.
//
// An invocation is top-call-site when no invocation of the same site is
// active above it, and top-caller when no invocation of a site in the same
// function is active above it. Per site, the on-work measurements add up all
// invocations: top-call-site (count, work, span) over the top-call-site
// invocations, top-caller likewise, local (count, local work, local span)
// over all. The on-span measurements add up the invocations whose end lies on
// the critical path, except that local span on span is the length of the
// critical path's strands that belong to the site's invocations: summed over
// all sites and the root it is the span. When the critical path leaves a
// goroutine through a Done, the invocations open in that goroutine count with
// what they had done by then.
//
// # Calling contexts
//
// Measurements are kept per calling context (a stack of sites, root first),
// which gives the pprof flame graphs their stacks; a site's numbers are the
// sum over the contexts it ends. Recursion is folded: an invocation of a
// site already active returns to that invocation's context.
//
// # Algorithms and costs
//
// Span uses absolute times (Cilkview's Figure 13) rather than Cilkprof's
// frame-relative variables of Figure 3, because Go's join objects need not
// nest. Every span value carries a prof (Cilkprof's Figure 4, prof.go), made
// persistent so that a spawn shares its parent's path profile in O(1) instead
// of copying it, and every frame carries the local-span state of record.go.
// Events cost O(1) amortized, except that a wait which adopts a path forked
// from somewhere other than the waiting frame looks for that frame along the
// path (bounded by the events since the frame started) and a Done visits the
// goroutine's open invocations. Space is O(D·S) for stack depth D and S
// contexts, and the steady state allocates nothing. The structures every
// event writes (records, the profs' pending updates, frames, join
// accumulators) hold no Go pointers: records and update nodes live in slabs
// and refer to each other by int32 index, so their stores pay no write
// barrier and the collector does not scan them.
package shadow
