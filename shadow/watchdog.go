package shadow

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// watched is the number of the goroutine the watchdog watches: the one
// that holds the engine (hold.go's setHolder moves it from test to test).
var watched atomic.Pointer[string]

// watchedEngine is the engine whose lock the watchdog looks at
// (engineBusy). It is current, published for the watchdog's goroutine,
// which starts before the engine exists and has no other ordering with
// the goroutine that sets current.
var watchedEngine atomic.Pointer[engine]

// A profiled run must not hang where the program would not, nor where Go
// would have stopped it. Two deadlocks need the watchdog:
//
//   - The program's own. Go stops a program whose goroutines are all asleep
//     with "fatal error: all goroutines are asleep - deadlock!" and status 2,
//     but only when no timer is pending and no thread is in a system call:
//     a profiled run has the watchdog's own wake-ups and, where spanprof
//     catches SIGINT, os/signal's thread, so Go never would, and the run
//     would hang with no profile. The watchdog stops it as Go does, with
//     Go's message, the goroutines' stacks and status 2, and writes the
//     profile of what ran, marked "deadlock".
//
//   - Serial mode's own. A spawned child runs inline, on its parent's
//     goroutine. The rewriter keeps a spawn a goroutine when the forkjoin
//     analyzer sees that it waits for its continuation, but code it cannot
//     see (another package's queue with a sync.Cond inside) can still wait
//     for something only the continuation would do. The watchdog then names
//     the spawn, writes the profile (marked "watchdog") and exits with
//     status 2.
//
// Every tenth of a second the watchdog reads the process's CPU time; when
// it was idle, it looks at the stacks of all goroutines. They are
// deadlocked when every one of them (but the watchdog's own) waits for
// another goroutine (channel, select, WaitGroup, mutex, Cond) or for a
// timer, which a stack dump does not show. Where the system says which
// threads sleep until a timer (pendingTimers, Linux), the watchdog stops
// the run once two looks in a row find the same stacks and no timer; where
// it cannot tell, it stops only serial mode's own deadlock, after five
// seconds with nothing changed, so that a timer of up to five seconds can
// still wake the program. A goroutine that sleeps, runs, or waits on I/O
// or a system call could still wake the others, so the watchdog then does
// nothing: it never stops a program that might go on.
//
// The watchdog sleeps on a timerfd in the poller (pause), not on a Go
// timer: a timer of its own would hide whether the program has one.

const (
	watchInterval = 100 * time.Millisecond
	watchQuiet    = 2               // looks in a row with the same deadlock and no timer
	watchStable   = 5 * time.Second // the same deadlock where timers cannot be seen
)

// blockedStates are the goroutine states of runtime stack dumps that only
// another goroutine of the program (or a timer) can end.
var blockedStates = []string{
	"chan receive", "chan send", "select", "semacquire", "sync.Cond.Wait",
	"sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "sync.WaitGroup.Wait",
}

// spawnHelpers are the frames of the entry points (emit_*.go) that run a
// child inline.
var spawnHelpers = []string{
	"shadow.Go(", "shadow.WaitGroupGo(", "shadow.GroupGo[", "shadow.GroupTryGo[",
	"shadow.ParlibGroupSpawn[", "shadow.ParlibSpawn[",
	"shadow.ParlibDo(", "shadow.parlibSplit(",
}

// ownFrames mark the goroutines of the runtime itself, which are no part of
// the program: the watchdog, and the signal handler with os/signal's loop
// when spanprof installed it (signal.go).
var ownFrames = []string{"shadow.watch(", "shadow.signalled("}

// startWatchdog watches the goroutine that calls it (and, in a test
// binary, the goroutines that take the engine over from it), and catches
// SIGINT and SIGTERM where spanprof asked for that (signal.go).
func startWatchdog() {
	id := goroutineID()
	if id == "" {
		return
	}
	watched.Store(&id)
	handleSignals()
	go watch()
}

