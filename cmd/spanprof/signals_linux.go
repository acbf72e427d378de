package main

import (
	"os/exec"
	"syscall"
)

// dieWithSpanprof has the kernel send cmd's process SIGTERM should spanprof
// die first (killed with SIGKILL by a CI runner's timeout, say): an
// instrumented program then writes the profile of what ran and exits,
// instead of running on, orphaned, on a machine that is now one CPU short.
// The kernel sends it when the thread that started the process exits; Go
// ends a thread only when a goroutine locked to it returns, and nothing
// spanprof runs while a program runs locks one.
func dieWithSpanprof(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
