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

// testRun is set by TestOutput: the engine is handed from test to test.
var testRun atomic.Bool

// watched is the number of the goroutine the watchdog watches: the one that
// started the run, and in a test binary each test's goroutine as it takes
// the engine over (handOver).
var watched atomic.Pointer[string]

// handOver makes the watchdog watch the calling goroutine, which has just
// taken the engine over. It runs once per test, not per event.
func handOver() {
	if id := goroutineID(); id != "" {
		watched.Store(&id)
	}
}

// In serial mode a spawned child runs inline, on its parent's goroutine.
// The rewriter keeps a spawn a goroutine when the forkjoin analyzer sees that
// it waits for its continuation, but code it cannot see (another package's
// queue with a sync.Cond inside) can still wait for something only the
// continuation would do. Then the program deadlocks: silently if other
// goroutines sleep or wait on the network, or with Go's "all goroutines are
// asleep" crash, which loses the profile.
//
// The watchdog turns that into a clear error. Every half second it looks at
// the stacks of all goroutines; when the profiled goroutine is blocked
// (channel, select, WaitGroup, mutex, Cond) inside a child that serial mode
// runs inline, and every other goroutine is blocked on such a wait too, for
// five seconds with nothing changed, nothing can ever wake them: it names
// the spawn, writes the profile of what ran, and exits with status 2. (Five
// seconds, not one look, because a goroutine in a select may be waiting on a
// timer, which a stack dump does not show.)
// A goroutine that sleeps, runs, or waits on I/O or a system call could
// still wake the others, so the watchdog then does nothing: it never stops
// a program that might go on.

const (
	watchInterval = 500 * time.Millisecond
	watchStable   = 10 // looks in a row with the same deadlock
)

// blockedStates are the goroutine states of runtime stack dumps that only
// another goroutine of the program can end.
var blockedStates = []string{
	"chan receive", "chan send", "select", "semacquire", "sync.Cond.Wait",
	"sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "sync.WaitGroup.Wait",
}

// spawnHelpers are the frames of emit.go that run a child inline.
var spawnHelpers = []string{
	"shadow.Go(", "shadow.WaitGroupGo(", "shadow.GroupGo[", "shadow.GroupTryGo[",
	"shadow.Spawn(", "shadow.ParlibGroupSpawn[", "shadow.ParlibSpawn[",
	"shadow.ParlibDo(", "shadow.parlibSplit(",
}

// startWatchdog watches the goroutine that calls it (and, in a test
// binary, the goroutines that take the engine over from it).
func startWatchdog() {
	id := goroutineID()
	if id == "" {
		return
	}
	watched.Store(&id)
	go func() {
		var last string
		same := 0
		cpu := processCPU()
		for {
			time.Sleep(watchInterval)
			// A deadlocked process uses no CPU. Dumping every goroutine's
			// stack stops the world, so do it only when the process was
			// idle since the last look: a program at work is never paused.
			now := processCPU()
			busy := now-cpu > watchInterval/20
			cpu = now
			if busy {
				same = 0
				continue
			}
			report := stuck(*watched.Load(), allStacks())
			if report == "" || report != last {
				same = 0
			} else if same++; same+1 >= watchStable {
				msg, _, _ := strings.Cut(report, "\x00")
				fmt.Fprintln(os.Stderr, msg)
				// The time spent stuck is no work: end the run at its last
				// event. The profiled goroutine is parked for good, so the
				// engine is this goroutine's now.
				if e := current; e != nil {
					e.m = frozen(e.last)
				}
				if testOutput() { // a test binary's own file, as Finish writes
					if err := Stop(); err != nil {
						fmt.Fprintln(os.Stderr, err)
					}
				}
				os.Exit(2)
			}
			last = report
		}
	}()
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

func allStacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stuck returns the one-line report of a deadlock of the goroutine id
// inside an inline child, or "" when the dump shows none. The report
// includes the blocked stacks' first lines, so that two equal reports in a
// row mean nothing moved.
func stuck(id, dump string) string {
	var owner string
	watcher := 0
	for _, g := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		num, state, ok := parseHeader(header)
		if !ok {
			return ""
		}
		if num == id {
			owner = g
		}
		if state == "running" || strings.Contains(g, "shadow.startWatchdog.func") {
			watcher++ // the goroutine taking the dump: this watchdog
			continue
		}
		if !isBlocked(state) {
			return "" // it may still wake the others
		}
	}
	if owner == "" || watcher != 1 {
		return ""
	}
	site := spawnSite(owner)
	if site == "" {
		return "" // blocked outside any inline child: the program's own wait
	}
	_, state, _ := parseHeader(owner[:strings.IndexByte(owner+"\n", '\n')])
	return fmt.Sprintf("spanprof: %s: the spawned goroutine waits (%s) for something only its continuation would do, so running it inline (serial mode) deadlocks; the profile of what ran is written; profiling this program needs -mode parallel", site, state) + "\x00" + dump
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

// spawnSite returns file:line of the innermost inline spawn in a goroutine's
// stack: the frame that called one of emit.go's spawn helpers (whose
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
