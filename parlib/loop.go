package parlib

import "runtime"

// For calls body(i) for every i in [lo, hi), in parallel, and returns when
// all calls have returned. The range is split into pieces of at most grain
// indices (see the package documentation for grain <= 0); indices within a
// piece run in increasing order on one goroutine. A panic in body is
// re-raised as a [*PanicError] after every piece has finished.
func For(lo, hi, grain int, body func(i int)) {
	ForRange(lo, hi, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body(i)
		}
	})
}

// ForRange calls body(l, h) for disjoint pieces [l, h) that together cover
// [lo, hi), in parallel, and returns when all calls have returned. Each piece
// has at most grain indices (see the package documentation for grain <= 0);
// use it instead of [For] when the body benefits from seeing a whole piece,
// for example to keep a per-piece accumulator. A panic in body is re-raised
// as a [*PanicError] after every piece has finished.
func ForRange(lo, hi, grain int, body func(lo, hi int)) {
	if hi <= lo {
		return
	}
	// Sizes are unsigned so that hi-lo cannot overflow, even for
	// [math.MinInt, math.MaxInt).
	n := uint(hi) - uint(lo)
	g := uint(grain)
	if grain <= 0 {
		g = defaultGrain(n)
	}
	// The whole loop is one join object: every half spawned at any depth is
	// a child of the same Group, and the loop syncs once, at the end. The
	// DAG is still series-parallel, since all pieces meet at that one sync,
	// and no goroutine blocks halfway down the recursion.
	var grp Group
	grp.inline(func() { split(&grp, lo, hi, g, body) })
}

// ForEach calls body(i, &s[i]) for every index of s, in parallel, and
// returns when all calls have returned; body may modify the element through
// the pointer. Grain and panics are as for [For].
func ForEach[T any](s []T, grain int, body func(i int, v *T)) {
	ForRange(0, len(s), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body(i, &s[i])
		}
	})
}

// split runs body over [lo, hi) in the style of cilk_for: while the range is
// larger than grain it spawns the upper half into g and goes on with the
// lower half, so the calling goroutine ends with the first piece.
func split(g *Group, lo, hi int, grain uint, body func(lo, hi int)) {
	for n := uint(hi) - uint(lo); n > grain; n = uint(hi) - uint(lo) {
		mid := lo + int(n/2)
		upper := hi
		spawn(g, func() { split(g, mid, upper, grain, body) })
		hi = mid
	}
	body(lo, hi)
}

// defaultGrain is the grain for n iterations when the caller gives none:
// about eight pieces per processor, and at least one index per piece.
func defaultGrain(n uint) uint {
	return max(1, n/(8*uint(runtime.GOMAXPROCS(0))))
}
