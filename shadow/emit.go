package shadow

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/spanprof/spanprof/parlib"
)

// This file holds the typed entry points that rewritten code calls, one per
// idiom, so that rewritten files need no unsafe import and each idiom's
// serial-mode semantics live in one place. Each runs a spawned child inline
// (the serial elision) between SpawnBegin and SpawnEnd and keeps the
// program's own synchronization objects in the state the original code
// would leave them in.

// How a spawn runs, decided by spawnHow for the calling goroutine.
const (
	runAsWritten = iota // no run, or a goroutine the run does not profile: what the program did
	runElided           // elision mode: a plain call, no events
	runSerial           // serial mode: inline, on the engine's unlocked path
	runParallel         // parallel accounting: the caller takes the locked path (parSpawn)
)

// elision is set by Start in elision mode: every spawn runs as a plain call
// and nothing is measured, so that the cost of the serial elision itself can
// be timed with the same binary.
var elision bool

// spawnHow returns how a spawn at site runs on goroutine g, the calling
// one. A spawn at a Goroutine site in serial mode turns parallel accounting
// on.
func spawnHow(g uintptr, site SiteID) (*Engine, int) {
	if e := begin(g, site); e != nil {
		if int(site) >= len(e.goSite) {
			e.growSites()
		}
		if int(site) >= len(e.goSite) || !e.goSite[site] {
			return e, runSerial
		}
		e.enablePar()
		return e, runParallel
	}
	if e := parEngine(); e != nil {
		return e, runParallel
	}
	if elision && current == nil && !registry.goroutine(site) {
		return nil, runElided
	}
	return nil, runAsWritten
}

// Every entry point that rewritten code calls is a real function, never
// inlined, that first measures the depth of its caller, the function that
// makes the event (depth.go).

// Go runs the call of a `go` statement at site as a spawned child. The
// rewriter evaluates the function value and its arguments first, as the go
// statement does, and passes a closure over the results.
//
//go:noinline
func Go(site SiteID, f func()) {
	g, d := gdepth()
	d |= depthOff
	e, how := spawnHow(g, site)
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
		f()
		e.spawnEndAt(nil, d)
		return
	case runElided:
		f()
		return
	case runParallel:
		if c, inline := e.parSpawn(site, false, d); c != nil {
			p := c.parent
			go func() {
				e.startG(c)
				defer e.endG(c, nil)
				f()
			}()
			e.resume(p)
			return
		} else if inline {
			f()
			e.parSpawnEnd(nil, d)
			return
		}
	}
	go f() // not the profiled goroutine (gate.go): what the program did
}

// WaitGroupGo runs wg.Go(f) at site: f is a child whose return signals wg.
// Inline, the WaitGroup's counter is left untouched, as it is after wg.Go's
// goroutine has finished.
//
//go:noinline
func WaitGroupGo(site SiteID, wg *sync.WaitGroup, f func()) {
	g, d := gdepth()
	d |= depthOff
	e, how := spawnHow(g, site)
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
		f()
		e.spawnEndAt(unsafe.Pointer(wg), d)
		return
	case runElided:
		f()
		return
	case runParallel:
		if c, inline := e.parSpawn(site, false, d); c != nil {
			p := c.parent
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.startG(c)
				defer e.endG(c, unsafe.Pointer(wg)) // before Done: the wait must find it
				f()
			}()
			e.resume(p)
			return
		} else if inline {
			f()
			e.parSpawnEnd(unsafe.Pointer(wg), d)
			return
		}
	}
	wg.Go(f)
}

// WaitGroupDone runs wg.Done(), a contribution to wg.
//
//go:noinline
func WaitGroupDone(wg *sync.WaitGroup) {
	g, d := gdepth()
	doneAt(g, d|depthOff, unsafe.Pointer(wg))
	wg.Done()
}

// WaitGroupAdd runs wg.Add(delta); a negative delta is a contribution.
//
//go:noinline
func WaitGroupAdd(wg *sync.WaitGroup, delta int) {
	if delta < 0 {
		g, d := gdepth()
		doneAt(g, d|depthOff, unsafe.Pointer(wg))
	}
	wg.Add(delta)
}

// doneAt takes a contribution to obj from goroutine g at depth d.
func doneAt(g, d uintptr, obj unsafe.Pointer) {
	if e := begin(g, -1); e != nil {
		e.doneAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parDone(obj, d)
	}
}

