package shadow

import "sync/atomic"

// In serial mode the engine is driven by one goroutine at a time: spawns run
// inline, so the program's own fork/join code never reaches it from two
// goroutines. Other goroutines still can, through callbacks from other
// packages (an HTTP handler calling an instrumented function), and their
// events would corrupt the engine. So every entry point first checks that
// the calling goroutine is the profiled one; an event from any other is
// ignored, and the helpers of emit.go do what the original code did (a real
// go statement, wg.Go, g.Go, ...).
//
// The profiled goroutine is the one that started the run. In a test binary
// (TestOutput), where each test runs on a goroutine of its own and, with
// -test.parallel=1, one at a time, the first goroutine to start an
// invocation while the engine is at its root becomes the profiled one.
//
// End events never change the profiled goroutine, and an end with no
// matching begin is ignored, so an event whose begin was ignored, or lost to
// a recovered panic, cannot unbalance the shadow stack.

// ignored counts the events ignored for coming from other goroutines, and
// unmatched the ends without a begin; Stop reports them.
var ignored, unmatched atomic.Int64

// begin returns the running engine if the calling goroutine may start an
// event on it, or nil.
//
// In parallel accounting (parallel.go) every goroutine spawned at a site has
// a state of its own, and begin, endCall and endSpawn return nil: the
// callers take the parallel path.
func begin() *Engine {
	e := current
	if e == nil || e.par.on.Load() {
		return nil
	}
	if g := getg(); g != e.owner {
		if e.transfer && len(e.frames) == 1 && len(e.tasks) == 1 {
			// The root state is the new owner's now, also for parallel
			// accounting, which finds states by goroutine (enablePar).
			e.owner, e.root.g = g, g
			handOver()
			e.rebind()
			return e
		}
		ignored.Add(1)
		return nil
	}
	return e
}

// endCall returns the running engine if the calling goroutine is the
// profiled one and an instrumented call of its current goroutine is open.
func endCall() *Engine {
	e := current
	if e == nil || e.par.on.Load() {
		return nil
	}
	if getg() != e.owner {
		ignored.Add(1)
		return nil
	}
	if len(e.frames)-1 <= e.tasks[len(e.tasks)-1].base {
		unmatched.Add(1)
		return nil
	}
	return e
}

// endSpawn is endCall for the end of a spawned child.
func endSpawn() *Engine {
	e := current
	if e == nil || e.par.on.Load() {
		return nil
	}
	if getg() != e.owner {
		ignored.Add(1)
		return nil
	}
	if len(e.tasks) == 1 || len(e.frames)-1 != e.tasks[len(e.tasks)-1].base {
		unmatched.Add(1)
		return nil
	}
	return e
}
