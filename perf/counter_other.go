//go:build !linux

package perf

import (
	"errors"
	"runtime"
)

// openCounter fails: counters are read through Linux perf events.
func openCounter(name, unit string, hardware bool) (Measure, error) {
	e := &OpenError{
		Measure:  name,
		Cause:    "perf events need Linux, not " + runtime.GOOS,
		Fallback: "use -measure cpu (the default)",
		Err:      errors.ErrUnsupported,
	}
	return nil, e
}