// WaitGroupWait runs wg.Wait(), a join.
//
//go:noinline
func WaitGroupWait(wg *sync.WaitGroup) {
	g, d := gdepth()
	d |= depthOff
	if e := parEngine(); e != nil {
		before := e.beforeWait()
		wg.Wait()
		e.parWait(unsafe.Pointer(wg), before, d)
		return
	}
	wg.Wait()
	if e := begin(g, -1); e != nil {
		e.waitAt(unsafe.Pointer(wg), d)
	}
}

// ErrGroup is what GroupGo, GroupTryGo and GroupWait need of a group:
// golang.org/x/sync/errgroup.Group's methods. It is a constraint, not an
// import, so profiled modules inherit no dependency from the runtime.
type ErrGroup[G any] interface {
	*G
	Go(func() error)
	TryGo(func() error) bool
	Wait() error
}

// GroupGo runs g.Go(f) at site. Inline, f runs on the caller and only an
// error goes to the group, through a goroutine that returns it, so the
// group's first-error rule and its context's cancellation behave as
// written. A goroutine per Go would charge the run for starting and
// scheduling goroutines the program, run serially, does not have (and the
// first subtree for creating them, the later ones only for reusing them).
// While f runs inline no other child of the group is running, so a limit
// set with SetLimit is never reached.
//
//go:noinline
func GroupGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
		err := f()
		e.spawnEndAt(unsafe.Pointer(g), d)
		if err != nil {
			g.Go(func() error { return err })
		}
		return
	case runElided:
		if err := f(); err != nil {
			g.Go(func() error { return err })
		}
		return
	case runParallel:
		if c, inline := e.parSpawn(site, false, d); c != nil {
			p := c.parent
			g.Go(func() error {
				e.startG(c)
				defer e.endG(c, unsafe.Pointer(g))
				return f()
			})
			e.resume(p)
			return
		} else if inline {
			err := f()
			e.parSpawnEnd(unsafe.Pointer(g), d)
			if err != nil {
				g.Go(func() error { return err })
			}
			return
		}
	}
	g.Go(f)
}

// GroupTryGo runs g.TryGo(f) at site: f runs only if the group's limit
// allows another goroutine, as with TryGo itself.
//
//go:noinline
func GroupTryGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) bool {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial, runElided:
		errc := make(chan error, 1)
		if !g.TryGo(func() error { return <-errc }) {
			return false
		}
		if how == runSerial {
			e.spawnBeginAt(site, d)
		}
		err := f()
		if how == runSerial {
			e.spawnEndAt(unsafe.Pointer(g), d)
		}
		errc <- err
		return true
	case runParallel:
		// The child's state is made once TryGo has said yes, and handed
		// to the goroutine TryGo starts.
		var c *gstate
		ready := make(chan struct{})
		ok := g.TryGo(func() error {
			<-ready
			if c == nil {
				return f()
			}
			e.startG(c)
			defer e.endG(c, unsafe.Pointer(g))
			return f()
		})
		if ok {
			c, _ = e.parSpawn(site, true, d)
		}
		close(ready)
		return ok
	}
	return g.TryGo(f)
}

// GroupWait runs g.Wait(), a join.
//
//go:noinline
func GroupWait[G any, PG ErrGroup[G]](g PG) error {
	gid, d := gdepth()
	d |= depthOff
	if e := parEngine(); e != nil {
		before := e.beforeWait()
		err := g.Wait()
		e.parWait(unsafe.Pointer(g), before, d)
		return err
	}
	err := g.Wait()
	if e := begin(gid, -1); e != nil {
		e.waitAt(unsafe.Pointer(g), d)
	}
	return err
}

// Spawn and Join are the entry points for any other join object: a child at
// site, run inline in every mode, whose return signals obj, and a wait on
// obj.
//
//go:noinline
func Spawn(site SiteID, obj unsafe.Pointer, f func()) {
	gid, d := gdepth()
	d |= depthOff
	if e := begin(gid, -1); e != nil {
		e.spawnBeginAt(site, d)
		f()
		e.spawnEndAt(obj, d)
		return
	}
	if e := parEngine(); e != nil && e.parSpawnInline(site, d) {
		f()
		e.parSpawnEnd(obj, d)
		return
	}
	f()
}

// Join marks a wait on obj that the program has already performed.
//
//go:noinline
func Join(obj unsafe.Pointer) {
	g, d := gdepth()
	waitAt(g, d|depthOff, obj)
}

