// Pbfs computes breadth-first-search distances from one vertex of a random
// directed graph, level by level, expanding each level's frontier in
// parallel, after PBFS (Leiserson and Schardl, SPAA 2010), one of the
// programs whose profiling overhead the Cilkprof paper reports (Schardl et
// al., SPAA 2015, Figure 11). PBFS keeps each frontier in a bag reducer; this
// program cuts the frontier into chunks of -grain vertices, expands them with
// parlib.For, each into its own list of newly reached vertices, and
// concatenates the lists, in parallel again, into the next frontier. A vertex
// belongs to the goroutine whose compare-and-swap first sets its distance, so
// each vertex is expanded once; which goroutine wins can vary, the distance
// it writes cannot.
//
// The graph has -n vertices with -degree out-edges each, to vertices drawn
// from a hash of the seed, the vertex and the edge's index: any piece of it
// can be built without the others, so it is built in parallel too.
//
// A span profile of this program should show the work in three parallel
// phases of about equal size: the build (the calls of build), the search
// (the local work of the spawn site in bfs, into which the compiler inlines
// expand) and the check (the calls of check), each with a parallelism in the
// hundreds: a random graph has a dozen levels, most of its vertices in three
// or four of them, and a level's span is one chunk's expansion plus the
// spawning of the chunks. What is serial is the small remainder that bounds
// the whole program's parallelism, about 30 for the default input: the
// local work of run, whose summary loops count the reached vertices and
// hash their distances, Θ(n) each.
//
// Usage:
//
//	pbfs [-n vertices] [-degree edges] [-grain vertices] [-seed seed] [-serial]
//
// With -serial it builds the graph, searches it with a FIFO queue and checks
// the result, all with plain loops: the sequential baseline for speedup
// measurements. Either way it checks the distances with a certificate that
// does not trust the search: the source is at distance 0, no edge from a
// reached vertex skips a level or leads out of the reached set, and every
// other reached vertex has a parent one level up with an edge to it. It
// prints one line, the same for both modes:
//
//	bfs of 2000000 vertices, 16000000 edges: 1999367 reached in 11 levels, checksum b92db7da68d748d3
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pbfs:", err)
		os.Exit(1)
	}
}

// run parses args, builds a random graph, searches it from vertex 0 and
// writes the one-line result to stdout. It returns an error if the flags are
// invalid or the distances fail their check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pbfs", flag.ExitOnError)
	n := fs.Int("n", 2_000_000, "`vertices` in the graph")
	degree := fs.Int("degree", 8, "out-`edges` of each vertex")
	grain := fs.Int("grain", 512, "expand the frontier in chunks of `vertices`")
	seed := fs.Uint64("seed", 1, "random `seed` for the graph")
	serial := fs.Bool("serial", false, "build, search and check with plain loops, the sequential baseline")
	fs.Parse(args)
	switch {
	case *n < 1 || *n > 1<<30:
		return fmt.Errorf("-n %d: must be in [1, 2³⁰]", *n)
	case *degree < 0 || *n**degree > 1<<31-1:
		return fmt.Errorf("-degree %d: must not be negative, and n·degree must fit in an int32", *degree)
	case *grain < 1:
		return fmt.Errorf("-grain %d: must be positive", *grain)
	}

	g := &graph{n: *n, degree: *degree, adj: make([]int32, *n**degree)}
	var s *search
	var err error
	if *serial {
		g.build(0, g.n, *seed)
		s = g.serialBFS(0)
		err = s.check(0, g.n)
	} else {
		g.parallelBuild(*seed, *grain)
		s = g.bfs(0, *grain)
		err = s.parallelCheck(*grain)
	}
	if err != nil {
		return err
	}
	reached, levels := s.count()
	fmt.Fprintf(stdout, "bfs of %d vertices, %d edges: %d reached in %d levels, checksum %016x\n",
		g.n, len(g.adj), reached, levels, s.checksum())
	return nil
}

// A graph is a directed graph whose every vertex has the same number of
// out-edges: those of vertex u are adj[u*degree : (u+1)*degree].
type graph struct {
	n, degree int
	adj       []int32
}

// edges returns the heads of the out-edges of u.
func (g *graph) edges(u int32) []int32 {
	return g.adj[int(u)*g.degree : (int(u)+1)*g.degree]
}

// build draws the out-edges of the vertices in [lo, hi).
func (g *graph) build(lo, hi int, seed uint64) {
	for u := lo; u < hi; u++ {
		out := g.adj[u*g.degree : (u+1)*g.degree]
		for k := range out {
			// The top 32 bits of the hash, scaled to [0, n).
			x := mix(seed ^ mix(uint64(u*g.degree+k)))
			out[k] = int32((x >> 32) * uint64(g.n) >> 32)
		}
	}
}

// parallelBuild draws all the edges, in pieces of grain vertices in
// parallel.
func (g *graph) parallelBuild(seed uint64, grain int) {
	parlib.ForRange(0, g.n, grain, func(lo, hi int) { g.build(lo, hi, seed) })
}

