package rewrite

import (
	"fmt"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// unprofiled returns why f runs on goroutines the runtime does not know, or
// "": forkjoin finds it passed to a goroutine API (time.AfterFunc, ...) or
// declared in a function that is (Func.StartedBy). Its spawns are not
// profiled: they would run on those goroutines. What it calls is
// instrumented as usual: the taint is per call, not package-wide, because
// the same code is called from profiled goroutines too (a benchmark's
// b.RunParallel body calling NewCache, which the package's tests call
// directly), and the runtime takes no event from a goroutine that does not
// hold it (it counts them for the profile's NotProfiled instead).
func (pl *planner) unprofiled(f *forkjoin.Func) string {
	by := f.StartedBy
	if by == nil {
		return ""
	}
	return fmt.Sprintf("%s at %s runs the function it is in on goroutines the profiler does not follow", by.API.Name(), pl.line(by.Call.Pos()))
}

// staysGoroutine returns why spawn site s cannot run inline, or "": one of
// the spawns it makes is not elidable. A reason the summaries of forkjoin
// give comes before the weaker one of a method that takes a context
// (Spawn.Outside), whose position is written as the rewriter's warnings
// write positions.
func (pl *planner) staysGoroutine(s *forkjoin.Spawn) string {
	for _, t := range spawnsOf(s) {
		if !t.Elidable && t.Outside == nil {
			return t.Reason
		}
	}
	for _, t := range spawnsOf(s) {
		if t.Outside != nil {
			return t.Outside.Describe(pl.line)
		}
	}
	return ""
}
