//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, s os.Signal) { p.Signal(s) }
