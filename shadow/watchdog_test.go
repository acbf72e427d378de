package shadow

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

const stuckDump = `goroutine 1 [chan receive]:
example.com/m/q.Pop(...)
	/m/q/q.go:5
main.main.func1()
	/m/main.go:11 +0x25
github.com/spanprof/spanprof/shadow.Go(0x2, 0xc000012345)
	/cache/spanprof/runtime/shadow/emit.go:30 +0x3c
main.main()
	/m/main.go:10 +0x85

goroutine 18 [running]:
github.com/spanprof/spanprof/shadow.allStacks()
	/cache/spanprof/runtime/shadow/watchdog.go:90 +0x2e
github.com/spanprof/spanprof/shadow.watch()
	/cache/spanprof/runtime/shadow/watchdog.go:60 +0x4a
created by github.com/spanprof/spanprof/shadow.startWatchdog in goroutine 1
	/cache/spanprof/runtime/shadow/watchdog.go:55 +0x56
`

// ownDump is what the runtime's own goroutines add when spanprof catches
// signals.
const ownDump = `
goroutine 19 [syscall]:
os/signal.signal_recv()
	/go/src/runtime/sigqueue.go:152 +0x29
os/signal.loop()
	/go/src/os/signal/signal_unix.go:23 +0x13
created by os/signal.Notify.func1.1 in goroutine 1
	/go/src/os/signal/signal.go:152 +0x1f

goroutine 20 [chan receive]:
github.com/spanprof/spanprof/shadow.signalled(0xc000100000)
	/cache/spanprof/runtime/shadow/signal.go:52 +0x2e
created by github.com/spanprof/spanprof/shadow.handleSignals in goroutine 1
	/cache/spanprof/runtime/shadow/signal.go:45 +0x56
`

func TestDiagnoseFindsTheSpawn(t *testing.T) {
	d := diagnose("1", stuckDump, false)
	if d.key == "" || d.site != "/m/main.go:10" || d.state != "chan receive" {
		t.Errorf("diagnose = %+v, want the spawn at /m/main.go:10 waiting (chan receive)", d)
	}
	if strings.Contains(d.dump, "shadow.watch") || !strings.HasPrefix(d.dump, "goroutine 1 [chan receive]:\n") {
		t.Errorf("the dump to print is not the program's goroutines:\n%s", d.dump)
	}
}

// TestDiagnoseProgramDeadlock: a wait outside any inline spawn is the
// program's own deadlock, which Go would report; with spanprof's signal
// handler, os/signal's goroutine is spanprof's and no part of it.
func TestDiagnoseProgramDeadlock(t *testing.T) {
	dump := `goroutine 1 [sync.WaitGroup.Wait]:
sync.runtime_SemacquireWaitGroup(0xc000012345, 0x0)
	/go/src/runtime/sema.go:114 +0x2e
sync.(*WaitGroup).Wait(0xc000012340)
	/go/src/sync/waitgroup.go:206 +0x85
main.main()
	/m/main.go:12 +0x85

goroutine 18 [running]:
github.com/spanprof/spanprof/shadow.allStacks()
	/cache/spanprof/runtime/shadow/watchdog.go:90 +0x2e
github.com/spanprof/spanprof/shadow.watch()
	/cache/spanprof/runtime/shadow/watchdog.go:60 +0x4a
`
	for _, own := range []bool{false, true} {
		d := diagnose("1", dump+ownDump, own)
		if !own {
			if d.key != "" {
				t.Errorf("os/signal's goroutine is the program's: it may be woken by a signal, yet diagnose found %+v", d)
			}
			continue
		}
		if d.key == "" || d.site != "" {
			t.Errorf("diagnose = %+v, want the program's own deadlock", d)
		}
		if strings.Contains(d.dump, "os/signal") || strings.Contains(d.dump, "shadow.") || !strings.Contains(d.dump, "main.main()") {
			t.Errorf("the dump to print is not the program's goroutines:\n%s", d.dump)
		}
	}
}

