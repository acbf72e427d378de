package shadow

import (
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// How the run ended, for the profile's Ended (docs/json-report.md): set
// once, by the first of the ways a run can end that is not its completion.
var ended atomic.Pointer[string]

func setEnded(how string) { ended.CompareAndSwap(nil, &how) }

// runEnded returns how the run ended: "completed" unless something else
// said otherwise.
func runEnded() string {
	if p := ended.Load(); p != nil {
		return *p
	}
	return "completed"
}

// catchSignals is set to "1" by spanprof run, test and build (-ldflags=-X)
// when the program imports no os/signal: the run then catches SIGINT and
// SIGTERM, writes the profile of what ran (marked "signal SIGINT") and dies
// of the signal, as the program would have. A program that handles signals
// itself is left to do so: its profile is written when it ends the way it
// chooses, and, as with Go, a deadlock while it waits for a signal is none.
var catchSignals string

// ownSignals says that os/signal's loop goroutine is spanprof's own.
var ownSignals atomic.Bool

func handleSignals() {
	if catchSignals != "1" {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	ownSignals.Store(true)
	go signalled(c)
}

// signalled waits for a signal on c, writes the profile of what ran, and
// dies of the signal.
func signalled(c chan os.Signal) {
	sig := (<-c).(syscall.Signal)
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
	setEnded("signal " + name)
	if e := current; e != nil {
		e.halt()
	}
	writeProfile()
	signal.Reset(sig)
	dieOf(sig)
}

// halt takes the engine from the program for good, so that the calling
// goroutine can end the run while the program's goroutines may still run.
//
// In parallel accounting every event takes the engine's lock, and stop
// does, after which events are ignored: nothing to do. In serial mode the
// profiled goroutine takes its events without a lock, each starting with
// tick, which, once halting is set, parks it for good (halted). halt waits
// until that goroutine is parked there or, in a stack dump taken after
// halting was set, outside the engine: then whatever it does next goes
// through tick first. A measure per thread cannot be read from another
// thread, so the run ends at that goroutine's last event.
func (e *engine) halt() {
	if e.par.on.Load() {
		return
	}
	id := goroutineID()
	stopper.Store(&id)
	e.rare.Or(rareHalting)
	for range 1000 {
		select {
		case <-parked:
		default:
			g := stack(*watched.Load(), allStacks())
			if strings.Contains(g, engineFrame) && !strings.Contains(g, haltedFrame) {
				time.Sleep(time.Millisecond) // in an event: it ends in microseconds
				continue
			}
		}
		break
	}
	if e.cfg.PerThread {
		e.freeze()
	}
}

// engineFrame starts the frame of an engine's method in a stack dump, and
// haltedFrame halted's: "github.com/spanprof/spanprof/shadow.(*engine).".
var engineFrame, haltedFrame = func() (string, string) {
	halted := runtime.FuncForPC(reflect.ValueOf((*engine).halted).Pointer()).Name()
	return strings.TrimSuffix(halted, "halted"), halted + "("
}()

// stopper is the goroutine that halted the engine, which halted lets
// through; parked is closed when the profiled goroutine parks in halted.
var (
	stopper    atomic.Pointer[string]
	parked     = make(chan struct{})
	parkedOnce atomic.Bool
)

// halted parks the calling goroutine for good unless it is the one ending
// the run (halt).
func (e *engine) halted() {
	if s := stopper.Load(); s != nil && *s == goroutineID() {
		return
	}
	if parkedOnce.CompareAndSwap(false, true) {
		close(parked)
	}
	select {}
}

// exitStatus marks a run that instrumented code ends with os.Exit(code),
// code not 0, outside a test binary (where it is the tests' verdict).
func exitStatus(code int) {
	outMu.Lock()
	test := testBinary
	outMu.Unlock()
	if code != 0 && !test {
		setEnded(fmt.Sprintf("exit %d", code))
	}
}
