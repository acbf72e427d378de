package shadow

import (
	"sync"
	"unsafe"
)

// WaitGroupGo runs wg.Go(f) at site: f is a child whose return signals wg.
// Inline, the WaitGroup's counter is left untouched, as it is after wg.Go's
// goroutine has finished.
//
//go:noinline
func WaitGroupGo(site SiteID, wg *sync.WaitGroup, f func()) {
	g, d := gdepth()
	d |= depthOff
	site, glue := unglue(site)
	var c child
	if e := serialChild(g, site, d); e != nil {
		// spawnChild's serial case, and below child.end's, written out
		// (serialChild).
		c = child{e: e.spawnBeginAt(site, d), how: runSerial}
	} else {
		c = spawnChild(g, d, site)
	}
	switch {
	case c.inline():
		f()
		switch {
		case c.how != runSerial:
			if glue {
				c.endGlue(unsafe.Pointer(wg), d)
			} else {
				c.end(unsafe.Pointer(wg), d)
			}
		case glue:
			c.e.spawnEndGlueAt(unsafe.Pointer(wg), d)
		default:
			c.e.spawnEndAt(unsafe.Pointer(wg), d)
		}
	case c.own():
		wg.Add(1)
		st := c.st
		st.fn, st.obj = f, unsafe.Pointer(wg)
		go st.runWG()
		c.resumeAs(glue)
	default:
		wg.Go(f)
	}
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

// WaitGroupWait runs wg.Wait(), a join.
//
//go:noinline
func WaitGroupWait(wg *sync.WaitGroup) {
	g, d := gdepth()
	// beginWait's and waiting.end's common cases, written out as in
	// GroupWait.
	w := waiting{g: g, d: d | depthOff}
	if e := current; e != nil && e.par.on.Load() {
		w = beginWait(g, d|depthOff)
	}
	wg.Wait()
	if e := current; w.e == nil && e != nil && w.g == e.owner.Load() && !e.par.on.Load() {
		e.waitAt(unsafe.Pointer(wg), w.d)
	} else {
		w.end(unsafe.Pointer(wg))
	}
}
