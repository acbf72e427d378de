// Convexhull computes the convex hull of random points in a disk by
// quickhull, after the convexHull benchmark of the Problem Based Benchmark
// Suite (PBBS; Shun, Blelloch, Fineman, Gibbons, Kyrola, Simhadri and
// Tangwongsan, SPAA 2012), one of the programs whose profiling overhead the
// Cilkprof paper reports (Schardl et al., SPAA 2015, Figure 11). The
// leftmost and rightmost points split the others into those below and
// above the line through them; for the points beyond an edge p→q of the hull
// so far, the farthest one, f, is a hull vertex, the points inside the
// triangle p, f, q are discarded, and the two groups beyond p→f and f→q are
// solved recursively, in parallel. For large groups the scan for the
// farthest point and the split into the two groups are themselves parallel,
// over chunks of -grain points: each chunk finds its own farthest point, or
// counts its points of each group and then copies them to their place in
// the new groups. Every spawn is an errgroup.Group's Go. The serial version
// partitions the points in place instead, as quicksort does, so that on one
// core the parallel program, which scans twice and copies, is slower.
//
// The points have integer coordinates within a radius of 2²⁹, so that every
// orientation test (a cross product) is exact in int64: the hull is the one
// of the exact point set, with no collinear vertices, and the check's
// decisive tests need no tolerance.
//
// A span profile of this program should show the work in the first levels
// of the recursion, where the point sets are large (in a disk, each level
// discards most of the points), done by the chunks of split (the calls of
// fill and the inlined counting at its spawn site), then the generation of
// the points (generate) and the check (checkPoints); the deep levels, where
// the sets are small and the serial base case runs, take little. Every
// phase is parallel, so the whole program has a parallelism in the hundreds
// for the default input: its span is a chain of phases, each one chunk of
// scanning long, and the serial bookkeeping between them (allocating the
// groups, summing the chunks' counts). The burdened parallelism is about half
// of that, since each phase's loop spawns its thousand chunks one after
// another from one goroutine.
//
// Usage:
//
//	convexhull [-n points] [-grain points] [-seed seed] [-serial]
//
// With -serial it generates the points, runs quickhull and checks the hull
// with no goroutines: the sequential baseline for speedup measurements. Either way it checks the hull without
// trusting it: its vertices are input points and make strict left turns
// around one full revolution, and no input point lies outside it. It prints
// one line, the same for both modes:
//
//	hull of 16000000 points: 852 vertices, checksum e84b4f358021408a
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "convexhull:", err)
		os.Exit(1)
	}
}

