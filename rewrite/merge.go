package rewrite

import (
	"slices"
	"sort"
	"strings"
)

// merge3 is a three-way merge of lines, as diff3 does it: it returns base
// with both the changes that turn base into a and those that turn base
// into b, and true; or nil and false when they conflict. Each side's
// changes are the hunks of an edit script from base (lineEdits): runs of
// base lines replaced by other lines, or lines inserted between two base
// lines. Two hunks conflict when they replace a common base line, when one
// inserts inside the lines the other replaces, or when both insert at the
// same place, unless they are the same change. Hunks that touch (one
// replaces the lines just before the other's) do not conflict: Undo merges
// the rewrite's removal of the lines it inserted before a line with the
// user's change of that line. Lines keep their line endings, and the last
// line may have none, so the result is exact to the byte.
func merge3(base, a, b []byte) ([]byte, bool) {
	bl := splitLines(base)
	ha, hb := hunks(bl, splitLines(a)), hunks(bl, splitLines(b))
	var out strings.Builder
	pos := 0 // the next base line to copy
	apply := func(h hunk) {
		for _, l := range bl[pos:h.start] {
			out.WriteString(l)
		}
		for _, l := range h.lines {
			out.WriteString(l)
		}
		pos = h.end
	}
	for len(ha) > 0 || len(hb) > 0 {
		switch {
		case len(hb) == 0:
			apply(ha[0])
			ha = ha[1:]
		case len(ha) == 0:
			apply(hb[0])
			hb = hb[1:]
		case ha[0].same(hb[0]):
			apply(ha[0])
			ha, hb = ha[1:], hb[1:]
		case ha[0].conflicts(hb[0]):
			return nil, false
		case ha[0].before(hb[0]):
			apply(ha[0])
			ha = ha[1:]
		default:
			apply(hb[0])
			hb = hb[1:]
		}
	}
	for _, l := range bl[pos:] {
		out.WriteString(l)
	}
	return []byte(out.String()), true
}

// A hunk replaces the base lines [start, end) with lines; start == end
// inserts lines before base line start.
type hunk struct {
	start, end int
	lines      []string
}

func (h hunk) insertion() bool { return h.start == h.end }

func (h hunk) same(o hunk) bool {
	return h.start == o.start && h.end == o.end && slices.Equal(h.lines, o.lines)
}

// conflicts reports whether h and o, of the two sides, change the same
// place differently (see merge3).
func (h hunk) conflicts(o hunk) bool {
	switch {
	case h.insertion() && o.insertion():
		return h.start == o.start
	case h.insertion():
		return o.start < h.start && h.start < o.end
	case o.insertion():
		return h.start < o.start && o.start < h.end
	}
	return h.start < o.end && o.start < h.end
}

// before reports whether h, which does not conflict with o, applies
// first: it starts earlier, or inserts where o's replaced lines start.
func (h hunk) before(o hunk) bool {
	return h.start < o.start || h.start == o.start && h.insertion()
}

// hunks returns the hunks of an edit script from base to other, in order.
func hunks(base, other []string) []hunk {
	var hs []hunk
	open := false
	for _, op := range lineEdits(base, other) {
		if op.kind == ' ' {
			open = false
			continue
		}
		if !open {
			hs = append(hs, hunk{start: op.a, end: op.a})
			open = true
		}
		h := &hs[len(hs)-1]
		if op.kind == '-' {
			h.end = op.a + 1
		} else {
			h.lines = append(h.lines, op.text)
		}
	}
	return hs
}

// maxMyers bounds the lines of a region that lineEdits gives to Myers'
// algorithm, whose trace takes memory quadratic in them: a longer region
// with no line unique to both sides is replaced whole.
const maxMyers = 1000

// lineEdits returns an edit script from a to b, in editScript's form. It
// matches the common prefix and suffix, then the lines that occur once in
// each side, in the longest run in the same order on both (as patience
// diff does), and diffs the regions between them with Myers' algorithm
// (editScript). Like any edit script, it turns a into b; it is not always
// the shortest, but it is quick on long files with changes spread over
// them, which a rewrite makes.
func lineEdits(a, b []string) []edit {
	var ops []edit
	var region func(a0, a1, b0, b1 int)
	region = func(a0, a1, b0, b1 int) {
		for a0 < a1 && b0 < b1 && a[a0] == b[b0] {
			ops = append(ops, edit{' ', a[a0], a0, b0})
			a0, b0 = a0+1, b0+1
		}
		n := 0
		for a1-n > a0 && b1-n > b0 && a[a1-n-1] == b[b1-n-1] {
			n++
		}
		a1, b1 = a1-n, b1-n
		defer func() {
			for i := range n {
				ops = append(ops, edit{' ', a[a1+i], a1 + i, b1 + i})
			}
		}()
		if a0 == a1 || b0 == b1 {
			replaceAll(&ops, a, b, a0, a1, b0, b1)
			return
		}
		anchors := uniqueMatches(a[a0:a1], b[b0:b1])
		if len(anchors) == 0 {
			if a1-a0+b1-b0 > maxMyers {
				replaceAll(&ops, a, b, a0, a1, b0, b1)
				return
			}
			for _, e := range editScript(a[a0:a1], b[b0:b1]) {
				e.a += a0
				e.b += b0
				ops = append(ops, e)
			}
			return
		}
		pa, pb := a0, b0
		for _, m := range anchors {
			i, j := a0+m[0], b0+m[1]
			region(pa, i, pb, j)
			ops = append(ops, edit{' ', a[i], i, j})
			pa, pb = i+1, j+1
		}
		region(pa, a1, pb, b1)
	}
	region(0, len(a), 0, len(b))
	return ops
}

// replaceAll appends the edits that delete a[a0:a1] and insert b[b0:b1].
func replaceAll(ops *[]edit, a, b []string, a0, a1, b0, b1 int) {
	for i := a0; i < a1; i++ {
		*ops = append(*ops, edit{'-', a[i], i, b0})
	}
	for j := b0; j < b1; j++ {
		*ops = append(*ops, edit{'+', b[j], a1, j})
	}
}

// uniqueMatches returns pairs {i, j} with a[i] == b[j], a line that occurs
// once in a and once in b: the longest sequence of them increasing in both
// i and j.
func uniqueMatches(a, b []string) [][2]int {
	type count struct{ na, nb, i, j int }
	counts := make(map[string]*count)
	for i, l := range a {
		c := counts[l]
		if c == nil {
			c = &count{}
			counts[l] = c
		}
		c.na++
		c.i = i
	}
	for j, l := range b {
		if c := counts[l]; c != nil {
			c.nb++
			c.j = j
		}
	}
	var pairs [][2]int
	for i, l := range a {
		if c := counts[l]; c.na == 1 && c.nb == 1 {
			pairs = append(pairs, [2]int{i, c.j})
		}
	}
	// The longest subsequence increasing in j (pairs are sorted by i):
	// patience sorting, with a back link from each pair to the top of the
	// pile before its own.
	var tops []int // index in pairs of the top of each pile
	prev := make([]int, len(pairs))
	for k, p := range pairs {
		n := sort.Search(len(tops), func(x int) bool { return pairs[tops[x]][1] > p[1] })
		prev[k] = -1
		if n > 0 {
			prev[k] = tops[n-1]
		}
		if n == len(tops) {
			tops = append(tops, k)
		} else {
			tops[n] = k
		}
	}
	if len(tops) == 0 {
		return nil
	}
	seq := make([][2]int, len(tops))
	for k, n := tops[len(tops)-1], len(tops)-1; k >= 0; k, n = prev[k], n-1 {
		seq[n] = pairs[k]
	}
	return seq
}