// Call runs an instrumented call at site. The rewriter uses CallBegin and
// CallEnd directly where a closure would cost more than the call.
func Call(site SiteID, f func()) {
	CallBegin(site)
	f()
	CallEnd()
}

// The helpers below are for code that spanprof's rewriter generates: starting
// and ending the run from instrumented packages and test binaries, calls in
// expressions, os.Exit, and parlib's spawns, syncs and loops.

// Defaults for the run's options where the environment sets none; `spanprof
// build` sets them with -ldflags=-X so that a built binary profiles with the
// flags it was built with.
var (
	defaultMode    string
	defaultMeasure string
	defaultBurden  string
)

// StartIfNeeded starts a run from the environment, as StartFromEnv does,
// unless one is running. Every instrumented package calls it (through Init)
// before its first event can happen, so a run covers package initialization
// too, whichever instrumented package the program initializes first.
func StartIfNeeded() {
	startMu.Lock()
	running := current != nil || elision
	startMu.Unlock()
	if running || !requested() {
		return
	}
	o, err := OptionsFromEnv()
	if err == nil {
		err = Start(o)
	}
	if err != nil && Current() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// Init registers an instrumented package's static site table and returns
// the ID of its first site, starting the run first if needed. Generated code
// calls it from the initializer of the package's site-table variable, which
// Go initializes before any package-level variable whose initialization
// runs instrumented code.
func Init(sites []SiteInfo) SiteID {
	StartIfNeeded()
	return Register(sites)
}

// A test binary's profile goes where its -spanprofile flag says (test), or
// else to testDefault, or else to $SPANPROF_OUT; with none of them the run
// writes nothing.
var (
	outMu       sync.Mutex
	testBinary  bool
	testFlag    *string
	testDefault string
)

// TestOutput makes Finish write the profile of a test binary to *flag, read
// when the profile is written (after the test flags are parsed), or to def
// when the flag is empty, or to $SPANPROF_OUT; with none, Finish writes
// nothing, so that a plain `go test` of rewritten code leaves no file.
func TestOutput(flag *string, def string) {
	outMu.Lock()
	defer outMu.Unlock()
	testBinary, testFlag, testDefault = true, flag, def
	// Tests run on goroutines of their own, one at a time, and take the
	// engine where they start (hold.go).
	startMu.Lock()
	e := current
	startMu.Unlock()
	// Serial mode profiles one goroutine at a time, so parallel tests run
	// one at a time, unless -test.parallel says otherwise; a test binary
	// that is not profiled runs them as written.
	if e != nil {
		oneTestAtATime()
	}
}

// Finish ends the run and writes the profile (see TestOutput for test
// binaries). Only the first call writes; it is safe in a deferred call while
// a panic unwinds. Rewritten main functions defer it; generated TestMain
// functions call it after the tests have run.
func Finish() {
	if panicking() {
		setEnded("panic")
	}
	startMu.Lock()
	running := current != nil
	startMu.Unlock()
	if !running || !testOutput() {
		return
	}
	StopOrExit()
}

// panicking reports whether the caller, deferred, runs while a panic
// unwinds: runtime.gopanic calls the deferred functions. It walks the
// stack once, at the end of the run.
func panicking() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if f.Function == "runtime.gopanic" {
			return true
		}
		if !more {
			return false
		}
	}
}

// testOutput points a test binary's run at its profile file (see
// TestOutput) and reports whether there is one to write; elsewhere the
// options already name it.
func testOutput() bool {
	outMu.Lock()
	defer outMu.Unlock()
	if !testBinary {
		return true
	}
	out := testDefault
	if testFlag != nil && *testFlag != "" {
		out = *testFlag
	}
	if out == "" {
		out = os.Getenv(EnvOut)
	}
	if out == "" {
		return false
	}
	startMu.Lock()
	runOpts.Out = out
	startMu.Unlock()
	return true
}

// BeforeExit writes the profile as Finish does and returns code:
// instrumented code calls os.Exit(BeforeExit(code)), so that a program that
// exits that way still leaves its profile.
func BeforeExit(code int) int {
	exitStatus(code)
	Finish()
	return code
}

// Entered is the token that Enter returns and Leave takes, so that a call in
// an expression can be instrumented in place: Leave(Enter(site), f(x)).
// Go makes the calls of an expression in lexical left-to-right order, so
// Enter runs before f's arguments are evaluated and before f, and Leave
// after f returns. The rewriter uses this form only where evaluating f and
// its arguments makes no calls and no receives: any it made would run
// after Enter, inside the invocation of site, where the program makes them
// in the caller. Where they make some it uses EnterAfter and Leave1.
type Entered struct{ e *Engine }

