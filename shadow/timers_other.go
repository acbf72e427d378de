//go:build !linux || !(amd64 || arm64)

package shadow

import "time"

// pause sleeps for d.
func pause(d time.Duration) { time.Sleep(d) }

// settledTimers is pendingTimers.
func settledTimers() int { return pendingTimers() }

// pendingTimers cannot tell whether a Go timer is pending here: the
// watchdog then stops only serial mode's own deadlocks (watchdog.go).
func pendingTimers() int { return -1 }
