package tracepath

// A path is the longest path of the DAG that ends at some point (a
// goroutine's present, an edge's source, a task's end): its length and its
// profile, the time each calling context holds on it.
type path struct {
	len  int64
	prof pvec
	// buf holds the latest pieces, not yet in prof, so that a goroutine
	// extending its own path pays for the persistent update once per batch
	// rather than once per piece. It belongs to the path's holder: a
	// shared path (snapshot) has none.
	buf []entry
}

type entry struct {
	ctx int32
	c   cell
}

// maxBuf is how many pieces a path buffers before it folds them into its
// profile.
const maxBuf = 64

// extend appends a piece of ns nanoseconds in context ctx.
func (p *path) extend(ctx int32, ns int64) {
	p.len += ns
	if n := len(p.buf); n > 0 && p.buf[n-1].ctx == ctx {
		// A loop's pieces often repeat one context.
		p.buf[n-1].c.ns += ns
		p.buf[n-1].c.n++
		return
	}
	p.buf = append(p.buf, entry{ctx, cell{ns, 1}})
	if len(p.buf) >= maxBuf {
		p.flush()
	}
}

// flush folds the buffered pieces into the profile.
func (p *path) flush() {
	if len(p.buf) == 0 {
		return
	}
	b := newBatch()
	for _, e := range p.buf {
		p.prof = b.add(p.prof, int(e.ctx), e.c)
	}
	p.buf = p.buf[:0]
}

// snapshot returns the path as it is now, to be shared: it holds no
// buffer, so the holder can go on extending its own.
func (p *path) snapshot() path {
	p.flush()
	return path{len: p.len, prof: p.prof}
}