// Enter marks the start of an instrumented call at site (CallBegin).
//
//go:noinline
func Enter(site SiteID) Entered {
	gid, d := gdepth()
	d |= depthOff
	if e := begin(gid, site); e != nil {
		e.callBegin(site, d)
		return Entered{e}
	}
	if e := parEngine(); e != nil {
		e.parCallBegin(site, d)
		return Entered{e}
	}
	return Entered{}
}

// Leave marks the return of the innermost instrumented call (CallEnd), if
// its Enter was taken, and returns the call's result.
//
//go:noinline
func Leave[T any](t Entered, v T) T {
	if t.e != nil {
		g, d := gdepth()
		d |= depthOff
		if e := begin(g, -1); e != nil {
			e.callEndAt(d)
		} else if e := parEngine(); e != nil {
			e.parCallEnd(d)
		}
	}
	return v
}

// EnterAfter marks the start of an instrumented call at site (CallBegin)
// and returns v. The rewriter wraps the last call or receive that
// evaluating the called function and its arguments makes (or an && or ||
// that ends with one), so that the invocation starts after every one of
// them and right before the call, as in the program, where the caller
// evaluates them:
//
//	Leave1(f(a, EnterAfter(g(), site), b))
//
// What follows the wrapped expression makes no call and no receive, so its
// evaluation can come after the start without moving any event. The
// rewriter never wraps an operand that may not be evaluated (the right
// side of && or ||): the begin that Leave1, LeaveN or CallEnd ends is
// always made.
//
//go:noinline
func EnterAfter[T any](v T, site SiteID) T {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.callBegin(site, d)
	} else if e := parEngine(); e != nil {
		e.parCallBegin(site, d)
	}
	return v
}

// Leave1 marks the return of an instrumented call whose start is an
// EnterAfter in its arguments (CallEnd), and returns the call's result.
// It needs no token: the EnterAfter it ends ran on the same goroutine,
// right before the call, and an end whose begin was ignored (another
// goroutine, no run) is ignored too (gate.go), as Leave2 to Leave4 rely on.
//
//go:noinline
func Leave1[T any](v T) T {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
	return v
}

// Leave2, Leave3 and Leave4 mark the return of an instrumented call with
// that many results, passed through: return Leave2(f(x)) after a CallBegin
// statement, or return Leave2(f(EnterAfter(g(), site))).
//
//go:noinline
func Leave2[A, B any](a A, b B) (A, B) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
	return a, b
}

// Leave3 is Leave2 for three results.
//
//go:noinline
func Leave3[A, B, C any](a A, b B, c C) (A, B, C) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(d)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(d)
	}
	return a, b, c
}

// Leave4 is Leave2 for four results.
//
//go:noinline
func Leave4[A, B, C, D any](a A, b B, c C, d D) (A, B, C, D) {
	g, dep := gdepth()
	dep |= depthOff
	if e := begin(g, -1); e != nil {
		e.callEndAt(dep)
	} else if e := parEngine(); e != nil {
		e.parCallEnd(dep)
	}
	return a, b, c, d
}

// ParlibGroup is what the parlib helpers need of a parlib.Group. Like
// ErrGroup it is a constraint, not an import.
type ParlibGroup[G any] interface {
	*G
	Spawn(func())
	Sync()
}

// ParlibGroupSpawn runs g.Spawn(f) at site: f is a child whose return
// signals g. Inline, g is left untouched, as it is once a spawned child has
// returned, and a panic in f propagates at once rather than at the Sync.
//
//go:noinline
func ParlibGroupSpawn[G any, PG ParlibGroup[G]](site SiteID, g PG, f func()) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
		f()
		e.spawnEndAt(unsafe.Pointer(g), d)
		return
	case runElided:
		f()
		return
	case runParallel:
		if c, inline := e.parSpawn(site, false, d); c != nil {
			p := c.parent
			g.Spawn(func() {
				e.startG(c)
				defer e.endG(c, unsafe.Pointer(g))
				f()
			})
			e.resume(p)
			return
		} else if inline {
			f()
			e.parSpawnEnd(unsafe.Pointer(g), d)
			return
		}
	}
	g.Spawn(f)
}

