package shadow

import (
	"slices"
	"unsafe"

	"github.com/spanprof/spanprof/spanprofile"
)

// Groups with a limit: errgroup's SetLimit(k) lets at most k of a group's
// children run at once, and its Go blocks the caller until one of them
// returns. Serial mode runs each child inline, before the next spawn, so
// without a model the limit never binds and the span reads as if all the
// children ran at once (eight equal tasks under SetLimit(2) read a
// parallelism of 5.4 to 7.8).
//
// The model is list scheduling over k slots, in spawn order, which is what
// the blocking Go does: the group keeps the ends of its children, one per
// slot (joinAcc.lanes); once k are taken, the next spawn first waits for
// the slot that frees first, the child whose path ends earliest, and the
// spawning task goes on from the longer of its own path and that child's,
// as after a wait. A wait on the group takes the longest of the slots. On
// a DAG with infinite processors that is exact for the schedule the limit
// allows: a child starts when its spawn is reached and a slot is free, and
// which slot frees first is the one whose child's path is shortest.
//
// Serial mode only: in parallel accounting the group really blocks, and
// what a goroutine waited for is not seen (docs/modes.md). TryGo, which
// never blocks, is not modelled: serial mode's TryGo always finds a slot.

// setLimit records the limit n of group obj (errgroup's SetLimit: a
// negative n removes it).
func (e *engine) setLimit(obj unsafe.Pointer, n int) {
	if n < 0 {
		delete(e.limits, obj)
		return
	}
	if e.limits == nil {
		e.limits = make(map[unsafe.Pointer]int)
	}
	e.limits[obj] = n
	e.hasLimits.Store(true)
}

// slotAt takes a slot of group obj for a spawn at site by the function at
// depth d: once the group's limit is reached, the spawning task goes on
// from the earliest end among its slots, which that end frees.
func (e *engine) slotAt(obj unsafe.Pointer, d uintptr, site SiteID) {
	k := e.limits[obj]
	if k <= 0 {
		return // no limit, or 0, with which Go blocks for ever
	}
	// find, not get: a slot in use has a contribution (see joinAcc).
	i := e.joins.find(obj)
	if i < 0 {
		return
	}
	x := e.joins.extOf(&e.joins.accs[i])
	if x == nil || len(x.lanes) < k {
		return
	}
	e.tick()
	e.unwindTo(d)
	first := 0
	for i, v := range x.lanes {
		if v.t < x.lanes[first].t {
			first = i
		}
	}
	v := x.lanes[first]
	x.lanes = append(x.lanes[:first], x.lanes[first+1:]...)
	if st := e.cur; v.t > st.tasks[len(st.tasks)-1].t {
		e.slotWait(site, k, v.t-st.tasks[len(st.tasks)-1].t)
	}
	e.follow(&v)
	if e.wi != nil {
		e.wi.slot(obj, &e.cur.tasks[len(e.cur.tasks)-1])
	}
	e.restart()
}

// slotWait records that a spawn at site waited delay for one of k slots:
// what the report needs to say that a limit, not the span, bounds the
// parallelism (spanprofile.LimitUse). Only spawns that find every slot
// taken come here, never the hot path of a program without limits.
func (e *engine) slotWait(site SiteID, k int, delay int64) {
	if e.slotWaits == nil {
		e.slotWaits = make(map[SiteID]*spanprofile.LimitUse)
	}
	u := e.slotWaits[site]
	if u == nil {
		u = &spanprofile.LimitUse{Site: int(site)}
		e.slotWaits[site] = u
	}
	u.N = max(u.N, int64(k))
	u.Waits++
	u.Delay += delay
}

// limitUses returns what the limits did, by site in site order.
func (e *engine) limitUses() []spanprofile.LimitUse {
	var out []spanprofile.LimitUse
	for _, u := range e.slotWaits {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b spanprofile.LimitUse) int { return a.Site - b.Site })
	return out
}

// LimitGroup is what GroupSetLimit needs of a group: errgroup.Group's
// SetLimit, a constraint of its own so that GroupGo's does not ask for a
// method older versions of the package lack.
type LimitGroup[G any] interface {
	*G
	SetLimit(int)
}

// GroupSetLimit runs g.SetLimit(n), and in serial mode models the limit
// (limit.go): the group's children then take one of n slots each.
//
//go:noinline
func GroupSetLimit[G any, PG LimitGroup[G]](g PG, n int) {
	gid, _ := gdepth()
	g.SetLimit(n)
	if e := begin(gid, -1); e != nil {
		e.setLimit(unsafe.Pointer(g), n)
	}
}
