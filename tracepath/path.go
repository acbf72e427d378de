package tracepath

// A path is the longest path of the DAG that ends at some point (a
// goroutine's present, an edge's source, a task's end): its length and its
// profile, the time each calling context holds on it.
//
// The profile is prof, plus the pieces in chain, plus those in buf. A
// goroutine extends its path a piece at a time, into buf, which is its own;
// an edge shares the path, many times a millisecond in a pipeline, so
// sharing must be cheap: snapshot hands buf over to a new immutable chunk
// at the head of chain, in O(1), and the pieces reach prof (a persistent
// array, whose update copies a node per level) only when a buffer or a
// chain has grown long.
type path struct {
	len   int64
	prof  pvec
	chain *chunk
	buf   []entry
}

type entry struct {
	ctx int32
	c   cell
}

// A chunk is pieces that a snapshot froze, and the older chunks after it.
type chunk struct {
	entries []entry
	next    *chunk
	n       int // entries in this chunk and the ones after it
}

// maxBuf is how many pieces a path buffers, and maxChain how many its chain
// holds, before it folds them into its profile.
const (
	maxBuf   = 64
	maxChain = 256
)

// extend appends a piece of ns nanoseconds in context ctx.
func (p *path) extend(ctx int32, ns int64) {
	p.len += ns
	if n := len(p.buf); n > 0 && p.buf[n-1].ctx == ctx {
		// A loop's pieces often repeat one context.
		p.buf[n-1].c.ns += ns
		p.buf[n-1].c.n++
		return
	}
	if p.buf == nil {
		p.buf = make([]entry, 0, 8)
	}
	p.buf = append(p.buf, entry{ctx, cell{ns, 1}})
	if len(p.buf) >= maxBuf {
		p.fold()
	}
}

// fold adds the chain's and the buffer's pieces to the profile.
func (p *path) fold() {
	if p.chain == nil && len(p.buf) == 0 {
		return
	}
	b := newBatch()
	for c := p.chain; c != nil; c = c.next {
		for _, e := range c.entries {
			p.prof = b.add(p.prof, int(e.ctx), e.c)
		}
	}
	for _, e := range p.buf {
		p.prof = b.add(p.prof, int(e.ctx), e.c)
	}
	p.chain = nil
	p.buf = p.buf[:0]
}

// snapshot returns the path as it is now, to be shared: the holder's
// buffer becomes an immutable chunk of both, and the holder starts a new
// one.
func (p *path) snapshot() path {
	if len(p.buf) > 0 {
		n := len(p.buf)
		if p.chain != nil {
			n += p.chain.n
		}
		p.chain = &chunk{entries: p.buf, next: p.chain, n: n}
		p.buf = nil
	}
	if p.chain != nil && p.chain.n > maxChain {
		p.fold()
	}
	return path{len: p.len, prof: p.prof, chain: p.chain}
}

// profile returns the path's whole profile.
func (p path) profile() pvec {
	p.buf = append([]entry(nil), p.buf...) // p's own buffer stays its holder's
	p.fold()
	return p.prof
}
