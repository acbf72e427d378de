package shadow

import "unsafe"

// The events for hand-written instrumentation: a region measured as a call,
// a spawn whose child runs inline in every mode, a join contribution and a
// wait that the program has already performed.

// RegionBegin marks the start of a region annotation at site; regions are
// measured as invocations of their own site.
//
//go:noinline
func RegionBegin(site SiteID) {
	g, d := gdepth()
	beginCall(g, d|depthOff, site)
}

// RegionEnd marks the end of the innermost region.
//
//go:noinline
func RegionEnd() {
	g, d := gdepth()
	endCall(g, d|depthOff)
}

// SpawnBegin marks a spawn at site; the child runs next, inline.
//
// SpawnBegin and SpawnEnd are the inline form for hand-written
// instrumentation: the child always runs inline, in every mode.
//
//go:noinline
func SpawnBegin(site SiteID) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, site); e != nil {
		e.spawnBeginAt(site, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnInline(site, d)
	}
}

// SpawnEnd marks the return of the spawned child; obj is the join object its
// return signals (wg.Go, errgroup's Go), or nil.
//
//go:noinline
func SpawnEnd(obj unsafe.Pointer) {
	g, d := gdepth()
	d |= depthOff
	if e := begin(g, -1); e != nil {
		e.spawnEndAt(obj, d)
	} else if e := parEngine(); e != nil {
		e.parSpawnEnd(obj, d)
	}
}

// Done marks a contribution to join object obj (wg.Done, wg.Add(-n)).
//
//go:noinline
func Done(obj unsafe.Pointer) {
	g, d := gdepth()
	doneAt(g, d|depthOff, obj)
}

// Wait marks the return of a wait on join object obj. In parallel
// accounting the time since the goroutine's last event counts as a strand,
// the time blocked in the wait included; the helpers the rewriter calls
// (WaitGroupWait, GroupWait, ParlibGroupSync, ParlibTaskWait) read the
// measure before the wait blocks instead, so that it is no strand's.
//
//go:noinline
func Wait(obj unsafe.Pointer) {
	g, d := gdepth()
	beginWait(g, d|depthOff).end(obj)
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
	beginWait(g, d|depthOff).end(obj)
}

// Call runs an instrumented call at site. The rewriter uses CallBegin and
// CallEnd directly where a closure would cost more than the call.
func Call(site SiteID, f func()) {
	CallBegin(site)
	f()
	CallEnd()
}
