package parlib

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// A Group is a join object: a set of spawned functions that a parent waits
// for with [Group.Sync]. The zero Group is ready to use, and a Group may be
// reused after Sync returns. A Group must not be copied after first use.
//
// As with [sync.WaitGroup], a Spawn that starts a new round (when no child is
// running) must happen before the Sync that waits for it; children may spawn
// more children into the same Group.
type Group struct {
	wg sync.WaitGroup
	// panic holds the first panic recovered from a child since the last Sync.
	panic atomic.Pointer[PanicError]
}

// Spawn starts f on a new goroutine as a child of g. It returns at once; f
// runs in parallel with the caller until the caller's next [Group.Sync].
func (g *Group) Spawn(f func()) {
	spawn(g, f)
}

// Sync waits until every function spawned into g has returned. If any of
// them panicked, Sync panics with a [*PanicError] holding the first panic,
// after all of them have returned; the Group is then empty and reusable.
// Sync on a Group with no children returns at once.
func (g *Group) Sync() {
	if p := join(g); p != nil {
		// Clear the slot so a reused Group does not report a stale panic;
		// a concurrent Sync that also saw p panics with it too.
		g.panic.CompareAndSwap(p, nil)
		panic(p)
	}
}

// spawn is the only place parlib starts a goroutine: every fork in the
// package, exported or internal, comes here. It registers f as a child of g
// and runs it on a new goroutine that records a panic instead of crashing.
func spawn(g *Group, f func()) {
	g.wg.Add(1)
	go run(g, f)
}

// join is the only place parlib waits for goroutines: every sync in the
// package comes here. It waits until g has no running children and returns
// the first panic recovered from them, if any, leaving it in g.
func join(g *Group) *PanicError {
	g.wg.Wait()
	return g.panic.Load()
}

// run is the body of every goroutine that spawn starts.
func run(g *Group, f func()) {
	defer g.finish()
	f()
}

// finish ends a child: it records the child's panic, if any, then signals g.
// It must be deferred directly so that recover sees the child's panic; a
// child that calls runtime.Goexit leaves recover nil and simply ends.
func (g *Group) finish() {
	g.record(recover())
	g.wg.Done()
}

// inline runs f on the calling goroutine as one more child of g and then
// syncs g, so that a panic in f is reported the same way as one in a spawned
// child, and so that the other children are waited for even if f panics or
// calls runtime.Goexit.
func (g *Group) inline(f func()) {
	defer g.syncAfterInline()
	f()
}

// syncAfterInline is inline's deferred half; it must be deferred directly so
// that recover sees f's panic.
func (g *Group) syncAfterInline() {
	g.record(recover())
	g.Sync()
}

// record keeps r as g's panic if r is a recovered panic value and g has none
// yet. It runs while the panicking goroutine's frames are still on the stack,
// so the stack it captures shows where the panic happened.
func (g *Group) record(r any) {
	if r == nil || g.panic.Load() != nil {
		return
	}
	p, ok := r.(*PanicError)
	if !ok {
		p = &PanicError{Value: r, Stack: panicStack()}
	}
	g.panic.CompareAndSwap(nil, p)
}

// panicStack returns the calling goroutine's stack, called during a panic,
// without the frames of the recovery itself (debug.Stack, record, the
// deferred function and runtime.panic), so that it starts where the panic was
// raised. If the format is not the expected one it returns the whole stack.
func panicStack() []byte {
	s := debug.Stack()
	header, rest, ok := bytes.Cut(s, []byte("\n"))
	if !ok {
		return s
	}
	i := bytes.Index(rest, []byte("\npanic("))
	if i < 0 {
		return s
	}
	// Skip the panic frame's two lines: the call and its file:line.
	frames := rest[i+1:]
	for range 2 {
		_, frames, ok = bytes.Cut(frames, []byte("\n"))
		if !ok {
			return s
		}
	}
	return append(append(header, '\n'), frames...)
}

// A PanicError is the value a sync re-panics with when a spawned function
// panicked: the original panic value and the stack of the goroutine where the
// panic happened. The goroutine that re-panics adds its own stack to the
// crash report when the panic is not recovered.
type PanicError struct {
	// Value is the value the function passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as formatted by
	// runtime/debug.Stack, captured while the panic was being recovered.
	Stack []byte
}

// Error returns the panic value followed by the stack of the goroutine that
// panicked.
func (e *PanicError) Error() string {
	return fmt.Sprintf("parlib: spawned function panicked: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error, so that [errors.Is] and
// [errors.As] see through a PanicError, and nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// A Task is a function started by [Spawn] whose result is collected by
// [Task.Wait]: a future. Every Task must be waited for; a panic in a Task
// that is never waited for is lost.
type Task[T any] struct {
	g Group
	v T
}

// Spawn starts f on a new goroutine and returns a Task that yields its
// result. It is the one-function form of [Group.Spawn]:
//
//	x := parlib.Spawn(func() int { return fib(n - 1) })
//	y := fib(n - 2)
//	return x.Wait() + y
func Spawn[T any](f func() T) *Task[T] {
	t := new(Task[T])
	spawn(&t.g, func() { t.v = f() })
	return t
}

// Ready returns a Task that has already finished with result v, for code
// that returns a Task on some paths without starting one (a cached result,
// a base case):
//
//	if n < 2 {
//		return parlib.Ready(n)
//	}
//	return parlib.Spawn(func() int { return fib(n) })
func Ready[T any](v T) *Task[T] {
	return &Task[T]{v: v}
}

// Wait waits for the Task's function to return and returns its result. If
// the function panicked, Wait panics with a [*PanicError], every time it is
// called. Wait may be called any number of times, from any goroutine.
func (t *Task[T]) Wait() T {
	if p := join(&t.g); p != nil {
		panic(p)
	}
	return t.v
}

// Do runs the functions in parallel and returns when all have returned. The
// last function runs on the calling goroutine, the others on new goroutines.
// If any of them panics, Do panics with a [*PanicError] holding the first
// panic, after all of them have returned. Do with no functions does nothing.
func Do(fs ...func()) {
	if len(fs) == 0 {
		return
	}
	var g Group
	last := len(fs) - 1
	for _, f := range fs[:last] {
		spawn(&g, f)
	}
	g.inline(fs[last])
}
