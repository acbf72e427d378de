package shadow

import "unsafe"

// The events of tests: an engine's events from a Go function that is not
// known (noDepth), which the oracle's random programs and the benchmarks
// drive, and entry points as hand-written instrumentation would call them,
// each measuring its caller's depth as generated code's do (depth.go).

func (e *engine) CallBegin(site SiteID)           { e.callBegin(site, noDepth) }
func (e *engine) CallEnd()                        { e.callEndAt(noDepth) }
func (e *engine) SpawnBegin(site SiteID)          { e.spawnBeginAt(site, noDepth) }
func (e *engine) SpawnEnd(obj unsafe.Pointer)     { e.spawnEndAt(obj, noDepth) }
func (e *engine) Done(obj unsafe.Pointer)         { e.doneAt(obj, noDepth) }
func (e *engine) Wait(obj unsafe.Pointer)         { e.waitAt(obj, noDepth) }
func (e *engine) CallEndGlue()                    { e.callEndGlueAt(noDepth) }
func (e *engine) SpawnEndGlue(obj unsafe.Pointer) { e.spawnEndGlueAt(obj, noDepth) }
func (e *engine) DoneLast(obj unsafe.Pointer)     { e.doneLastAt(obj, noDepth) }

// spawnBegin marks a spawn at site whose child runs next, inline, in every
// mode; spawnEnd marks its return, which signals obj (nil: nothing).
//
//go:noinline
func spawnBegin(site SiteID) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.spawnBeginAt(site, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnInline(site, d)
	}
}

//go:noinline
func spawnEnd(obj unsafe.Pointer) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.spawnEndAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnEnd(obj, d)
	}
}

// spawn runs f as a child at site, inline in every mode, whose return
// signals obj.
//
//go:noinline
func spawn(site SiteID, obj unsafe.Pointer, f func()) {
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

// join marks a wait on obj that the program has already performed.
//
//go:noinline
func join(obj unsafe.Pointer) {
	g, d := gdepth()
	beginWait(g, d|depthOff).end(obj)
}

// call runs f as an instrumented call at site.
func call(site SiteID, f func()) {
	CallBegin(site)
	f()
	CallEnd()
}
