package main

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts catches SIGINT and SIGTERM while spanprof runs a command, so
// that it passes them on to the process it is running (the instrumented
// program writes the profile of what ran and dies of the signal), removes
// its temporary directories, and exits as a program killed by the signal
// would: 128 plus the signal's number (130, 143).
type interrupts struct {
	c     chan os.Signal
	mu    sync.Mutex
	got   os.Signal
	proc  *os.Process
	group bool // proc leads a process group of its own: signal the group
}

func catchInterrupts() *interrupts {
	in := &interrupts{c: make(chan os.Signal, 2)}
	signal.Notify(in.c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range in.c {
			in.mu.Lock()
			if in.got == nil {
				in.got = s
			}
			in.forward(s)
			in.mu.Unlock()
		}
	}()
	return in
}

// stop gives the signals back to their default handling.
func (in *interrupts) stop() {
	signal.Stop(in.c)
	close(in.c)
}

// forward passes s on to the running process, if any; in.mu is held.
func (in *interrupts) forward(s os.Signal) {
	switch {
	case in.proc == nil:
	case in.group:
		signalGroup(in.proc, s)
	default:
		in.proc.Signal(s)
	}
}

// run runs cmd, passing on the signals spanprof gets meanwhile. With group,
// cmd runs in a process group of its own, and a signal goes to the whole
// group: the go command does not pass an interrupt on to the test binaries
// it runs, which expect it from the terminal.
func (in *interrupts) run(cmd *exec.Cmd, group bool) error {
	if in == nil {
		return cmd.Run()
	}
	if group {
		ownGroup(cmd)
	}
	dieWithSpanprof(cmd)
	in.mu.Lock()
	if in.got != nil {
		in.mu.Unlock()
		return errInterrupted
	}
	if err := cmd.Start(); err != nil {
		in.mu.Unlock()
		return err
	}
	in.proc, in.group = cmd.Process, group
	in.mu.Unlock()
	err := cmd.Wait()
	in.mu.Lock()
	in.proc = nil
	in.mu.Unlock()
	return err
}

// status returns spanprof's exit status after a signal, and whether one
// came.
func (in *interrupts) status() (int, bool) {
	if in == nil {
		return 0, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if s, ok := in.got.(syscall.Signal); ok {
		return 128 + int(s), true
	}
	return 0, false
}

type interruptedError struct{}

func (interruptedError) Error() string { return "interrupted" }

var errInterrupted error = interruptedError{}
