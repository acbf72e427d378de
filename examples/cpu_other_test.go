//go:build !linux

package examples_test

import "os/exec"

// onOneCPU runs cmd and returns its combined output; only Linux lets a
// thread choose its CPU.
func onOneCPU(cmd *exec.Cmd) ([]byte, error) { return cmd.CombinedOutput() }
