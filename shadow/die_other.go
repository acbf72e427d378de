//go:build !unix

package shadow

import (
	"os"
	"syscall"
)

// dieOf ends the process with the status a shell gives a death by sig: a
// process cannot send itself a signal here.
func dieOf(sig syscall.Signal) { os.Exit(128 + int(sig)) }
