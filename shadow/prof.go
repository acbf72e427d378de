package shadow

import "github.com/spanprof/spanprof/spanprofile"

// This file implements the prof data structure of Cilkprof (Schardl et al.,
// SPAA 2015, Section 5 and Figure 4): a key-value store from a calling
// context to a Measurement with amortized O(1) INIT, UPDATE, ASSIGN and UNION,
// as a hybrid of an array (size S, the number of keys discovered so far) and
// a list of pending updates that is flushed into the array once it holds S
// elements.
//
// spanprof extends Figure 4 in one way. Go's join objects are not always
// series-parallel, so a span variable holds an absolute path profile (the
// profile of the longest path from the start of the program), not a profile
// relative to the frame as in Cilkprof. A spawned child then starts from its
// parent's path profile. To keep spawns O(1), profs are persistent: the
// array and the list nodes are reference counted and immutable while shared,
// so a spawn shares its parent's prof (share) instead of copying it, and an
// exclusively owned prof is updated in place. Nodes and arrays come from free
// lists, so the steady state allocates nothing.
//
// Nodes live in one slab and are linked by index (nodeRef), and a prof names
// its array by index (arrRef): a prof and a node hold no Go pointer, so the
// hot path's stores into them (a spawn shares its parent's prof, a wait
// moves a join object's, every strand may push a node) pay no write
// barrier, and the collector does not scan them (see record.go for what the
// barriers cost).
//
// Not safe for concurrent use; each engine owns its profPool.

// profNode is one pending update. While refs > 1 it is immutable.
type profNode struct {
	next nodeRef // older updates; this node holds a reference on it
	refs int32
	key  int32
	rec  spanprofile.Measurement
}

// nodeRef is a profNode's index in its pool's slab; 0 is no node. It is
// unsigned so that indexing the slab takes the 32-bit load's zero
// extension as it is: a signed index was sign-extended at every node
// reached (callgrind: 6 instructions a node of profiled fib, with recRef's).
type nodeRef uint32

// arrRef is a profArray's index in its pool's arrs; 0 is no array.
type arrRef int32

// profArray is the flushed array component R.arr of Figure 4.
type profArray struct {
	refs int32
	recs []spanprofile.Measurement
	used []int32 // keys with nonzero entries, to clear and merge only those (Cilkprof §7)
	has  []bool
}

// add adds *m to key's entry. It takes m by pointer: a flush adds every
// pending update of a list, and a Measurement passed by value was copied,
// nine words, for each.
func (a *profArray) add(key int32, m *spanprofile.Measurement) {
	if int(key) >= len(a.recs) {
		a.grow(int(key) + 1)
	}
	if !a.has[key] {
		a.has[key] = true
		a.used = append(a.used, key)
	}
	addMeasurement(&a.recs[key], m)
}

// grow resizes the array by table doubling when keys are discovered on the
// fly (the paragraph "Discovering call sites dynamically" of Section 5).
func (a *profArray) grow(n int) {
	c := 2 * cap(a.recs)
	if c < n {
		c = n
	}
	if c < 8 {
		c = 8
	}
	recs := make([]spanprofile.Measurement, c)
	copy(recs, a.recs)
	has := make([]bool, c)
	copy(has, a.has)
	a.recs, a.has = recs, has
}

func addMeasurement(dst, m *spanprofile.Measurement) {
	dst.TopCallSite.Count += m.TopCallSite.Count
	dst.TopCallSite.Work += m.TopCallSite.Work
	dst.TopCallSite.Span += m.TopCallSite.Span
	dst.TopCaller.Count += m.TopCaller.Count
	dst.TopCaller.Work += m.TopCaller.Work
	dst.TopCaller.Span += m.TopCaller.Span
	dst.Local.Count += m.Local.Count
	dst.Local.Work += m.Local.Work
	dst.Local.Span += m.Local.Span
}

// prof is a handle on a persistent profile: the updates of the list
// starting at head applied on top of arr. The zero prof is empty. A prof owns
// one reference on arr and one on head; copying the struct does not, so
// callers copy only through share or move it and zero the source.
type prof struct {
	arr  arrRef
	head nodeRef
	n    int32 // list length above arr
	// own counts the nodes this handle pushed since it was made by share
	// or last flushed. Figure 4 flushes when the list reaches S elements
	// because those elements paid for the flush; a shared handle inherits
	// nodes it did not pay for, so the threshold applies to own.
	own int32
}