// ParlibGroupSync runs g.Sync(), a join.
//
//go:noinline
func ParlibGroupSync[G any, PG ParlibGroup[G]](g PG) {
	gid, d := gdepth()
	d |= depthOff
	if e := parEngine(); e != nil {
		before := e.beforeWait()
		defer e.parWait(unsafe.Pointer(g), before, d) // Sync panics with a child's panic
		g.Sync()
		return
	}
	g.Sync()
	if e := begin(gid, -1); e != nil {
		e.waitAt(unsafe.Pointer(g), d)
	}
}

// ParlibSpawn runs parlib.Spawn(f) at site; spawn is parlib.Spawn itself.
// Inline, f runs on the caller and the program gets a Task that has already
// finished with f's result (parlib.Ready), whose return signals the Task: no
// goroutine is started, so the run is not charged for one the serial
// program lacks.
//
//go:noinline
func ParlibSpawn[T any](site SiteID, spawn func(func() T) *parlib.Task[T], f func() T) *parlib.Task[T] {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial:
		e.spawnBeginAt(site, d)
		t := parlib.Ready(f())
		e.spawnEndAt(unsafe.Pointer(t), d)
		return t
	case runElided:
		return parlib.Ready(f())
	case runParallel:
		if c, inline := e.parSpawn(site, false, d); c != nil {
			// The child signals its Task, which exists once spawn
			// returns: it waits for it only at its end.
			var t *parlib.Task[T]
			p := c.parent
			ready := make(chan struct{})
			t = spawn(func() T {
				e.startG(c)
				defer func() {
					<-ready
					e.endG(c, unsafe.Pointer(t))
				}()
				return f()
			})
			close(ready)
			e.resume(p)
			return t
		} else if inline {
			t := parlib.Ready(f())
			e.parSpawnEnd(unsafe.Pointer(t), d)
			return t
		}
	}
	return spawn(f)
}

// ParlibTaskWait runs t.Wait(), a join on the Task.
//
//go:noinline
func ParlibTaskWait[T, Task any, PT interface {
	*Task
	Wait() T
}](t PT) T {
	gid, d := gdepth()
	d |= depthOff
	if e := parEngine(); e != nil {
		before := e.beforeWait()
		defer e.parWait(unsafe.Pointer(t), before, d)
		return t.Wait()
	}
	v := t.Wait()
	if e := begin(gid, -1); e != nil {
		e.waitAt(unsafe.Pointer(t), d)
	}
	return v
}

// ParlibDo runs parlib.Do(fs...): fs[i] is a child at site+i whose return
// signals the call's own join object, and the call waits for them all. do
// is parlib.Do itself, which rewritten code names so that the program's
// import of parlib stays used; the profiled paths build the same DAG
// themselves: in parallel, every function but the last on a goroutine of a
// parlib.Group and the last inline, as parlib.Do runs them.
//
//go:noinline
func ParlibDo(site SiteID, do func(...func()), fs ...func()) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial:
		obj := unsafe.Pointer(new(byte))
		for i, f := range fs {
			e.spawnBeginAt(site+SiteID(i), d)
			f()
			e.spawnEndAt(obj, d)
		}
		e.waitAt(obj, d)
		return
	case runElided:
		for _, f := range fs {
			f()
		}
		return
	case runParallel:
		if len(fs) == 0 {
			return
		}
		var g parlib.Group
		obj := unsafe.Pointer(&g)
		last := len(fs) - 1
		for i, f := range fs[:last] {
			c, inline := e.parSpawn(site+SiteID(i), false, d)
			switch {
			case c != nil:
				p := c.parent
				g.Spawn(func() {
					e.startG(c)
					defer e.endG(c, obj)
					f()
				})
				e.resume(p)
			case inline:
				f()
				e.parSpawnEnd(obj, d)
			default:
				g.Spawn(f)
			}
		}
		if e.parSpawnInline(site+SiteID(last), d) {
			fs[last]()
			e.parSpawnEnd(obj, d)
		} else {
			fs[last]()
		}
		before := e.beforeWait()
		defer e.parWait(obj, before, d)
		g.Sync()
		return
	}
	do(fs...)
}

// ParlibFor runs parlib.For(lo, hi, grain, body) at site; pfor is
// parlib.For (see ParlibDo).
//
//go:noinline
func ParlibFor(site SiteID, pfor func(lo, hi, grain int, body func(i int)), lo, hi, grain int, body func(i int)) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	if how == runAsWritten {
		pfor(lo, hi, grain, body)
		return
	}
	parlibRange(e, how, site, d, lo, hi, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body(i)
		}
	})
}

