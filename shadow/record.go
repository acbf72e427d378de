package shadow

// A record describes one segment of a longest path for the local-span
// measurement: "this path passes o units of frame id's own strands, ending at
// event pos; before that it continues as up". Chains of records follow a path
// backwards across goroutines, so that when a wait adopts a longer path from a
// join object, each waiting frame can find how much of its own code that path
// passes (Cilkprof's local span, generalised from the series-parallel case
// where the answer is always "up to the spawn of the longest child").
//
// Records are reference counted and live in one slab per engine, addressed
// by recRef: a spawn, Done or wait costs no allocation in the steady state,
// and neither a record nor the frames, tasks, values and accumulators that
// refer to records hold a Go pointer for them. Every store of a pointer
// pays a write barrier while the collector marks, which with GOMAXPROCS=1
// is a third of a profiled fib's run, and the barriers and the marking
// they fed were 15% of its CPU time (perf, fib -n 31) when records were
// heap objects linked by pointers.
type record struct {
	up   recRef
	refs int32
	id   uint64 // frame activation
	o    int64  // own strands of that frame on the path
	pos  int64  // event number where the segment ends; decreases along up
	// Where the frame is while it runs: its goroutine state's index in
	// the engine's allG and its index in that state's frames. The frame
	// has ended once that slot holds another activation (live).
	g, k int32
	conn bool // the path passes the frame's start, so up is its parent's record
}

// recRef is a record's index in its pool's slab; 0 is no record. Unsigned,
// as nodeRef is.
type recRef uint32

type recordPool struct {
	recs []record // recs[0] is unused: recRef 0 is nil
	// free heads the list of free records, linked through up. A slice of
	// them cost an append (and its three-word header's store) per record
	// freed: with the prof nodes' list (profPool.free), the lists take 30
	// instructions off a node of profiled fib (callgrind;
	// docs/benchmarks.md).
	free recRef
	all  int // ever allocated: the peak, since free never shrinks
}

func (rp *recordPool) get(id uint64, o, pos int64, conn bool, up recRef, g, k int32) recRef {
	// The free record's slot is taken once, for its link and its fill,
	// as in pushSpan: the slab does not move between.
	var p *record
	r := rp.free
	if r != 0 {
		p = &rp.recs[r]
		rp.free = p.up
	} else {
		r = rp.grow()
		p = &rp.recs[r]
	}
	if up != 0 {
		rp.recs[up].refs++
	}
	// Field by field, not *p = record{...}: the composite is built on the
	// stack 8 bytes at a time and copied 16 at a time, and each such load
	// stalled on the stores it spans (half of recordOf's samples in
	// profiled stencil, perf annotate). Every field is set.
	p.up, p.id, p.o, p.pos = up, id, o, pos
	p.conn, p.refs, p.g, p.k = conn, 1, g, k
	return r
}

// grow adds a record to the slab and returns it. A slab that grows is
// copied, which moves the records: callers hold recRefs, never pointers
// into the slab across a get.
//
//go:noinline
func (rp *recordPool) grow() recRef {
	if len(rp.recs) == 0 {
		rp.recs = make([]record, 1, 64)
	}
	if len(rp.recs) == cap(rp.recs) {
		growSlab(&rp.recs)
	}
	rp.recs = append(rp.recs, record{})
	rp.all++
	return recRef(len(rp.recs) - 1)
}

func (rp *recordPool) retain(r recRef) recRef {
	if r != 0 {
		rp.recs[r].refs++
	}
	return r
}

// release drops a reference on r, if r is a record. Only the test of r
// inlines into the hot path, where many releases are of no record (a
// call's up chain, a join object's first contribution); the rest is a
// call. Not inlined, as it was at 83 of the compiler's budget of 80, it
// cost 60 instructions a node of profiled fib (callgrind).
func (rp *recordPool) release(r recRef) {
	if r != 0 {
		rp.free1(r)
	}
}

// drop is release of a record r that is likely shared: the decrement in
// line, and free1 only for the last reference. A frame's cached record is
// so, which a wait that adopts a child's path drops (the child's fork
// holds another reference on it): the call of free1 it saves was 20
// instructions a wait of profiled fib (callgrind). release itself stays a
// test, under the inliner's budget.
func (rp *recordPool) drop(r recRef) {
	if p := &rp.recs[r]; p.refs > 1 {
		p.refs--
		return
	}
	rp.free1(r)
}

// free1 is release of a record: it drops the reference, and if it was the
// last, frees the record and releases the one before it on the chain, and
// so on. Out of line, so that release inlines small into the hot path.
//
// The slab and the free list's head stay in registers through
// the walk, and a freed record's refs is not stored: get sets it.
//
//go:noinline
func (rp *recordPool) free1(r recRef) {
	recs := rp.recs
	p := &recs[r]
	if p.refs > 1 {
		p.refs--
		return
	}
	free := rp.free
	for {
		up := p.up
		p.up = free
		free = r
		r = up
		if r == 0 {
			break
		}
		p = &recs[r]
		if p.refs > 1 {
			p.refs--
			break
		}
	}
	rp.free = free
}

// find returns the record of frame id on chain r, looking no further back
// than event start (the frame's first event): records are ordered by
// decreasing pos, and a frame has no segment before it started.
func (rp *recordPool) find(r recRef, id uint64, start int64) recRef {
	for r != 0 {
		p := &rp.recs[r]
		if p.pos < start {
			return 0
		}
		if p.id == id {
			return r
		}
		r = p.up
	}
	return 0
}
