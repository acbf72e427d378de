package shadow

// Activity: which sites have an invocation open on a goroutine's stack,
// and on its ancestors' stacks at their spawns. push asks it at every
// invocation, for three answers (Cilkprof §6): whether the invocation is
// its site's outermost (top-call-site), whether it is the outermost of its
// function's sites (top-caller), and, for a site already open, the context
// of its outermost invocation, which recursion folds back to.
//
// Only the outermost invocation of a site decides any of them, so a
// goroutine's activity is a list of those, innermost first: a node per
// site that has an invocation open, pushed when its outermost invocation
// begins and popped when it ends. Frames end innermost first, so the node
// to pop is always the head. The list is persistent: a goroutine spawned
// for real starts from its parent's list, shared (one more reference on
// the head), and pushes its own nodes in front of it; a node shared is
// never changed.
//
// The list replaced three arrays per goroutine state indexed by site and
// by function (counts of open invocations, and the context to fold to),
// which a spawn for real copied whole: a spawn cost O(sites) and every
// live goroutine held O(sites) of memory, however few sites it had open.
// With 10,000 sites in the table a spawn in parallel mode took 2.6 µs
// instead of 1.0 (BenchmarkParallelGoSites); now it takes the same with
// any number of sites. A lookup walks the list, whose length is the number
// of distinct sites open (recursion adds nothing to it): a few in
// divide-and-conquer code, where it is as fast as the arrays were.
//
// The nodes live in a slab and refer to each other by index, like the path
// profile's (prof.go): no Go pointer, so no write barrier on the hot path.

// actRef is an actNode's index in the engine's actPool; 0 is none, the
// empty list.
type actRef int32

// actNode is the outermost open invocation of one site: its site, the
// site's function and the invocation's context. While refs > 1 it is
// immutable.
type actNode struct {
	site, fn, ctx int32
	refs          int32
	next          actRef // the node below; this node holds a reference on it
}

// actPool holds the activity lists' nodes.
type actPool struct {
	slab []actNode // slab[0] is unused: actRef 0 is the empty list
	// free is the first free node; free nodes are linked through next.
	free actRef
	live int // nodes in use, for the tests that check nothing leaks
}

// find looks for site, of function fn, in the list at r: it returns the
// node of the site's outermost open invocation (0: none is open), and
// whether any site of fn is open.
func (ap *actPool) find(r actRef, site, fn int32) (outer actRef, fnOpen bool) {
	for r != 0 {
		n := &ap.slab[r]
		if n.fn == fn {
			fnOpen = true
			if n.site == site {
				return r, true
			}
		}
		r = n.next
	}
	return 0, fnOpen
}

// push puts the outermost invocation of site, of function fn, in context
// ctx, at the head of the list *head. engine.push writes it out (see
// there).
func (ap *actPool) push(head *actRef, site, fn, ctx int32) {
	r := ap.free
	if r == 0 {
		r = ap.grow()
	} else {
		ap.free = ap.slab[r].next
	}
	ap.live++
	n := &ap.slab[r]
	n.site, n.fn, n.ctx, n.refs = site, fn, ctx, 1
	n.next = *head // the list's reference on the old head moves to n
	*head = r
}

// grow adds a node to the slab, out of line: push runs on the engine's
// deepest path, on the small stack of a goroutine just started (see newG).
//
//go:noinline
func (ap *actPool) grow() actRef {
	if len(ap.slab) == 0 {
		ap.slab = make([]actNode, 1, 64)
	}
	if len(ap.slab) == cap(ap.slab) {
		growSlab(&ap.slab)
	}
	ap.slab = ap.slab[:len(ap.slab)+1]
	return actRef(len(ap.slab) - 1)
}

// pop removes the head of the list *head, the outermost invocation of site,
// which has ended.
func (ap *actPool) pop(head *actRef, site int32) {
	r := *head
	n := &ap.slab[r]
	if n.site != site {
		panic("shadow: activity list out of step with the frames")
	}
	next := n.next
	if n.refs > 1 {
		// A goroutine spawned below the invocation still shares it.
		n.refs--
		if next != 0 {
			ap.slab[next].refs++
		}
	} else {
		n.next = ap.free
		ap.free = r
		ap.live--
	}
	*head = next
}

// share makes *dst, which must be empty, a second reference on the list at
// src.
func (ap *actPool) share(dst *actRef, src actRef) {
	if src != 0 {
		ap.slab[src].refs++
	}
	*dst = src
}

// release drops the list *head's reference on its nodes, and empties it.
func (ap *actPool) release(head *actRef) {
	for r := *head; r != 0; {
		n := &ap.slab[r]
		n.refs--
		if n.refs > 0 {
			break
		}
		next := n.next
		n.next = ap.free
		ap.free = r
		ap.live--
		r = next
	}
	*head = 0
}