func watch() {
	var last string // the last deadlock seen, or ""
	var since time.Time
	quiet := 0
	var next time.Time // no look before then (lookBudget)
	look := func() bool {
		d := diagnose(*watched.Load(), allStacks(), ownSignals.Load())
		if d.key == "" {
			last, quiet = "", 0
			return false
		}
		if d.key != last {
			last, since, quiet = d.key, time.Now(), 0
		}
		if settledTimers() == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if quiet >= watchQuiet || (d.site != "" && time.Since(since) >= watchStable) {
			stopDeadlocked(d)
		}
		return true
	}
	cpu := processCPU()
	for {
		pause(watchInterval)
		// A deadlocked process uses no CPU. Dumping every goroutine's
		// stack stops the world, so do it only when the process was
		// idle since the last look: a program at work is never paused.
		// The look's own work is not the program's.
		//
		// A process can also sit idle because other processes took its
		// CPUs, and then a look is all cost: on a 2-core VM with a load
		// of 11, parallel quicksort used no CPU for 100 ms while the
		// thread holding the engine's lock waited for a CPU, with 21,800
		// goroutines parked on the lock, and the look took 0.97 s of
		// CPU; such looks were 20% of the run's CPU time. So there is no
		// look while a goroutine holds the engine's lock (engineBusy),
		// and after a look that found the program able to go on, none
		// for lookBudget times the CPU time it took.
		now := processCPU()
		if now-cpu > watchInterval/20 || time.Now().Before(next) || watchedEngine.Load().engineBusy() {
			last, quiet = "", 0
		} else if !look() {
			next = time.Now().Add(lookBudget * (processCPU() - now))
		}
		cpu = processCPU()
	}
}

// lookBudget bounds the CPU time of the looks that find no deadlock to
// about 1/lookBudget of the run's time. A look at a few hundred goroutines
// takes a millisecond or so, and delays the next by a fraction of a
// second; one at tens of thousands, a second, and delays it by 20.
const lookBudget = 20

// engineBusy reports whether a goroutine is in an event of parallel
// accounting, holding the engine's lock: it runs or waits for a CPU, and
// will release it, so the program is not deadlocked. e may be nil.
func (e *engine) engineBusy() bool {
	if e == nil || !e.par.on.Load() {
		return false
	}
	if e.par.mu.TryLock() {
		e.par.mu.Unlock()
		return false
	}
	return true
}

// A deadlock is what diagnose finds in a stack dump.
type deadlock struct {
	key   string // the blocked stacks' first lines: equal keys in a row mean nothing moved
	site  string // the inline spawn the watched goroutine waits in, or ""
	state string // the watched goroutine's state
	dump  string // the program's goroutines, as Go prints them
}

// diagnose returns the deadlock that dump shows, with watched the goroutine
// the engine follows; key is "" when some goroutine of the program may still
// go on. With ownSignals the goroutine of os/signal's loop is spanprof's.
func diagnose(watched, dump string, ownSignals bool) deadlock {
	var d deadlock
	var owner string
	var keys, program []string
	for _, g := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		num, state, ok := parseHeader(header)
		if !ok {
			return deadlock{}
		}
		if containsAny(g, ownFrames) || ownSignals && isSignalLoop(g) {
			continue
		}
		if !isBlocked(state) {
			return deadlock{} // it may still wake the others
		}
		if num == watched {
			owner, d.state = g, state
		}
		program = append(program, g)
		keys = append(keys, header+"\n"+firstFrame(g))
	}
	if len(program) == 0 {
		return deadlock{}
	}
	if owner != "" {
		d.site = spawnSite(owner)
	}
	d.key = strings.Join(keys, "\n")
	d.dump = strings.Join(program, "\n\n") + "\n"
	return d
}