// profPool holds free nodes and arrays and the current key space size S.
type profPool struct {
	slab []profNode // every node; slab[0] is unused: nodeRef 0 is nil
	// free heads the list of free nodes, linked through next (see
	// recordPool.free).
	free   nodeRef
	arrs   []*profArray // every array; arrs[0] is nil: arrRef 0 is none
	arrays []arrRef     // the free ones
	keys   int32        // S: keys discovered so far

	// The arrays live, for the tests that check nothing leaks (liveNodes
	// counts the nodes), and the flushes, for the test of how often a
	// loop of spawns flushes.
	liveArrays int
	flushes    int

	// Everything ever allocated, for the memory the run reports: free
	// lists never shrink, so this is the peak.
	allNodes int
}

// nd returns node r. The pointer is good until the next node is taken:
// a slab that grows is copied.
func (pp *profPool) nd(r nodeRef) *profNode { return &pp.slab[r] }

// liveNodes returns the number of nodes in use: every node made less the
// free ones. It walks the free list, for the tests that check nothing
// leaks: a count kept up to date cost an instruction for every node made
// and every node freed.
func (pp *profPool) liveNodes() int {
	n := max(len(pp.slab)-1, 0)
	for r := pp.free; r != 0; r = pp.slab[r].next {
		n--
	}
	return n
}

// ar returns array r, or nil for 0.
func (pp *profPool) ar(r arrRef) *profArray {
	if r == 0 {
		return nil
	}
	return pp.arrs[r]
}

// allArrays returns every array made.
func (pp *profPool) allArrays() []*profArray {
	if len(pp.arrs) == 0 {
		return nil
	}
	return pp.arrs[1:]
}

// newNode adds a node to the slab. push and pushSpan take a node from the
// free list first, each written out: a call of a function of its own
// (it would not inline) was one frame more at the bottom of the engine's
// deepest path (see tickAt).
//
//go:noinline
func (pp *profPool) newNode() nodeRef {
	if len(pp.slab) == 0 {
		pp.slab = make([]profNode, 1, 64)
	}
	pp.allNodes++
	if len(pp.slab) == cap(pp.slab) {
		growSlab(&pp.slab)
	}
	pp.slab = append(pp.slab, profNode{})
	return nodeRef(len(pp.slab) - 1)
}

func (pp *profPool) array() arrRef {
	pp.liveArrays++
	if n := len(pp.arrays); n > 0 {
		a := pp.arrays[n-1]
		pp.arrays = pp.arrays[:n-1]
		pp.arrs[a].refs = 1
		return a
	}
	a := &profArray{refs: 1}
	a.grow(int(pp.keys))
	if len(pp.arrs) == 0 {
		pp.arrs = append(pp.arrs, nil)
	}
	pp.arrs = append(pp.arrs, a)
	return arrRef(len(pp.arrs) - 1)
}

// freeArray clears only the nonzero entries and keeps the memory (the
// fourth optimisation of Cilkprof §7).
func (pp *profPool) freeArray(r arrRef) {
	a := pp.arrs[r]
	for _, k := range a.used {
		a.recs[k] = spanprofile.Measurement{}
		a.has[k] = false
	}
	a.used = a.used[:0]
	pp.liveArrays--
	pp.arrays = append(pp.arrays, r)
}

// releaseNodes drops a reference on the list at r, freeing the nodes it
// held the last reference on. The slab and the free list's head stay in
// registers through the walk (a wait that adopts a child's path frees the
// parent's nodes down to the one the child shared), and a freed node's
// refs is not stored: push sets it.
func (pp *profPool) releaseNodes(r nodeRef) {
	slab, free := pp.slab, pp.free
	for r != 0 {
		nd := &slab[r]
		if nd.refs > 1 {
			nd.refs--
			break
		}
		next := nd.next
		nd.next = free
		free = r
		r = next
	}
	pp.free = free
}

// flushLimit is the list length at which a prof is flushed into an array:
// S, as in Figure 4, with a floor so small key spaces do not flush
// constantly. A parent that spawns in a loop pushes a node per strand onto a
// list its children share, and flushes every floor/2 spawns, copying its
// shared array: a floor of 64 rather than 16 takes 14% off the instructions
// of profiled fib and of stencil's inner loop (perf stat, GOMAXPROCS=1);
// 128 and 256 cost more again, in longer walks.
func (pp *profPool) flushLimit() int32 {
	if pp.keys < 64 {
		return 64
	}
	return pp.keys
}

// share returns a second handle on the same profile in O(1) amortized.
// It is shareInto for callers off the hot path.
func (pp *profPool) share(p *prof) prof {
	var q prof
	pp.shareInto(&q, p)
	return q
}