// ParlibForEach runs parlib.ForEach(s, grain, body) at site; forEach is
// parlib.ForEach (see ParlibDo).
//
//go:noinline
func ParlibForEach[T any](site SiteID, forEach func(s []T, grain int, body func(i int, v *T)), s []T, grain int, body func(i int, v *T)) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	if how == runAsWritten {
		forEach(s, grain, body)
		return
	}
	parlibRange(e, how, site, d, 0, len(s), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body(i, &s[i])
		}
	})
}

// ParlibForRange runs parlib.ForRange(lo, hi, grain, body) at site;
// forRange is parlib.ForRange (see ParlibDo). It splits the range as parlib
// does (the same grain, the upper half spawned and the lower half
// continued, down to pieces of at most grain indices), so the DAG is the one
// the program builds, with every piece run inline in serial mode and every
// upper half on a goroutine of a parlib.Group in parallel mode.
//
//go:noinline
func ParlibForRange(site SiteID, forRange func(lo, hi, grain int, body func(lo, hi int)), lo, hi, grain int, body func(lo, hi int)) {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	if how == runAsWritten {
		forRange(lo, hi, grain, body)
		return
	}
	parlibRange(e, how, site, d, lo, hi, grain, body)
}

func parlibRange(e *Engine, how int, site SiteID, d uintptr, lo, hi, grain int, body func(lo, hi int)) {
	if hi <= lo {
		return
	}
	n := uint(hi) - uint(lo)
	g := uint(grain)
	if grain <= 0 {
		g = max(1, n/(8*uint(runtime.GOMAXPROCS(0))))
	}
	// The whole loop is also one invocation of site, around the splits and
	// the sync. parlib's halves all join one flat group, so the critical
	// path through a piece spawned deep in the recursion leaves every
	// enclosing half before that half ends: by the rule that counts on the
	// span the invocations whose end is on the path, no spawn of the loop
	// would ever be on the span, though its pieces are. The invocation
	// around the loop ends after its sync, so it is on the span exactly when
	// the loop is, with the loop's work and span; the halves fold into it as
	// recursion.
	switch how {
	case runElided:
		body(lo, hi)
	case runSerial:
		obj := unsafe.Pointer(new(byte))
		e.callBegin(site, d)
		parlibSplit(e, site, d, obj, lo, hi, g, body)
		e.waitAt(obj, d)
		e.callEndAt(d)
	case runParallel:
		var pg parlib.Group
		obj := unsafe.Pointer(&pg)
		e.parCallBegin(site, d)
		defer e.parCallEnd(d)
		parlibSplitPar(e, &pg, site, d, lo, hi, g, body)
		before := e.beforeWait()
		defer e.parWait(obj, before, d)
		pg.Sync()
	}
}

func parlibSplit(e *Engine, site SiteID, d uintptr, obj unsafe.Pointer, lo, hi int, grain uint, body func(lo, hi int)) {
	for n := uint(hi) - uint(lo); n > grain; n = uint(hi) - uint(lo) {
		mid := lo + int(n/2)
		e.spawnBeginAt(site, d)
		parlibSplit(e, site, d, obj, mid, hi, grain, body)
		e.spawnEndAt(obj, d)
		hi = mid
	}
	body(lo, hi)
}

// parlibSplitPar is parlibSplit in parallel accounting: an upper half runs
// on a goroutine of pg when parallel mode says so, else inline.
func parlibSplitPar(e *Engine, pg *parlib.Group, site SiteID, d uintptr, lo, hi int, grain uint, body func(lo, hi int)) {
	obj := unsafe.Pointer(pg)
	for n := uint(hi) - uint(lo); n > grain; n = uint(hi) - uint(lo) {
		mid, top := lo+int(n/2), hi
		c, inline := e.parSpawn(site, false, d)
		switch {
		case c != nil:
			p := c.parent
			pg.Spawn(func() {
				e.startG(c)
				defer e.endG(c, obj)
				// Another goroutine's stack: the depth of the
				// loop's caller means nothing there.
				parlibSplitPar(e, pg, site, noDepth, mid, top, grain, body)
			})
			e.resume(p)
		case inline:
			parlibSplitPar(e, pg, site, d, mid, top, grain, body)
			e.parSpawnEnd(obj, d)
		default:
			pg.Spawn(func() { parlibSplitPar(e, pg, site, noDepth, mid, top, grain, body) })
		}
		hi = mid
	}
	body(lo, hi)
}
