//go:build unix

package shadow

import (
	"os"
	"syscall"
	"time"
)

// dieOf ends the process by sig, its handler reset, so that the parent sees
// the status the program would have died with.
func dieOf(sig syscall.Signal) {
	syscall.Kill(syscall.Getpid(), sig)
	time.Sleep(time.Second) // the signal kills the process meanwhile
	os.Exit(128 + int(sig))
}
