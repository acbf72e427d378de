package shadow

// contexts is the calling-context tree of folded site stacks. Context 0 is
// the root (strands outside every instrumented invocation). A child context
// is found by (parent, site) in an open-addressing table keyed by integers:
// the hot path never hashes a string.
//
// Recursion is folded (docs/model.md): an invocation of a site that is already
// active on the stack returns to that invocation's context, so fib(40) has a
// handful of contexts, not millions.
type contexts struct {
	parent []int32
	site   []int32

	keys []uint64 // (parent+1)<<32 | site+1; 0 = empty slot
	vals []int32
	n    int
}

func newContexts() *contexts {
	c := &contexts{keys: make([]uint64, 64), vals: make([]int32, 64)}
	c.parent = append(c.parent, -1)
	c.site = append(c.site, -1)
	return c
}

func (c *contexts) child(parent, site int32) int32 {
	key := uint64(parent+1)<<32 | uint64(uint32(site+1))
	mask := uint64(len(c.keys) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> 40 & mask; ; i = (i + 1) & mask {
		switch c.keys[i] {
		case key:
			return c.vals[i]
		case 0:
			id := int32(len(c.parent))
			c.parent = append(c.parent, parent)
			c.site = append(c.site, site)
			c.keys[i], c.vals[i] = key, id
			c.n++
			if 2*c.n > len(c.keys) {
				c.rehash()
			}
			return id
		}
	}
}

func (c *contexts) rehash() {
	old, oldv := c.keys, c.vals
	c.keys = make([]uint64, 2*len(old))
	c.vals = make([]int32, 2*len(old))
	mask := uint64(len(c.keys) - 1)
	for j, k := range old {
		if k == 0 {
			continue
		}
		i := (k * 0x9E3779B97F4A7C15) >> 40 & mask
		for c.keys[i] != 0 {
			i = (i + 1) & mask
		}
		c.keys[i], c.vals[i] = k, oldv[j]
	}
}

// stacks returns the sites of every context, root first, each stack
// carved out of one array: a context's parent is always an older context,
// so one pass finds every depth. A slice per context, each grown by append,
// were 7 of the 100 MB that a profiled run with 24k contexts allocated
// (examples/matmul).
func (c *contexts) stacks() [][]int {
	n := len(c.parent)
	depth := make([]int32, n)
	total := 0
	for ctx := 1; ctx < n; ctx++ {
		depth[ctx] = depth[c.parent[ctx]] + 1
		total += int(depth[ctx])
	}
	all := make([]int, total)
	out := make([][]int, n)
	for ctx := 1; ctx < n; ctx++ {
		s := all[:depth[ctx]:depth[ctx]]
		all = all[depth[ctx]:]
		for i, x := len(s)-1, int32(ctx); i >= 0; i, x = i-1, c.parent[x] {
			s[i] = int(c.site[x])
		}
		out[ctx] = s
	}
	return out
}
