//go:build spanprof_pgo

package shadow

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// pgoHz is the sampling rate of the CPU profile.
const pgoHz = 1000

// Built with the tag spanprof_pgo, as `make pgo` builds the examples, a
// profiled run writes a CPU profile of itself to $SPANPROF_PGO_OUT, from
// the runtime's initialization to the end of the run. bench/pgo merges
// such profiles into engine.pgo, the profile the spanprof command compiles
// this package and perf with (profile-guided optimization: see
// docs/benchmarks.md). Without the tag nothing of this is built.
func init() {
	name := os.Getenv("SPANPROF_PGO_OUT")
	if name == "" {
		return
	}
	f, err := os.Create(name)
	if err == nil {
		// Ten times pprof's 100 Hz, for samples enough from runs of a
		// second: set first, StartCPUProfile's own setting then fails
		// (and says so on stderr) and leaves this one.
		runtime.SetCPUProfileRate(pgoHz)
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "spanprof: SPANPROF_PGO_OUT:", err)
		os.Exit(2)
	}
	pgoStop = func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "spanprof: SPANPROF_PGO_OUT:", err)
		}
	}
}