// run parses args, computes the hull of random points and writes the
// one-line result to stdout. It returns an error if the flags are invalid or
// the hull fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("convexhull", flag.ExitOnError)
	n := fs.Int("n", 16_000_000, "`n` random points in a disk")
	grain := fs.Int("grain", 16384, "solve groups of at most `points` serially, and scan larger ones in chunks of that many")
	seed := fs.Uint64("seed", 1, "random `seed` for the points")
	serial := fs.Bool("serial", false, "compute and check with no goroutines, the sequential baseline")
	fs.Parse(args)
	if *n < 0 {
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	if *grain < 1 {
		return fmt.Errorf("-grain %d: must be positive", *grain)
	}

	pts := make([]point, *n)
	var hull []point
	var err error
	if *serial {
		generate(pts, 0, *seed)
		// serialHull permutes pts, which check does not mind.
		hull = serialHull(pts)
		err = check(hull, pts)
	} else {
		parallelGenerate(pts, *seed, *grain)
		hull = quickHull(pts, *grain)
		err = parallelCheck(hull, pts, *grain)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hull of %d points: %d vertices, checksum %016x\n", *n, len(hull), checksum(hull))
	return nil
}

// A point is a point of the plane with integer coordinates.
type point struct{ x, y int64 }

// radius bounds the coordinates: they lie in [-2²⁹, 2²⁹), so differences
// of coordinates are below 2³⁰ in absolute value, their products below 2⁶⁰,
// and a cross product below 2⁶¹: orientation tests never overflow.
const radius = 1 << 29

// generate sets pts[i] to point first+i of the random sequence of seed:
// the first candidate, for k = 0, 1, ..., whose coordinates, the top 60 bits
// of a hash of seed, the point's index and k, fall strictly inside the disk
// of the given radius. Each point depends on its index only, so any part of
// the sequence can be generated without the rest.
func generate(pts []point, first int, seed uint64) {
	for i := range pts {
		h := mix(seed ^ mix(uint64(first+i)))
		for k := uint64(0); ; k++ {
			u := mix(h + k)
			x, y := int64(u>>34)-radius, int64(u<<30>>34)-radius
			if x*x+y*y < radius*radius {
				pts[i] = point{x, y}
				break
			}
		}
	}
}

// parallelGenerate is generate of all of pts, in chunks of grain points in
// parallel.
func parallelGenerate(pts []point, seed uint64, grain int) {
	var g errgroup.Group
	for lo := 0; lo < len(pts); lo += grain {
		g.Go(func() error {
			generate(pts[lo:min(lo+grain, len(pts))], lo, seed)
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
}

// cross returns twice the signed area of the triangle o, a, b: positive if
// b is to the left of the directed line o→a, negative if to its right, zero
// if the three are collinear.
func cross(o, a, b point) int64 {
	return (a.x-o.x)*(b.y-o.y) - (a.y-o.y)*(b.x-o.x)
}

// less orders points by x, then by y.
func less(a, b point) bool {
	return a.x < b.x || a.x == b.x && a.y < b.y
}

// quickHull returns the vertices of the convex hull of pts, counterclockwise
// from the leftmost (lowest of the leftmost) point, scanning and splitting
// large groups in parallel chunks of grain points. It does not modify pts.
func quickHull(pts []point, grain int) []point {
	if len(pts) == 0 {
		return nil
	}
	l, r := extremes(pts, grain)
	if l == r {
		return []point{l}
	}
	below, above := split(pts, l, r, l, grain)
	var g errgroup.Group
	var lower []point
	g.Go(func() error {
		lower = quick(l, r, below, grain)
		return nil
	})
	upper := quick(r, l, above, grain)
	g.Wait() // the spawned function never fails
	hull := append([]point{l}, lower...)
	hull = append(hull, r)
	return append(hull, upper...)
}

// quick returns the vertices of the hull strictly between p and q, in order
// from p to q, given the points s strictly to the right of p→q. It owns s
// and may reorder it.
func quick(p, q point, s []point, grain int) []point {
	if len(s) <= grain {
		return serialQuick(p, q, s)
	}
	f := farthest(s, p, q, grain)
	s1, s2 := split(s, p, f, q, grain)
	var g errgroup.Group
	var left []point
	g.Go(func() error {
		left = quick(p, f, s1, grain)
		return nil
	})
	right := quick(f, q, s2, grain)
	g.Wait() // the spawned function never fails
	return append(append(left, f), right...)
}

// extremes returns the least and the greatest point of pts by less, which
// must not be empty, from the extremes of chunks of grain points found in
// parallel.
func extremes(pts []point, grain int) (lo, hi point) {
	chunks := (len(pts) + grain - 1) / grain
	los, his := make([]point, chunks), make([]point, chunks)
	var g errgroup.Group
	for c := range chunks {
		g.Go(func() error {
			los[c], his[c] = serialExtremes(pts[c*grain : min((c+1)*grain, len(pts))])
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	lo, _ = serialExtremes(los)
	_, hi = serialExtremes(his)
	return lo, hi
}

// farthest returns the farthest point of s, which must not be empty, to the
// right of p→q, as serialFarthest chooses it, from the farthest of chunks of
// grain points found in parallel.
func farthest(s []point, p, q point, grain int) point {
	chunks := (len(s) + grain - 1) / grain
	best := make([]point, chunks)
	var g errgroup.Group
	for c := range chunks {
		g.Go(func() error {
			best[c] = serialFarthest(s[c*grain:min((c+1)*grain, len(s))], p, q)
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	return serialFarthest(best, p, q)
}

// split returns, in new slices, the points of s strictly to the right of
// p→f and those strictly to the right of f→q. For the points of a quickhull
// step, to the right of p→q with f the farthest, the two groups are disjoint
// and the points in neither lie in the triangle p, f, q. It is PBBS's
// parallel pack: count the points of each group in chunks of grain points
// in parallel, sum the counts to find where each chunk's points go, and copy
// them there, in parallel again.
func split(s []point, p, f, q point, grain int) (s1, s2 []point) {
	chunks := (len(s) + grain - 1) / grain
	// Chunk c's points go to s1[at1[c]:at1[c+1]] and s2[at2[c]:at2[c+1]].
	at1, at2 := make([]int, chunks+1), make([]int, chunks+1)
	var g errgroup.Group
	for c := range chunks {
		g.Go(func() error {
			at1[c+1], at2[c+1] = count(s[c*grain:min((c+1)*grain, len(s))], p, f, q)
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	for c := range chunks {
		at1[c+1] += at1[c]
		at2[c+1] += at2[c]
	}
	s1, s2 = make([]point, at1[chunks]), make([]point, at2[chunks])
	for c := range chunks {
		g.Go(func() error {
			fill(s[c*grain:min((c+1)*grain, len(s))], p, f, q, s1[at1[c]:at1[c+1]], s2[at2[c]:at2[c+1]])
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	return s1, s2
}

// count returns the numbers of points of s strictly to the right of p→f
// and strictly to the right of f→q but not of p→f.
func count(s []point, p, f, q point) (n1, n2 int) {
	for _, t := range s {
		if cross(p, f, t) < 0 {
			n1++
		} else if cross(f, q, t) < 0 {
			n2++
		}
	}
	return n1, n2
}

// fill copies the points of s that count counts into s1 and s2, in order.
func fill(s []point, p, f, q point, s1, s2 []point) {
	i, j := 0, 0
	for _, t := range s {
		if cross(p, f, t) < 0 {
			s1[i] = t
			i++
		} else if cross(f, q, t) < 0 {
			s2[j] = t
			j++
		}
	}
}

// serialHull is quickHull with no goroutines. It reorders pts.
func serialHull(pts []point) []point {
	if len(pts) == 0 {
		return nil
	}
	l, r := serialExtremes(pts)
	if l == r {
		return []point{l}
	}
	below, above := partition(pts, l, r, l)
	hull := append([]point{l}, serialQuick(l, r, below)...)
	hull = append(hull, r)
	return append(hull, serialQuick(r, l, above)...)
}

// serialQuick is quick with no goroutines: it partitions s in place.
func serialQuick(p, q point, s []point) []point {
	if len(s) == 0 {
		return nil
	}
	f := serialFarthest(s, p, q)
	s1, s2 := partition(s, p, f, q)
	left := serialQuick(p, f, s1)
	return append(append(left, f), serialQuick(f, q, s2)...)
}

// partition reorders s so that the points strictly to the right of p→f come
// first and those strictly to the right of f→q last, the others between,
// and returns the first two groups, as split does: a three-way partition in
// one pass.
func partition(s []point, p, f, q point) (s1, s2 []point) {
	i, k, j := 0, 0, len(s)
	for k < j {
		t := s[k]
		switch {
		case cross(p, f, t) < 0:
			s[i], s[k] = t, s[i]
			i++
			k++
		case cross(f, q, t) < 0:
			j--
			s[k], s[j] = s[j], t
		default:
			k++
		}
	}
	return s[:i], s[j:]
}

// serialExtremes returns the least and the greatest point of pts, which
// must not be empty, by less.
func serialExtremes(pts []point) (lo, hi point) {
	lo, hi = pts[0], pts[0]
	for _, t := range pts[1:] {
		if less(t, lo) {
			lo = t
		}
		if less(hi, t) {
			hi = t
		}
	}
	return lo, hi
}

// serialFarthest returns the farthest point of s, which must not be empty,
// to the right of p→q, and of those at the same distance the one farthest
// along p→q. The tie-break makes the choice a vertex of the hull, not a
// point inside an edge of it, and, as the two distances locate a point,
// independent of the order of s.
func serialFarthest(s []point, p, q point) point {
	d := point{q.x - p.x, q.y - p.y}
	f, cf := s[0], cross(p, q, s[0])
	for _, t := range s[1:] {
		if c := cross(p, q, t); c < cf || c == cf && d.x*(t.x-f.x)+d.y*(t.y-f.y) > 0 {
			f, cf = t, c
		}
	}
	return f
}

// check reports, as an error, whether hull is not the convex hull of pts:
// whether its vertices make a turn that is not strictly to the left, or wind
// around more than once, or a point lies outside it, or one of its vertices
// is not a point of pts.
func check(hull, pts []point) error {
	if err := checkShape(hull, len(pts)); err != nil {
		return err
	}
	seen, err := checkPoints(hull, pts)
	if err != nil {
		return err
	}
	return checkSeen(hull, seen)
}

// parallelCheck is check of all pts, in chunks of grain points in parallel.
// It returns the error of the first failing chunk.
func parallelCheck(hull, pts []point, grain int) error {
	if err := checkShape(hull, len(pts)); err != nil {
		return err
	}
	chunks := (len(pts) + grain - 1) / grain
	errs := make([]error, chunks)
	seen := make([][]int, chunks)
	var g errgroup.Group
	for c := range chunks {
		g.Go(func() error {
			seen[c], errs[c] = checkPoints(hull, pts[c*grain:min((c+1)*grain, len(pts))])
			return nil
		})
	}
	g.Wait() // the spawned functions never fail
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return checkSeen(hull, slices.Concat(seen...))
}

// checkShape reports, as an error, whether hull, the hull of n points, is
// not a strictly convex polygon winding once counterclockwise, or has the
// wrong number of vertices for a degenerate point set.
func checkShape(hull []point, n int) error {
	h := len(hull)
	switch {
	case (h == 0) != (n == 0):
		return fmt.Errorf("hull of %d points has %d vertices", n, h)
	case h == 2 && hull[0] == hull[1]:
		return errors.New("hull has the same vertex twice")
	case h < 3:
		return nil
	}
	// Every turn is strictly to the left, by less than half a revolution,
	// so the direction of the edges crosses the direction of the positive
	// x axis once per revolution.
	winds := 0
	for i := range h {
		a, b, c := hull[i], hull[(i+1)%h], hull[(i+2)%h]
		if cross(a, b, c) <= 0 {
			return fmt.Errorf("hull turns right or goes straight at vertex %d, %v", (i+1)%h, b)
		}
		if !inUpperHalf(point{b.x - a.x, b.y - a.y}) && inUpperHalf(point{c.x - b.x, c.y - b.y}) {
			winds++
		}
	}
	if winds != 1 {
		return fmt.Errorf("hull winds around %d times", winds)
	}
	return nil
}

// inUpperHalf reports whether the direction d has an angle in [0, π) with
// the positive x axis.
func inUpperHalf(d point) bool {
	return d.y > 0 || d.y == 0 && d.x > 0
}

// checkPoints reports, as an error, whether a point of pts lies outside
// hull, a convex polygon that passed checkShape, and returns the indices i
// of the vertices hull[i] that are among pts, some perhaps more than once.
// For three or more vertices, a point
// strictly inside innerDisk passes at once; for any other, it finds the
// triangle of the fan from hull[0] whose angle holds the point by binary
// search, and tests the point against its outer edge, exactly.
func checkPoints(hull, pts []point) (seen []int, err error) {
	h := len(hull)
	cx, cy, r2 := innerDisk(hull)
	for _, t := range pts {
		if dx, dy := float64(t.x)-cx, float64(t.y)-cy; dx*dx+dy*dy < r2 {
			continue
		}
		switch h {
		case 1:
			if t != hull[0] {
				return nil, fmt.Errorf("point %v is outside the hull, the single point %v", t, hull[0])
			}
			seen = append(seen, 0)
			continue
		case 2:
			a, b := hull[0], hull[1]
			if cross(a, b, t) != 0 || min(a.x, b.x) > t.x || t.x > max(a.x, b.x) || min(a.y, b.y) > t.y || t.y > max(a.y, b.y) {
				return nil, fmt.Errorf("point %v is outside the hull, the segment %v–%v", t, a, b)
			}
			if t == a {
				seen = append(seen, 0)
			} else if t == b {
				seen = append(seen, 1)
			}
			continue
		}
		o := hull[0]
		if t == o {
			seen = append(seen, 0)
			continue
		}
		if cross(o, hull[1], t) < 0 || cross(o, hull[h-1], t) > 0 {
			return nil, fmt.Errorf("point %v is outside the hull, beyond its first or last edge", t)
		}
		// The largest k in [1, h-2] with t not to the right of o→hull[k].
		lo, hi := 1, h-2
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if cross(o, hull[mid], t) >= 0 {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		a, b := hull[lo], hull[lo+1]
		if cross(a, b, t) < 0 {
			return nil, fmt.Errorf("point %v is outside the hull, beyond the edge %v–%v", t, a, b)
		}
		if t == a {
			seen = append(seen, lo)
		} else if t == b {
			seen = append(seen, lo+1)
		}
	}
	return seen, nil
}

// innerDisk returns the center and the squared radius of a disk inside
// hull, a convex polygon that passed checkShape, away from its boundary: the
// center is the mean of the vertices, the radius its distance from the
// nearest edge, less a relative margin of 10⁻⁹. Rounding in float64 errs by
// less than 10⁻¹² relative for these coordinates, so a point that tests
// strictly inside the disk is strictly inside the hull, and is not a
// vertex. For fewer than three vertices the disk is empty.
func innerDisk(hull []point) (cx, cy, r2 float64) {
	h := len(hull)
	if h < 3 {
		return 0, 0, 0
	}
	for _, v := range hull {
		cx += float64(v.x)
		cy += float64(v.y)
	}
	cx, cy = cx/float64(h), cy/float64(h)
	r := math.Inf(1)
	for i, a := range hull {
		b := hull[(i+1)%h]
		ex, ey := float64(b.x-a.x), float64(b.y-a.y)
		r = min(r, (ex*(cy-float64(a.y))-ey*(cx-float64(a.x)))/math.Hypot(ex, ey))
	}
	if r <= 0 {
		return cx, cy, 0
	}
	r *= 1 - 1e-9
	return cx, cy, r * r
}

// checkSeen reports, as an error, whether a vertex of hull is not in seen,
// the indices of the vertices found among the points.
func checkSeen(hull []point, seen []int) error {
	found := make([]bool, len(hull))
	for _, i := range seen {
		found[i] = true
	}
	for i, f := range found {
		if !f {
			return fmt.Errorf("hull vertex %d, %v, is not one of the points", i, hull[i])
		}
	}
	return nil
}

// checksum is a hash of the hull's vertices in order.
func checksum(hull []point) uint64 {
	var h uint64
	for _, p := range hull {
		h = mix(h ^ uint64(p.x))
		h = mix(h ^ uint64(p.y))
	}
	return h
}

// mix is the SplitMix64 finalizer, a cheap bijective hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
