package shadow

// A record describes one segment of a longest path for the local-span
// measurement: "this path passes o units of frame id's own strands, ending at
// event pos; before that it continues as up". Chains of records follow a path
// backwards across goroutines, so that when a wait adopts a longer path from a
// join object, each waiting frame can find how much of its own code that path
// passes (Cilkprof's local span, generalised from the series-parallel case
// where the answer is always "up to the spawn of the longest child").
//
// Records are reference counted and pooled: a spawn, Done or wait costs no
// allocation in the steady state.
type record struct {
	up   *record
	id   uint64 // frame activation
	o    int64  // own strands of that frame on the path
	pos  int64  // event number where the segment ends; decreases along up
	conn bool   // the path passes the frame's start, so up is its parent's record
	refs int32
}

type recordPool struct {
	free []*record
	live int
	all  int // ever allocated: the peak, since free never shrinks
}

func (rp *recordPool) get(id uint64, o, pos int64, conn bool, up *record) *record {
	var r *record
	if n := len(rp.free); n > 0 {
		r = rp.free[n-1]
		rp.free = rp.free[:n-1]
	} else {
		r = new(record)
		rp.all++
	}
	rp.live++
	if up != nil {
		up.refs++
	}
	// Field by field, not *r = record{...}: the composite is built on the
	// stack 8 bytes at a time and copied 16 at a time, and each such load
	// stalled on the stores it spans (half of recordOf's samples in
	// profiled stencil, perf annotate). Every field is set.
	r.up, r.id, r.o, r.pos = up, id, o, pos
	r.conn, r.refs = conn, 1
	return r
}

func (rp *recordPool) retain(r *record) *record {
	if r != nil {
		r.refs++
	}
	return r
}

func (rp *recordPool) release(r *record) {
	for r != nil {
		r.refs--
		if r.refs > 0 {
			return
		}
		up := r.up
		r.up = nil
		rp.live--
		rp.free = append(rp.free, r)
		r = up
	}
}

// find returns the record of frame id on chain r, looking no further back
// than event start (the frame's first event): records are ordered by
// decreasing pos, and a frame has no segment before it started.
func find(r *record, id uint64, start int64) *record {
	for ; r != nil && r.pos >= start; r = r.up {
		if r.id == id {
			return r
		}
	}
	return nil
}
