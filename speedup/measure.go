package speedup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Sample is one timed run of a program.
type Sample struct {
	Wall float64 // seconds from the start of the process to its exit
	CPU  float64 // user and system processor seconds of the process

	// Delay is the time the process's threads were ready to run but
	// waited for a processor that other processes held, in seconds, summed
	// over the threads: Linux's run_delay, sampled while the process runs
	// (see Run). It is 0 where the system does not report it.
	Delay float64

	// Others is the processor time, in seconds, that other processes of
	// the machine (and the hypervisor's steal, Steal of it) took while the
	// program ran, and Machine the processor time the machine had
	// meanwhile, its CPUs times the wall time: see OthersDuring. Machine
	// is 0 where /proc/stat is not there to read, and Others then too.
	Others, Steal, Machine float64
}

// pollInterval is how often Run samples the threads' run delay. The delay a
// thread accrues in its last interval is missed; a shorter interval would
// take more of the processors the measured program runs on.
const pollInterval = 10 * time.Millisecond

// Run runs cmd, which must not have been started, and times it. The wall
// time runs from just before the process is created to just after it is
// waited for, so it includes the program's start-up and exit, as a person
// timing it would. The error is cmd's, an *exec.ExitError when the program
// failed.
//
// While the program runs, Run reads the run delay of each of its threads
// from /proc/PID/task/TID/schedstat every 10 ms, and keeps the last value
// read from each: the sum is Sample.Delay. A process's own schedstat counts
// only its first thread, and a process that has exited has no threads left
// to read, hence the polling.
//
// It reads /proc/stat just before the process starts and just after it is
// waited for: the machine's busy time in between, less the process's own,
// is the time other processes took (Sample.Others).
func Run(cmd *exec.Cmd) (Sample, error) {
	before, haveStat := readCPUTimes()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Sample{}, err
	}
	done := make(chan struct{})
	var delay time.Duration
	var wg sync.WaitGroup
	wg.Go(func() { delay = pollDelay(cmd.Process.Pid, done) })
	err := cmd.Wait()
	wall := time.Since(start)
	// The machine's times are read next, not after the poller stops: on a
	// loaded machine that took long enough (0.13 s with load average 20)
	// for the window of /proc/stat to outgrow the wall time measured.
	after, haveAfter := readCPUTimes()
	close(done)
	wg.Wait()
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	s := Sample{Wall: wall.Seconds(), CPU: cpu.Seconds(), Delay: delay.Seconds()}
	if haveStat && haveAfter {
		d := after.Sub(before)
		s.Others, s.Machine = OthersDuring(d, s.CPU)
		s.Steal = min(d.Steal, s.Others)
	}
	return s, err
}

// pollDelay samples the run delay of the threads of process pid until done
// is closed, and returns the sum of the last value read from each thread.
func pollDelay(pid int, done <-chan struct{}) time.Duration {
	last := make(map[string]time.Duration)
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	read := func() {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return // not Linux, or the process has exited
		}
		for _, t := range tasks {
			if d, ok := runDelay(filepath.Join(dir, t.Name(), "schedstat")); ok {
				last[t.Name()] = d
			}
		}
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		read()
		select {
		case <-done:
			var sum time.Duration
			for _, d := range last {
				sum += d
			}
			return sum
		case <-tick.C:
		}
	}
}

// runDelay reads the second field of a schedstat file: the time the thread
// spent on a run queue, waiting for a processor, in nanoseconds.
func runDelay(file string) (time.Duration, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	fields := bytes.Fields(data)
	if len(fields) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}

// Idle returns the idle time of the sample on procs processors: the
// processor time that was available and neither used nor waited for,
// Idle(procs, Wall, CPU+Delay).
func (s Sample) Idle(procs int) float64 { return Idle(procs, s.Wall, s.CPU+s.Delay) }
