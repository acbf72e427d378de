package shadow

import "unsafe"

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
// set with SetLimit is never reached; serial mode models it instead
// (limit.go).
//
//go:noinline
func GroupGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) {
	gid, d := gdepth()
	d |= depthOff
	site, glue := unglue(site)
	var c child
	if e := serialChild(gid, site, d); e != nil && !e.hasLimits.Load() {
		// spawnChild's serial case, and below child.end's, written out
		// (serialChild).
		c = child{e: e.spawnBeginAt(site, d), how: runSerial}
	} else {
		if e := current; e != nil && e.hasLimits.Load() {
			if e := begin(gid, site); e != nil {
				e.slotAt(unsafe.Pointer(g), d, site)
			}
		}
		c = spawnChild(gid, d, site)
	}
	switch {
	case c.inline():
		err := f()
		switch {
		case c.how != runSerial:
			if glue && err == nil {
				c.endGlue(unsafe.Pointer(g), d)
			} else {
				c.end(unsafe.Pointer(g), d)
			}
		case glue && err == nil:
			c.e.spawnEndGlueAt(unsafe.Pointer(g), d)
		default:
			c.e.spawnEndAt(unsafe.Pointer(g), d)
		}
		if err != nil {
			g.Go(func() error { return err })
		}
	case c.own():
		st := c.st
		st.fnErr, st.obj = f, unsafe.Pointer(g)
		g.Go(st.runErr)
		c.resumeAs(glue)
	default:
		g.Go(f)
	}
}

// GroupTryGo runs g.TryGo(f) at site: f runs only if the group's limit
// allows another goroutine, as with TryGo itself. The child begins once
// TryGo has said yes.
//
//go:noinline
func GroupTryGo[G any, PG ErrGroup[G]](site SiteID, g PG, f func() error) bool {
	gid, d := gdepth()
	d |= depthOff
	e, how := spawnHow(gid, site)
	switch how {
	case runSerial, runElided:
		// Inline, f runs on the caller, and the goroutine that TryGo
		// starts returns its error.
		errc := make(chan error, 1)
		if !g.TryGo(func() error { return <-errc }) {
			return false
		}
		c := beginChild(e, how, site, d, here)
		err := f()
		c.end(unsafe.Pointer(g), d)
		errc <- err
		return true
	case runParallel:
		// The goroutine that TryGo starts is the child's own, or runs f
		// as written if the child has none.
		var c child
		ready := make(chan struct{})
		ok := g.TryGo(func() error {
			<-ready
			if !c.own() {
				return f()
			}
			defer c.st.start().exit(unsafe.Pointer(g))
			return f()
		})
		if ok {
			c = beginChild(e, how, site, d, ownGoroutine)
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
	// beginWait's serial case, written out: its call cost 21 instructions
	// a node of profiled fib (BenchmarkFibAPI, callgrind). The waiting
	// value is built whole either way, so that the frame does not grow.
	w := waiting{g: gid, d: d | depthOff}
	if e := current; e != nil && e.par.on.Load() {
		w = beginWait(gid, d|depthOff)
	}
	err := g.Wait()
	if e := current; w.e == nil && e != nil && w.g == e.owner.Load() && !e.par.on.Load() {
		e.waitAt(unsafe.Pointer(g), w.d) // waiting.end's common case
	} else {
		w.end(unsafe.Pointer(g))
	}
	return err
}
