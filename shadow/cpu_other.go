//go:build !unix

package shadow

import "time"

var processStart = time.Now()

// processCPU has no portable source here; it reports the process as busy
// all along, so the serial-mode watchdog never stops a program on these
// systems.
func processCPU() time.Duration { return time.Since(processStart) }