func TestDiagnoseIsConservative(t *testing.T) {
	for name, dump := range map[string]string{
		"another goroutine sleeps":    stuckDump + "\ngoroutine 7 [sleep]:\ntime.Sleep(0x3b9aca00)\n\t/go/src/runtime/time.go:300 +0x11\n",
		"another waits on I/O":        stuckDump + "\ngoroutine 7 [IO wait]:\ninternal/poll.runtime_pollWait()\n\t/go/src/runtime/netpoll.go:351 +0x85\n",
		"another is runnable":         stuckDump + "\ngoroutine 7 [runnable]:\nmain.work()\n\t/m/main.go:30 +0x11\n",
		"another is in a system call": stuckDump + "\ngoroutine 7 [syscall]:\nsyscall.Syscall()\n\t/go/src/syscall/syscall_linux.go:73 +0x11\n",
		"the profiled goroutine runs": strings.Replace(stuckDump, "goroutine 1 [chan receive]", "goroutine 1 [runnable]", 1),
	} {
		if d := diagnose("1", dump, true); d.key != "" {
			t.Errorf("%s: found %+v", name, d)
		}
	}
	// Blocked outside a spawn: the program's own deadlock, not serial
	// mode's.
	outside := strings.Replace(strings.Replace(stuckDump, "github.com/spanprof/spanprof/shadow.Go(0x2, 0xc000012345)", "main.helper()", 1), "main.main.func1()", "main.other()", 1)
	if d := diagnose("1", outside, false); d.key == "" || d.site != "" {
		t.Errorf("blocked outside a spawn: %+v, want a deadlock of the program's", d)
	}
}

// TestPendingTimers runs a child process that checks that pendingTimers
// sees no timer while none is pending and sees one that time.AfterFunc set.
func TestPendingTimers(t *testing.T) {
	if os.Getenv("SHADOW_TIMERS_CHILD") == "1" {
		// As the watchdog does: pause (in the poller), then look.
		pause(20 * time.Millisecond)
		if n := settledTimers(); n != 0 {
			t.Fatalf("no timer: pendingTimers() = %d, want 0", n)
		}
		tm := time.AfterFunc(time.Minute, func() {})
		pause(20 * time.Millisecond)
		if n := settledTimers(); n != 1 {
			t.Fatalf("a timer in a minute: pendingTimers() = %d, want 1", n)
		}
		tm.Stop()
		return
	}
	if runtime.GOOS != "linux" || pendingTimers() < 0 {
		t.Skip("pendingTimers cannot tell here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPendingTimers$", "-test.timeout=0", "-test.v")
	cmd.Env = append(os.Environ(), "SHADOW_TIMERS_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestFlagValue(t *testing.T) {
	for args, want := range map[string]string{
		"-spanprofile=a.pb.gz -test.v": "a.pb.gz",
		"--spanprofile b.pb.gz":        "b.pb.gz",
		"-test.v -spanprofile=":        "",
		"-test.run X -spanprofile=c":   "c",
		"pkgarg -spanprofile=d":        "",
		"-test.v -- -spanprofile=e":    "",
		"-test.v=true -spanprofilex=f": "",
	} {
		if got := flagValue(strings.Fields(args), "spanprofile"); got != want {
			t.Errorf("flagValue(%q) = %q, want %q", args, got, want)
		}
	}
}

// TestEngineFrame: halt tells a goroutine in an event from one elsewhere by
// the frames of the engine's methods in its stack.
func TestEngineFrame(t *testing.T) {
	var e engine
	if g := e.stackForTest(); !strings.Contains(g, engineFrame+"stackForTest(") {
		t.Errorf("a stack dump from an engine's method does not show %q:\n%s", engineFrame, g)
	}
	if !strings.HasSuffix(haltedFrame, "shadow.(*engine).halted(") {
		t.Errorf("haltedFrame is %q", haltedFrame)
	}
}

//go:noinline
func (e *engine) stackForTest() string {
	buf := make([]byte, 1<<14)
	return string(buf[:runtime.Stack(buf, false)])
}

// TestEngineBusy: the watchdog takes a goroutine that holds the engine's
// lock in parallel accounting for one that will go on, and nothing else.
func TestEngineBusy(t *testing.T) {
	var none *engine
	if none.engineBusy() {
		t.Errorf("no engine: busy")
	}
	tab := &siteTable{}
	e := newEngine(config{Measure: &synthetic{}, MeasureName: "synthetic", Unit: "count"}, tab)
	if e.engineBusy() {
		t.Errorf("serial accounting: busy")
	}
	e.enablePar()
	if e.engineBusy() {
		t.Errorf("parallel accounting, lock free: busy")
	}
	e.par.mu.Lock()
	busy := e.engineBusy()
	e.par.mu.Unlock()
	if !busy {
		t.Errorf("parallel accounting, lock held: not busy")
	}
}
