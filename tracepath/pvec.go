package tracepath

// A path profile says how much of a path's length each calling context
// holds. Every goroutine carries the profile of the longest path that ends
// where it is, and an edge hands it to another goroutine while the first
// goes on extending its own, so profiles must be shared in O(1) and
// extended without copying the whole: pvec is a persistent (immutable,
// structure-sharing) array indexed by context, a radix tree of fanout 32.
// An update copies one node per level; a batch of updates (see batch)
// copies each node at most once, mutating the nodes it made itself. The
// memory a profile holds is that of the nodes no other live profile
// shares, so the analysis keeps only the profiles of the frontier: of
// running and blocked goroutines, pending edges and open tasks.

const (
	pbits  = 5
	pwidth = 1 << pbits
	pmask  = pwidth - 1
)

// cell is one context's share of a path: its time and how many pieces.
type cell struct {
	ns, n int64
}

type pnode struct {
	gen  uint64 // the batch that made the node; only that batch mutates it
	kids *[pwidth]*pnode
	vals *[pwidth]cell
}

// pvec is a persistent array of cells. The zero pvec is empty (all zero).
type pvec struct {
	root  *pnode
	shift uint // bits of the index below the root's level
}

// get returns the cell at i.
func (v pvec) get(i int) cell {
	if v.root == nil || i>>(v.shift+pbits) != 0 {
		return cell{}
	}
	n := v.root
	for s := v.shift; s > 0; s -= pbits {
		n = n.kids[(i>>s)&pmask]
		if n == nil {
			return cell{}
		}
	}
	return n.vals[i&pmask]
}

// each calls f for every nonzero cell, in index order.
func (v pvec) each(f func(i int, c cell)) {
	var walk func(n *pnode, shift uint, base int)
	walk = func(n *pnode, shift uint, base int) {
		if n == nil {
			return
		}
		if shift == 0 {
			for j, c := range n.vals {
				if c != (cell{}) {
					f(base+j, c)
				}
			}
			return
		}
		for j, k := range n.kids {
			walk(k, shift-pbits, base+j<<shift)
		}
	}
	walk(v.root, v.shift, 0)
}

// batch applies updates to pvecs, copying each shared node once.
type batch struct {
	gen uint64
}

// genCounter numbers batches; a node made by a batch has its number.
var genCounter uint64

func newBatch() batch {
	genCounter++
	return batch{gen: genCounter}
}

// own returns n if this batch made it, else a copy that it owns.
func (b batch) own(n *pnode, leaf bool) *pnode {
	if n != nil && n.gen == b.gen {
		return n
	}
	m := &pnode{gen: b.gen}
	if leaf {
		m.vals = new([pwidth]cell)
		if n != nil {
			*m.vals = *n.vals
		}
	} else {
		m.kids = new([pwidth]*pnode)
		if n != nil {
			*m.kids = *n.kids
		}
	}
	return m
}

// add returns v with c added to the cell at i (i >= 0).
func (b batch) add(v pvec, i int, c cell) pvec {
	if v.root == nil {
		v.shift = 0
		for i>>(v.shift+pbits) != 0 {
			v.shift += pbits
		}
	}
	for i>>(v.shift+pbits) != 0 {
		// Grow: the old tree becomes the first child of a new root.
		root := &pnode{gen: b.gen, kids: new([pwidth]*pnode)}
		root.kids[0] = v.root
		v.root, v.shift = root, v.shift+pbits
	}
	v.root = b.own(v.root, v.shift == 0)
	n := v.root
	for s := v.shift; s > 0; s -= pbits {
		j := (i >> s) & pmask
		k := b.own(n.kids[j], s == pbits)
		n.kids[j] = k
		n = k
	}
	cur := &n.vals[i&pmask]
	cur.ns += c.ns
	cur.n += c.n
	return v
}
