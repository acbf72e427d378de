package shadow

import (
	"fmt"

	"github.com/spanprof/spanprof/perf"
)

// runMode is how a run executes its spawns (docs/modes.md). Its names are
// for the edges only (SPANPROF_MODE, the link-time default of `spanprof
// build`, the profile's mode field): parseMode reads them, String writes
// them.
type runMode uint8

const (
	serialMode   runMode = iota // spawns run inline, the serial elision; the default
	parallelMode                // every spawn runs as a real goroutine (parallel accounting)
	elisionMode                 // every spawn is a plain call and nothing is measured
)

var modeNames = [...]string{serialMode: "serial", parallelMode: "parallel", elisionMode: "elision"}

func (m runMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("runMode(%d)", m)
}

// parseMode reads the name of a mode; an empty one is serial.
func parseMode(name string) (runMode, error) {
	if name == "" {
		return serialMode, nil
	}
	for m, n := range modeNames {
		if n == name {
			return runMode(m), nil
		}
	}
	return serialMode, fmt.Errorf("spanprof: unknown mode %q (want serial or parallel)", name)
}

// DefaultMeasure returns the measure a run of the named mode uses when none
// is named: cpu (perf.Default) in serial mode, the clock in parallel mode.
//
// A per-thread measure keeps every goroutine that runs for real on an OS
// thread of its own, and a locked goroutine that blocks hands its thread
// off to the scheduler and back: on quicksort with 55,000 goroutines at
// GOMAXPROCS=2 that took 25 s instead of 0.7-2.8 s, and the threads' CPU
// time then includes the runtime's hand-offs (work read 2.8 s for 0.3 s).
// Go offers no cheaper per-goroutine CPU time, so parallel mode measures
// wall time unless told otherwise, and says so (report.Warnings).
func DefaultMeasure(mode string) string {
	m, _ := parseMode(mode)
	return m.measure()
}

// measure is the name of the measure a run of mode m uses when none is
// named (DefaultMeasure).
func (m runMode) measure() string {
	if m == parallelMode {
		return perf.Clock
	}
	return perf.Default()
}
