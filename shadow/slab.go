package shadow

import (
	"runtime/debug"
	"unsafe"
)

// Slab growth. The engine keeps its frames, tasks, records and path-profile
// nodes in slabs (slices indexed by small integers), which only grow: their
// size is what the serial elision keeps live, n entries on a recursion n
// deep.
const (
	// bigSlab is the size from which a slab doubles into fresh memory
	// rather than letting append grow it. Append grows a large slice by
	// 1.25x and clears the tail of each new copy, so every copy is
	// resident at once, and the old ones, together about four times the
	// last, stay resident until a collection frees them; make takes fresh
	// pages and leaves them untouched, so a doubled slab's unused half
	// costs address space only. On examples/deepchain (10⁶ links, 300 MB
	// of shadow state) doubling alone took the profiled run's peak RSS from
	// 1054 to 942 MiB and its CPU time from 5.97 to 5.32 s
	// (docs/benchmarks.md, "Memory of a deep chain").
	bigSlab = 32 << 20

	// freeSlab is the size of an old copy worth a full collection to give
	// back at once (debug.FreeOSMemory). The collection also returns any
	// other garbage, the old copies of a Go stack grown by the same
	// recursion first: deepchain's peak RSS went to 729 MiB. Its cost is a
	// scan of that stack, 150-250 ms of CPU at 10⁶ links: done on every
	// doubling from bigSlab (six times) it cost deepchain a second, done
	// from 64 MiB (twice) it measured within the noise.
	freeSlab = 64 << 20
)

// growSlab makes room for at least one more element in *s, which is full,
// keeping its length and contents, and leaves the elements past its length zero.
// Callers hold indices into a slab, never pointers across a growth.
//
// The collection it may force runs inside an event, between the read of
// the measure that ends a strand and the one that starts the next (tick and
// restart, engine.go), so no strand is charged for it.
//
//go:noinline
func growSlab[T any](s *[]T) {
	old := *s
	var zero T
	size := uintptr(cap(old)) * unsafe.Sizeof(zero)
	if size < bigSlab {
		*s = append(old, zero)[:len(old)]
		return
	}
	grown := make([]T, len(old), 2*cap(old))
	copy(grown, old)
	*s = grown
	if size >= freeSlab {
		// *s was the only reference to the old copy; old must not hold
		// it through the collection either.
		old = nil
		_ = old
		debug.FreeOSMemory()
	}
}
