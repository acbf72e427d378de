package shadow

import (
	"sync"
	"unsafe"
)

// This file holds the typed entry points that rewritten code calls, one per
// idiom, so that rewritten files need no unsafe import and each idiom's
// serial-mode semantics live in one place. Each runs a spawned child inline
// (the serial elision) between SpawnBegin and SpawnEnd and keeps the
// program's own synchronization objects in the state the original code
// would leave them in.

// Go runs the call of a `go` statement at site as a spawned child. The
// rewriter evaluates the function value and its arguments first, as the go
// statement does, and passes a closure over the results.
func Go(site SiteID, f func()) {
	current.SpawnBegin(site)
	f()
	current.SpawnEnd(nil)
}

// WaitGroupGo runs wg.Go(f) at site: f is a child whose return signals wg.
// The WaitGroup's counter is left untouched, as it is after wg.Go's goroutine
// has finished.
func WaitGroupGo(site SiteID, wg *sync.WaitGroup, f func()) {
	current.SpawnBegin(site)
	f()
	current.SpawnEnd(unsafe.Pointer(wg))
}

// WaitGroupDone runs wg.Done(), a contribution to wg.
func WaitGroupDone(wg *sync.WaitGroup) {
	current.Done(unsafe.Pointer(wg))
	wg.Done()
}

// WaitGroupAdd runs wg.Add(delta); a negative delta is a contribution.
func WaitGroupAdd(wg *sync.WaitGroup, delta int) {
	if delta < 0 {
		current.Done(unsafe.Pointer(wg))
	}
	wg.Add(delta)
}

// WaitGroupWait runs wg.Wait(), a join.
func WaitGroupWait(wg *sync.WaitGroup) {
	wg.Wait()
	current.Wait(unsafe.Pointer(wg))
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

// GroupGo runs g.Go(f) at site. The group still sees a goroutine per Go, so
// its limit (SetLimit), its first-error rule and its context cancellation
// behave as written; that goroutine only hands over the error of f, which
// runs inline first.
func GroupGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) {
	errc := make(chan error, 1)
	g.Go(func() error { return <-errc })
	current.SpawnBegin(site)
	err := f()
	current.SpawnEnd(unsafe.Pointer(g))
	errc <- err
}

// GroupTryGo runs g.TryGo(f) at site: f runs only if the group's limit
// allows another goroutine, as with TryGo itself.
func GroupTryGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) bool {
	errc := make(chan error, 1)
	if !g.TryGo(func() error { return <-errc }) {
		return false
	}
	current.SpawnBegin(site)
	err := f()
	current.SpawnEnd(unsafe.Pointer(g))
	errc <- err
	return true
}

// GroupWait runs g.Wait(), a join.
func GroupWait[G any, PG ErrGroup[G]](g PG) error {
	err := g.Wait()
	current.Wait(unsafe.Pointer(g))
	return err
}

// Spawn and Join are the entry points for any other join object (parlib's
// groups and tasks): a child at site whose return signals obj, and a wait on
// obj.
func Spawn(site SiteID, obj unsafe.Pointer, f func()) {
	current.SpawnBegin(site)
	f()
	current.SpawnEnd(obj)
}

// Join marks a wait on obj that the program has already performed.
func Join(obj unsafe.Pointer) { current.Wait(obj) }

// Call runs an instrumented call at site. The rewriter uses CallBegin and
// CallEnd directly where a closure would cost more than the call.
func Call(site SiteID, f func()) {
	current.CallBegin(site)
	f()
	current.CallEnd()
}