// shareInto makes dst, which must be empty, a second handle on p's profile
// in O(1) amortized.
//
// A shared list is walked by every handle that later flushes it, which
// would break Figure 4's accounting (each element pays for one flush), and a
// handle that adopts a child's path inherits the child's list, so without
// care the list grows with the run. So p is flushed first when it pushed
// half the limit of its own, which pay for that flush, or when its list
// reached the limit. A handle then inherits fewer than limit elements and
// pushes fewer than limit of its own before it flushes, so any list stays
// shorter than 2 limits.
//
// The rule looks at p's own pushes rather than its whole list so that the
// children of a parent that spawns in a loop do not flush: each inherits
// the parent's list, pushes a few nodes and shares its path at its Done.
// Had a list of half the limit been enough, every child spawned once the
// parent's list was nearly that long would copy the parent's shared array.
//
// It writes dst field by field rather than returning a prof: the hot path's
// callers put the handle in a task or value, and a prof returned by value
// is copied there 16 bytes at a time from its two int32 fields just stored
// separately, a load that stalls on both stores (perf annotate of
// profiled stencil's spawnBegin and done).
func (pp *profPool) shareInto(dst, p *prof) {
	if l := pp.flushLimit(); p.own >= l/2 || p.n >= l {
		pp.flush(p)
	}
	if p.arr != 0 {
		pp.arrs[p.arr].refs++
	}
	if p.head != 0 {
		pp.slab[p.head].refs++
	}
	dst.arr, dst.head = p.arr, p.head
	dst.n, dst.own = p.n, 0
}

// moveInto moves src into dst, which must be empty, field by field (see
// shareInto), leaving src empty.
func (pp *profPool) moveInto(dst, src *prof) {
	dst.arr, dst.head = src.arr, src.head
	dst.n, dst.own = src.n, src.own
	src.arr, src.head = 0, 0
	src.n, src.own = 0, 0
}

// hold returns a read-only handle on p's profile: the holder never updates
// it, so p need not flush first (the sink of the critical path is one).
func (pp *profPool) hold(p *prof) prof {
	q := *p
	if q.arr != 0 {
		pp.arrs[q.arr].refs++
	}
	if q.head != 0 {
		pp.slab[q.head].refs++
	}
	q.own = 0
	return q
}

// init is INIT(R) of Figure 4: R becomes empty.
func (pp *profPool) init(p *prof) {
	if p.arr != 0 {
		a := pp.arrs[p.arr]
		a.refs--
		if a.refs == 0 {
			pp.freeArray(p.arr)
		}
	}
	pp.releaseNodes(p.head)
	*p = prof{}
}

// assign is ASSIGN(R, R') of Figure 4: move src into dst, leaving src empty.
//
// dst takes src's whole list as its own: a wait adopts the path of a child
// that shared its parent's list, pushed a few nodes and ended, and no
// handle will ever flush that list but dst. Counted as src's few own
// pushes, a parent that spawns in a loop after the wait (stencil's rows)
// kept the long list while its list and its children's grew past the
// limit, and every child from then on copied the shared array at its Done
// (8 flushes a row of 32 spawns instead of 1; the flushes were 5.7% of
// stencil's profiled CPU time). Counted whole, the parent flushes it at
// its next share, once.
func (pp *profPool) assign(dst, src *prof) {
	pp.init(dst)
	*dst = *src
	dst.own = dst.n
	*src = prof{}
}

// update is UPDATE(R, <key, m>) of Figure 4.
func (pp *profPool) update(p *prof, key int32, m spanprofile.Measurement) {
	pp.updatePtr(p, key, &m)
}

// updatePtr is update without copying the measurement, for the hot path.
// Its in-place cases are here and the rest in updateSlow, out of line, as
// addLocal's are (finishTop calls it at the end of every call of a
// function that does not recurse).
func (pp *profPool) updatePtr(p *prof, key int32, m *spanprofile.Measurement) {
	if key >= pp.keys {
		pp.keys = key + 1
	}
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) && a.has[key] {
			addMeasurement(&a.recs[key], m)
			return
		}
	} else if h := &pp.slab[p.head]; h.refs == 1 && h.key == key {
		addMeasurement(&h.rec, m) // coalesce with an unshared pending update
		return
	}
	pp.updateSlow(p, key, m)
}

