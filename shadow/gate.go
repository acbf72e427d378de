package shadow

// In serial mode the engine is driven by one goroutine at a time: spawns run
// inline, so the program's own fork/join code never reaches it from two
// goroutines. Other goroutines still can, through callbacks from other
// packages (an HTTP handler calling an instrumented function), a
// b.RunParallel body, or a goroutine that an earlier test left running, and
// their events would corrupt the engine. So every entry point first checks
// that the calling goroutine holds the engine; an event from any other is
// counted (notprof.go) and ignored, and the entry points of generated code
// (emit.go) do what the original code did (a real go statement, wg.Go, g.Go, ...).
//
// The goroutine that holds the engine is the one that started the run,
// unless it was handed over: in a test binary each test, and each subtest,
// takes it explicitly where it starts, and gives it back where it ends
// (hold.go). A goroutine the engine did not hand itself to never takes it
// over, in either mode.
//
// End events never change the holder, and an end whose begin was not
// profiled is unmatched and ignored (engine.go, depth.go), so an event
// whose begin was ignored, or lost to a recovered panic, cannot unbalance
// the shadow stack.

// begin returns the running engine if the calling goroutine g holds it,
// for an event at site (-1: none), or nil.
//
// In parallel accounting (parallel.go) every goroutine spawned at a site has
// a state of its own, and begin returns nil: the callers take the parallel
// path.
func begin(g uintptr, site SiteID) *engine {
	e := current
	if e == nil || e.par.on.Load() {
		return nil
	}
	if g != e.owner.Load() {
		return e.foreign(g, site)
	}
	return e
}

// foreign takes an event from goroutine g, which does not hold the engine:
// the goroutine that started the run takes it back once the tests are over
// (hold.go); any other's event is counted and ignored.
//
//go:noinline
func (e *engine) foreign(g uintptr, site SiteID) *engine {
	if g == e.home && e.retakeHome() {
		return e
	}
	e.note(whyOther, g, site)
	return nil
}
