package shadow

import (
	"runtime"
	"unsafe"

	"github.com/spanprof/spanprof/parlib"
)

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

// parlibRange runs a parallel loop over [lo, hi) at site, as spawnHow said,
// for the function at depth d.
func parlibRange(e *engine, how runHow, site SiteID, d uintptr, lo, hi, grain int, body func(lo, hi int)) {
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
		pg := new(parlib.Group)
		e.callBegin(site, d)
		parlibSplit(e, how, pg, site, d, lo, hi, g, body)
		e.waitAt(unsafe.Pointer(pg), d)
		e.callEndAt(d)
	case runParallel:
		var pg parlib.Group
		e.parCallBegin(site, d)
		defer e.parCallEnd(d)
		parlibSplit(e, how, &pg, site, d, lo, hi, g, body)
		before := e.beforeWait()
		defer e.parWait(unsafe.Pointer(&pg), before, d)
		pg.Sync()
	}
}

// parlibSplit splits [lo, hi) as parlib does: each upper half is a child at
// site whose return signals pg, the lower half continues, and a piece of at
// most grain indices runs body. A half that runs on a goroutine of its own
// runs on one of pg's.
func parlibSplit(e *engine, how runHow, pg *parlib.Group, site SiteID, d uintptr, lo, hi int, grain uint, body func(lo, hi int)) {
	obj := unsafe.Pointer(pg)
	for n := uint(hi) - uint(lo); n > grain; n = uint(hi) - uint(lo) {
		mid, top := lo+int(n/2), hi
		c := beginChild(e, how, site, d, anywhere)
		switch {
		case c.inline():
			parlibSplit(e, how, pg, site, d, mid, top, grain, body)
			c.end(obj, d)
		case c.own():
			st := c.st
			pg.Spawn(func() {
				defer st.start().exit(obj)
				// Another goroutine's stack: the depth of the loop's
				// caller means nothing there.
				parlibSplit(e, how, pg, site, noDepth, mid, top, grain, body)
			})
			c.resume()
		default:
			pg.Spawn(func() { parlibSplit(e, how, pg, site, noDepth, mid, top, grain, body) })
		}
		hi = mid
	}
	body(lo, hi)
}