// addTop is update(p, key, m) for m the measurement of an invocation that
// is its site's top call site (topCS), its context's top caller
// (topCaller) or both, of local work own, work and span: updatePtr's
// in-place cases without building m, which only the rest, addTopSlow,
// needs.
func (pp *profPool) addTop(p *prof, key int32, own, work, span int64, topCS, topCaller bool) {
	if key >= pp.keys {
		pp.keys = key + 1
	}
	var r *spanprofile.Measurement
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) && a.has[key] {
			r = &a.recs[key]
		}
	} else if h := &pp.slab[p.head]; h.refs == 1 && h.key == key {
		r = &h.rec // coalesce with an unshared pending update
	}
	if r == nil {
		pp.addTopSlow(p, key, own, work, span, topCS, topCaller)
		return
	}
	r.Local.Count++
	r.Local.Work += own
	if topCS {
		r.TopCallSite.Count++
		r.TopCallSite.Work += work
		r.TopCallSite.Span += span
	}
	if topCaller {
		r.TopCaller.Count++
		r.TopCaller.Work += work
		r.TopCaller.Span += span
	}
}

// addTopSlow is addTop where the update is not in place.
//
//go:noinline
func (pp *profPool) addTopSlow(p *prof, key int32, own, work, span int64, topCS, topCaller bool) {
	m := spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Work: own}}
	if topCS {
		m.TopCallSite = spanprofile.Triple{Count: 1, Work: work, Span: span}
	}
	if topCaller {
		m.TopCaller = spanprofile.Triple{Count: 1, Work: work, Span: span}
	}
	pp.updateSlow(p, key, &m)
}

// updateSlow is updatePtr where the update is not in place.
//
//go:noinline
func (pp *profPool) updateSlow(p *prof, key int32, m *spanprofile.Measurement) {
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) {
			// Figure 4 line 16, in place because nobody shares it: a
			// new key (updatePtr took the others).
			a.has[key] = true
			a.used = append(a.used, key)
			addMeasurement(&a.recs[key], m)
			return
		}
	}
	setMeasurement(&pp.push(p, key).rec, m)
	if p.own >= pp.flushLimit() { // lines 18-19
		pp.flush(p)
	}
}

// push puts a pending update of key with a zero measurement on p's list
// and returns it for the caller to fill in; the caller then checks the
// flush limit.
func (pp *profPool) push(p *prof, key int32) *profNode {
	if key >= pp.keys {
		pp.keys = key + 1
	}
	// A node from the free list, or a new one (see newNode).
	r := pp.free
	if r != 0 {
		pp.free = pp.slab[r].next
	} else {
		r = pp.newNode()
	}
	nd := &pp.slab[r]
	nd.next = p.head
	nd.refs, nd.key = 1, key
	nd.rec = spanprofile.Measurement{}
	p.head = r
	p.n++
	p.own++
	return nd
}

// setMeasurement copies *src to *dst one field at a time. A struct copy
// moves 16 bytes at a time, and the measurements the hot path passes were
// just written to the stack 8 bytes at a time: a load spanning two such
// stores waits for both to reach the cache instead of taking them from the
// store buffer, and those stalls were over half of updatePtr's samples in
// profiled stencil (perf annotate).
func setMeasurement(dst, src *spanprofile.Measurement) {
	dst.TopCallSite.Count = src.TopCallSite.Count
	dst.TopCallSite.Work = src.TopCallSite.Work
	dst.TopCallSite.Span = src.TopCallSite.Span
	dst.TopCaller.Count = src.TopCaller.Count
	dst.TopCaller.Work = src.TopCaller.Work
	dst.TopCaller.Span = src.TopCaller.Span
	dst.Local.Count = src.Local.Count
	dst.Local.Work = src.Local.Work
	dst.Local.Span = src.Local.Span
}

// addSpan is update(p, key, {Local: {Span: d}}), the update every strand
// makes, without building a Measurement: the hot path's common cases are an
// array or a pending update that p owns alone.
func (pp *profPool) addSpan(p *prof, key int32, d int64) {
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) {
			if !a.has[key] {
				pp.addKey(a, key)
			}
			a.recs[key].Local.Span += d
			return
		}
	} else if h := &pp.slab[p.head]; h.refs == 1 && h.key == key {
		h.rec.Local.Span += d
		return
	}
	pp.pushSpan(p, key, d)
}

// addKey marks key as used in a, out of line with the append: see pushSpan.
//
//go:noinline
func (pp *profPool) addKey(a *profArray, key int32) {
	a.has[key] = true
	a.used = append(a.used, key)
}

