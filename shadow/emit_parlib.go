package shadow

import (
	"unsafe"

	"github.com/spanprof/spanprof/parlib"
)

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
	c := spawnChild(gid, d, site)
	switch {
	case c.inline():
		f()
		c.end(unsafe.Pointer(g), d)
	case c.own():
		st := c.st
		st.fn, st.obj = f, unsafe.Pointer(g)
		g.Spawn(st.run)
		c.resume()
	default:
		g.Spawn(f)
	}
}

// ParlibGroupSync runs g.Sync(), a join.
//
//go:noinline
func ParlibGroupSync[G any, PG ParlibGroup[G]](g PG) {
	gid, d := gdepth()
	w := beginWait(gid, d|depthOff)
	if w.e != nil {
		defer w.end(unsafe.Pointer(g)) // Sync panics with a child's panic
		g.Sync()
		return
	}
	g.Sync()
	w.end(unsafe.Pointer(g))
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
	c := spawnChild(gid, d, site)
	switch {
	case c.inline():
		t := parlib.Ready(f())
		c.end(unsafe.Pointer(t), d)
		return t
	case c.own():
		// The child signals its Task, which exists once spawn returns:
		// it waits for it only at its end.
		var t *parlib.Task[T]
		ready := make(chan struct{})
		t = spawn(func() T {
			c.st.start()
			defer func() {
				<-ready
				c.st.exit(unsafe.Pointer(t))
			}()
			return f()
		})
		close(ready)
		c.resume()
		return t
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
	w := beginWait(gid, d|depthOff)
	if w.e != nil {
		defer w.end(unsafe.Pointer(t)) // Wait panics with the function's panic
		return t.Wait()
	}
	v := t.Wait()
	w.end(unsafe.Pointer(t))
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
	switch {
	case how == runAsWritten:
		do(fs...)
		return
	case how == runElided:
		for _, f := range fs {
			f()
		}
		return
	case how == runParallel && len(fs) == 0:
		return
	}
	g := new(parlib.Group)
	obj := unsafe.Pointer(g)
	last := len(fs) - 1
	for i, f := range fs {
		where := anywhere
		if i == last {
			where = here
		}
		c := beginChild(e, how, site+SiteID(i), d, where)
		switch {
		case c.inline():
			f()
			c.end(obj, d)
		case c.own():
			st := c.st
			st.fn, st.obj = f, obj
			g.Spawn(st.run)
			c.resume()
		case i == last:
			f()
		default:
			g.Spawn(f)
		}
	}
	if how == runSerial {
		e.waitAt(obj, d)
		return
	}
	before := e.beforeWait()
	defer e.parWait(obj, before, d)
	g.Sync()
}