// stopDeadlocked ends a deadlocked run: it prints what Go would (or names the
// inline spawn), writes the profile of what ran, and exits with status 2.
func stopDeadlocked(d deadlock) {
	if d.site != "" {
		setEnded("watchdog")
		fmt.Fprintf(os.Stderr, "spanprof: %s: the spawned goroutine waits (%s) for something only its continuation would do, so running it inline (serial mode) deadlocks; the profile of what ran is written; profiling this program needs -mode parallel\n", d.site, d.state)
	} else {
		setEnded("deadlock")
		fmt.Fprintf(os.Stderr, "fatal error: all goroutines are asleep - deadlock!\n\n%s", d.dump)
	}
	// The time spent stuck is no work: end the run at its last event.
	// Every goroutine is parked for good, so the engine is this one's.
	if e := current; e != nil {
		e.freeze()
	}
	writeProfile()
	os.Exit(2)
}

// writeProfile writes the profile of the run as Finish does (a test binary
// writes its own file, or none), reporting a failure on stderr.
func writeProfile() {
	if current != nil && testOutput() {
		if err := stopAndWrite(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// freeze makes every goroutine's measure stand still at its last event.
func (e *engine) freeze() {
	e.m = frozen(e.cur.last)
	for _, st := range e.allG {
		st.m = frozen(st.last)
	}
}

// frozen is a measure that no longer advances.
type frozen uint64

func (f frozen) Read() uint64 { return uint64(f) }

// goroutineID returns the calling goroutine's number from its stack header.
func goroutineID() string {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(b, ' '); i > 0 {
		return string(b[:i])
	}
	return ""
}

// allStacks returns the stacks of all goroutines, as a stack dump shows
// them. Each try stops the world, so the first is sized for the goroutines there
// are (a few hundred bytes each in a fork/join program) rather than grown
// from a small buffer by doubling: parallel mode can have a hundred
// thousand goroutines blocked in waits, and a dozen dumps of them took
// seconds.
func allStacks() string {
	buf := make([]byte, max(1<<16, 1024*runtime.NumGoroutine()))
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stack returns the stack of goroutine id in dump, or "".
func stack(id, dump string) string {
	for _, g := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		if strings.HasPrefix(g, "goroutine "+id+" [") {
			return g
		}
	}
	return ""
}

// parseHeader splits "goroutine 7 [chan receive, 2 minutes]:" into its
// number and state.
func parseHeader(h string) (num, state string, ok bool) {
	h, ok = strings.CutPrefix(h, "goroutine ")
	if !ok {
		return "", "", false
	}
	num, rest, ok := strings.Cut(h, " [")
	if !ok {
		return "", "", false
	}
	state, _, ok = strings.Cut(rest, "]")
	state, _, _ = strings.Cut(state, ",")
	if _, err := strconv.Atoi(num); err != nil {
		return "", "", false
	}
	return num, state, ok
}

func isBlocked(state string) bool {
	for _, s := range blockedStates {
		if strings.HasPrefix(state, s) {
			return true
		}
	}
	return false
}

// isSignalLoop reports whether goroutine g is os/signal's loop, which waits
// for signals in a system call.
func isSignalLoop(g string) bool {
	return strings.Contains(g, "os/signal.signal_recv") || strings.Contains(g, "os/signal.loop(")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// firstFrame returns the first frame line of goroutine g's stack.
func firstFrame(g string) string {
	_, rest, _ := strings.Cut(g, "\n")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// spawnSite returns file:line of the innermost inline spawn in a goroutine's
// stack: the frame that called one of the spawn helpers (whose
// position the rewriter's //line directives map to the user's source).
func spawnSite(g string) string {
	lines := strings.Split(g, "\n")
	for i := 1; i+3 < len(lines); i += 2 {
		for _, h := range spawnHelpers {
			if strings.Contains(lines[i], h) {
				file := strings.TrimSpace(lines[i+3])
				if j := strings.LastIndex(file, " +0x"); j > 0 {
					file = file[:j]
				}
				return file
			}
		}
	}
	return ""
}
