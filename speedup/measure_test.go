package speedup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// buildIdle builds testdata/idle, a program with a known idle time.
func buildIdle(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), "idle")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/idle").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./testdata/idle: %v\n%s", err, out)
	}
	return bin
}

// TestRunIdle checks the idle time measured from outside on programs whose
// idle time is known. The bands are wide on purpose: they must hold on a
// loaded machine, where the operating system may delay any run, and what
// they tell apart (all processors idle, one of two busy, none idle) differs
// by far more than any delay.
func TestRunIdle(t *testing.T) {
	bin := buildIdle(t)
	run := func(procs int, argv ...string) Sample {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
		s, err := Run(cmd)
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		if s.Wall <= 0 || s.CPU < 0 || s.Delay < 0 {
			t.Fatalf("%v: sample %+v, want a positive wall time", argv, s)
		}
		// /proc/stat counts every CPU's time in ticks: the machine's time
		// is about NumCPU·wall, to a few ticks a CPU.
		if _, err := os.Stat("/proc/stat"); err == nil {
			if want := float64(runtime.NumCPU()) * s.Wall; s.Machine < want-0.05*float64(runtime.NumCPU()) || s.Machine > want+0.05*float64(runtime.NumCPU()) || s.Others < 0 || s.Others > s.Machine {
				t.Errorf("%v: the machine's time %.3f s, others %.3f s; want about %.3f s (NumCPU·wall) and others in [0, that]", argv, s.Machine, s.Others, want)
			}
		}
		t.Logf("GOMAXPROCS=%d %v: %+v, idle %.3f s", procs, argv[1:], s, s.Idle(procs))
		return s
	}

	// Asleep for 0.3 s on 2 processors: both idle nearly all the time. The
	// sleep lasts at least 0.3 s, so I_2 ≥ 2·0.3 s minus the processor time
	// the runtime's start-up takes, a few milliseconds.
	s := run(2, bin, "-sleep", "300ms")
	idle := s.Idle(2)
	if s.Wall < 0.3 {
		t.Errorf("a 300 ms sleep took %.3f s", s.Wall)
	}
	if idle < 0.5 || idle > 2*s.Wall {
		t.Errorf("asleep 300 ms on 2 processors: idle %.3f s (%+v), want between 0.5 s and 2·wall", idle, s)
	}

	// One goroutine busy for 0.6 s of processor time on 2 processors: the
	// other processor idles the whole run. The busy thread is running or
	// waiting for a CPU all the time, so the work (its processor time and
	// run delay) is at least T_2 less start-up and the last poll's miss;
	// the run delay of the runtime's other threads (sysmon) adds to it on
	// a busy machine, which is why the idle time is only asked to be well
	// above 0 (where it would be with both processors busy), not T_2.
	// The work is asked to be three quarters of the wall time, not all of
	// it: beside two busy loops on two CPUs, the process's start and exit
	// waited 0.13 s of a 0.83 s run that no thread's run delay counts, and
	// in another run 0.23 s of 0.91 s, which left the work 0.746 of the
	// wall time. Those waits do not grow with the run, so it spins for 600
	// ms, not 300. Both processors idle would read about 0, both busy about
	// 2·wall.
	s = run(2, bin, "-spin", "600ms")
	idle = s.Idle(2)
	if work := 2*s.Wall - idle; work < 0.6 || work < 0.75*s.Wall {
		t.Errorf("busy for 600 ms of processor time: work %.3f s (%+v), want at least 0.6 s and about the wall time", work, s)
	}
	if idle < 0.5*s.Wall {
		t.Errorf("one of 2 processors busy: idle %.3f s (%+v), want about the wall time", idle, s)
	}

	// Three goroutines busy on 3 processors, all pinned to one CPU: every
	// thread is always running or waiting for that CPU, so nothing is
	// idle, though the process used only a third of 3·T_3. Without the run
	// delay, I_3 would be about 2·T_3, so the bound is halfway, T_3: it
	// leaves room for start-up and exit, which no thread's run delay
	// counts and which count three times at 3 processors, and for polls
	// that a busy machine delays. Beside two busy loops on two CPUs, one
	// run read 0.283 s idle of a 0.539 s wall time, over a bound of half
	// the wall time.
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset to pin the program to one CPU:", err)
	}
	s = run(3, taskset, "--cpu-list", firstCPU(t), bin, "-spin", "300ms", "-goroutines", "3")
	idle = s.Idle(3)
	if s.Delay < 0.5*s.Wall {
		t.Errorf("3 busy threads on one CPU: run delay %.3f s (%+v), want about 2·wall", s.Delay, s)
	}
	if idle > s.Wall {
		t.Errorf("3 busy threads on one CPU: idle %.3f s (%+v), want about 0, under the wall time", idle, s)
	}
}

// firstCPU returns the first CPU this process may run on, for taskset.
func firstCPU(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("taskset", "--cpu-list", "--pid", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		t.Skip("taskset cannot read the CPUs of this process:", err)
	}
	// "pid 123's current affinity list: 0-3,6"
	_, list, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	first := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == '-' })
	if !ok || len(first) == 0 {
		t.Skipf("taskset's answer %q names no CPU", out)
	}
	return first[0]
}

func TestRunFailure(t *testing.T) {
	bin := buildIdle(t)
	s, err := Run(exec.Command(bin, "-sleep", "nonsense"))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("idle -sleep nonsense: error %v, want exit status 2", err)
	}
	if s.Wall <= 0 {
		t.Errorf("a failed run's sample %+v, want its wall time all the same", s)
	}
	if _, err := Run(exec.Command(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("running a missing program: no error")
	}
}