// A search is the result of a breadth-first search: for each vertex v,
// level[v] is 0 if the search did not reach v and one more than its
// distance from the source otherwise (so that a new array, all zeros, means
// nothing reached), and parent[v] is the vertex from which the search
// reached it.
type search struct {
	g      *graph
	src    int32
	level  []int32
	parent []int32
}

func (g *graph) newSearch(src int32) *search {
	s := &search{g: g, src: src, level: make([]int32, g.n), parent: make([]int32, g.n)}
	s.level[src] = 1
	s.parent[src] = src
	return s
}

// bfs searches g from src, expanding each frontier in chunks of grain
// vertices in parallel.
func (g *graph) bfs(src int32, grain int) *search {
	s := g.newSearch(src)
	frontier := []int32{src}
	for level := int32(2); len(frontier) > 0; level++ {
		chunks := (len(frontier) + grain - 1) / grain
		found := make([][]int32, chunks)
		parlib.For(0, chunks, 1, func(c int) {
			found[c] = s.expand(frontier[c*grain:min((c+1)*grain, len(frontier))], level)
		})
		// Concatenate the chunks' lists into the next frontier.
		offset := make([]int, chunks+1)
		for c, f := range found {
			offset[c+1] = offset[c] + len(f)
		}
		next := make([]int32, offset[chunks])
		parlib.For(0, chunks, 1, func(c int) { copy(next[offset[c]:], found[c]) })
		frontier = next
	}
	return s
}

// expand claims every unreached vertex with an edge from the frontier,
// setting its level to level, and returns the vertices it claimed. Other
// goroutines may expand other parts of the same frontier at the same time:
// the compare-and-swap on level decides which one claims a vertex.
func (s *search) expand(frontier []int32, level int32) []int32 {
	var found []int32
	for _, u := range frontier {
		for _, v := range s.g.edges(u) {
			if atomic.LoadInt32(&s.level[v]) == 0 && atomic.CompareAndSwapInt32(&s.level[v], 0, level) {
				s.parent[v] = u
				found = append(found, v)
			}
		}
	}
	return found
}

// serialBFS searches g from src with a FIFO queue, the textbook algorithm.
func (g *graph) serialBFS(src int32) *search {
	s := g.newSearch(src)
	queue := make([]int32, 1, g.n)
	queue[0] = src
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		next := s.level[u] + 1
		for _, v := range g.edges(u) {
			if s.level[v] == 0 {
				s.level[v] = next
				s.parent[v] = u
				queue = append(queue, v)
			}
		}
	}
	return s
}

// check reports, as an error, whether the search's levels of the vertices
// in [lo, hi) break a rule of breadth-first search: the source has level 1;
// every edge from a reached vertex leads to a reached vertex at most one
// level further; and every other reached vertex has as parent a vertex one
// level closer with an edge to it. Together, over all vertices, the rules
// say that the levels are the distances from the source plus one, and that
// the vertices with level 0 are exactly those the source cannot reach.
func (s *search) check(lo, hi int) error {
	g := s.g
	for u := int32(lo); int(u) < hi; u++ {
		lu := s.level[u]
		if u == s.src && lu != 1 {
			return fmt.Errorf("source %d has distance %d, want 0", u, lu-1)
		}
		if lu == 0 {
			continue
		}
		for _, v := range g.edges(u) {
			if lv := s.level[v]; lv == 0 || lv > lu+1 {
				return fmt.Errorf("edge %d→%d: vertex %d has distance %d, vertex %d %s", u, v, u, lu-1, v, distance(lv))
			}
		}
		if u == s.src {
			continue
		}
		if lu == 1 {
			return fmt.Errorf("vertex %d is not the source %d but has distance 0", u, s.src)
		}
		p := s.parent[u]
		if p < 0 || int(p) >= g.n || s.level[p] != lu-1 {
			return fmt.Errorf("vertex %d at distance %d has parent %d, which is not one step closer", u, lu-1, p)
		}
		hasEdge := false
		for _, v := range g.edges(p) {
			hasEdge = hasEdge || v == u
		}
		if !hasEdge {
			return fmt.Errorf("vertex %d has parent %d, but no edge %d→%d", u, p, p, u)
		}
	}
	return nil
}

// parallelCheck is check of all the vertices, in pieces of grain vertices
// in parallel. It returns the error of the first failing piece.
func (s *search) parallelCheck(grain int) error {
	pieces := (s.g.n + grain - 1) / grain
	errs := make([]error, pieces)
	parlib.For(0, pieces, 1, func(c int) {
		errs[c] = s.check(c*grain, min((c+1)*grain, s.g.n))
	})
	return firstError(errs)
}

// firstError returns the first non-nil error in errs, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// distance describes a level for an error message.
func distance(level int32) string {
	if level == 0 {
		return "is not reached"
	}
	return fmt.Sprintf("has distance %d", level-1)
}

// count returns the number of reached vertices and the number of levels.
func (s *search) count() (reached, levels int) {
	for _, l := range s.level {
		if l > 0 {
			reached++
			levels = max(levels, int(l))
		}
	}
	return reached, levels
}

// checksum is a hash of the distances, in vertex order.
func (s *search) checksum() uint64 {
	var h uint64
	for _, l := range s.level {
		h = mix(h ^ uint64(l))
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