// pushSpan is addSpan's pending update. It and addKey are out of line so
// that addSpan's frame stays small, and pushSpan's too: in parallel
// accounting this runs at the bottom of the engine's deepest path, on the
// small stack of a goroutine that has just started (see tickAt and newG).
// It is push, written out, with the span set: a call less on the hot
// path of serial mode, where most strands of fib and stencil end here.
//
//go:noinline
func (pp *profPool) pushSpan(p *prof, key int32, d int64) {
	if key >= pp.keys {
		pp.keys = key + 1
	}
	// The free node's slot is taken once, for its link and its fill: one
	// bounds check fewer per strand.
	var nd *profNode
	r := pp.free
	if r != 0 {
		nd = &pp.slab[r]
		pp.free = nd.next
	} else {
		r = pp.newNode()
		nd = &pp.slab[r]
	}
	nd.next = p.head
	nd.refs, nd.key = 1, key
	nd.rec = spanprofile.Measurement{}
	nd.rec.Local.Span = d
	p.head = r
	p.n++
	p.own++
	if p.own >= pp.flushLimit() {
		pp.flush(p)
	}
}

// addLocal is update(p, key, {Local: {Count: 1, Work: w}}), the update of
// an invocation that is neither top-call-site nor top-caller.
func (pp *profPool) addLocal(p *prof, key int32, w int64) {
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) && a.has[key] {
			a.recs[key].Local.Count++
			a.recs[key].Local.Work += w
			return
		}
	} else if h := &pp.slab[p.head]; h.refs == 1 && h.key == key {
		h.rec.Local.Count++
		h.rec.Local.Work += w
		return
	}
	pp.addLocalSlow(p, key, w)
}

// addLocalSlow is addLocal where the update is not in place: a new key of
// an array, or a new list element. Out of line, so that addLocal's frame
// stays small: it runs under callEnd, which a goroutine of parallel mode
// reaches at the bottom of its recursion when a wait replays its buffered
// calls, and that frame decided whether it outgrew its stack (see newG).
//
//go:noinline
func (pp *profPool) addLocalSlow(p *prof, key int32, w int64) {
	if p.head == 0 {
		if a := pp.ar(p.arr); a != nil && a.refs == 1 && int(key) < len(a.recs) {
			a.has[key] = true
			a.used = append(a.used, key)
			a.recs[key].Local.Count++
			a.recs[key].Local.Work += w
			return
		}
	}
	nd := pp.push(p, key)
	nd.rec.Local.Count, nd.rec.Local.Work = 1, w
	if p.own >= pp.flushLimit() {
		pp.flush(p)
	}
}

// flush is _FLUSHLIST of Figure 4: apply the list to an array that p owns
// exclusively. Copying a shared array costs O(S), paid for by the S list
// elements being flushed.
func (pp *profPool) flush(p *prof) {
	pp.flushes++
	ar := p.arr
	if ar == 0 || pp.arrs[ar].refs > 1 {
		nr := pp.array()
		if ar != 0 {
			a, na := pp.arrs[ar], pp.arrs[nr]
			for _, k := range a.used {
				na.add(k, &a.recs[k])
			}
			a.refs--
		}
		ar = nr
	}
	a := pp.arrs[ar]
	for nd, i := p.head, int32(0); nd != 0 && i < p.n; i++ {
		n := &pp.slab[nd]
		a.add(n.key, &n.rec)
		nd = n.next
	}
	pp.releaseNodes(p.head)
	*p = prof{arr: ar}
}

// union is UNION(R, R') of Figure 4: add every element of src to dst and
// leave src empty. The cost is the number of elements of src, which
// Figure 4's accounting charges to the operations that created them.
func (pp *profPool) union(dst, src *prof) {
	if src.arr != 0 {
		a := pp.arrs[src.arr]
		for _, k := range a.used {
			pp.update(dst, k, a.recs[k])
		}
	}
	for nd, i := src.head, int32(0); nd != 0 && i < src.n; nd, i = pp.slab[nd].next, i+1 {
		// update may grow the slab: read the node anew each time.
		pp.update(dst, pp.slab[nd].key, pp.slab[nd].rec)
	}
	pp.init(src)
}

// each calls fn for every key with its summed measurement, in key order;
// it flushes p first (PRINT of Figure 4 without the INIT).
func (pp *profPool) each(p *prof, fn func(key int32, m spanprofile.Measurement)) {
	if p.head != 0 || (p.arr != 0 && pp.arrs[p.arr].refs > 1) {
		pp.flush(p)
	}
	if p.arr == 0 {
		return
	}
	a := pp.arrs[p.arr]
	for k := range a.recs {
		if a.has[k] {
			fn(int32(k), a.recs[k])
		}
	}
}
