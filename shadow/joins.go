package shadow

import "unsafe"

// joinAcc is a join object's accumulator (docs/model.md): the longest path
// of the contributions since the last wait on the object, and the longest
// burdened path.
//
// It holds no Go pointer: every wait moves accumulators in the table
// (removeAt), and an accumulator with pointers was copied with write
// barriers and bulk barrier checks. What needs pointers, and only some runs
// have, lives in a joinExt beside it.
//
// Only a slot in use has a meaningful accumulator: removeAt clears the key
// alone, and get clears has and ext when it takes a slot. An accumulator
// without has holds no contribution (its other fields are stale), and one
// in use has has set or a joinExt: every contribution sets has (contribute,
// longest) or goes to a lane (toLane), and no one else inserts.
type joinAcc struct {
	has   bool
	ext   int32 // index of the accumulator's joinExt in joinTable.exts; 0: none
	t, tb int64
	path  prof
	chain recRef
}

// joinExt is the part of an accumulator that only a run with a what-if
// profile or a group with a limit needs.
type joinExt struct {
	w *wvec // the what-if variants (whatif.go); nil without
	// lanes are the ends of the children of a group with a limit since
	// its last wait, one per slot (limit.go).
	lanes []value
}

// joinTable maps join objects, by address, to accumulators: open addressing
// with linear probing and backward-shift deletion, keyed by the pointer
// itself. Holding the pointer keeps the object alive, so its address cannot
// be reused while an accumulator for it exists, and passing it as a pointer
// makes the compiler move stack objects to the heap, where they do not move.
type joinTable struct {
	keys []unsafe.Pointer
	accs []joinAcc
	n    int

	exts     []joinExt // exts[0] is unused: ext 0 is none
	freeExts []int32
}

// ext returns acc's joinExt, giving it one if it has none. The pointer is
// good until the next ext given: the slice of them grows by copying.
func (jt *joinTable) ext(acc *joinAcc) *joinExt {
	if acc.ext == 0 {
		if n := len(jt.freeExts); n > 0 {
			acc.ext = jt.freeExts[n-1]
			jt.freeExts = jt.freeExts[:n-1]
		} else {
			if len(jt.exts) == 0 {
				jt.exts = append(jt.exts, joinExt{})
			}
			jt.exts = append(jt.exts, joinExt{})
			acc.ext = int32(len(jt.exts) - 1)
		}
	}
	return &jt.exts[acc.ext]
}

// extOf returns acc's joinExt, or nil if it has none.
func (jt *joinTable) extOf(acc *joinAcc) *joinExt {
	if acc.ext == 0 {
		return nil
	}
	return &jt.exts[acc.ext]
}

// freeExt takes acc's joinExt back, whose contents the caller has taken
// over or dropped.
func (jt *joinTable) freeExt(acc *joinAcc) {
	if acc.ext != 0 {
		jt.exts[acc.ext] = joinExt{}
		jt.freeExts = append(jt.freeExts, acc.ext)
		acc.ext = 0
	}
}

func (jt *joinTable) init() {
	jt.keys = make([]unsafe.Pointer, 16)
	jt.accs = make([]joinAcc, 16)
}

func (jt *joinTable) slot(p unsafe.Pointer) uint64 {
	return (uint64(uintptr(p)) * 0x9E3779B97F4A7C15) >> 32 & uint64(len(jt.keys)-1)
}

// get returns the accumulator of p, inserting an empty one. The table
// grows at a quarter full, not half: a program has few join objects live
// at once (one per open fork level), and at half full a wait's removal
// shifted its neighbours back (removeAt's loop) at most of profiled fib's
// nodes, where heap addresses hash unevenly: 21 instructions a node
// (BenchmarkFibAPI, callgrind).
func (jt *joinTable) get(p unsafe.Pointer) *joinAcc {
	mask := uint64(len(jt.keys) - 1)
	for i := jt.slot(p); ; i = (i + 1) & mask {
		switch jt.keys[i] {
		case p:
			return &jt.accs[i]
		case nil:
			if 4*(jt.n+1) > len(jt.keys) {
				jt.grow()
				return jt.get(p)
			}
			jt.keys[i] = p
			jt.n++
			acc := &jt.accs[i]
			acc.has, acc.ext = false, 0 // the rest is stale (see joinAcc)
			return acc
		}
	}
}

// take removes p's accumulator and returns it, without its joinExt.
func (jt *joinTable) take(p unsafe.Pointer) (joinAcc, bool) {
	i := jt.find(p)
	if i < 0 {
		return joinAcc{}, false
	}
	jt.freeExt(&jt.accs[i])
	acc := jt.accs[i]
	jt.removeAt(i)
	if !acc.has {
		return joinAcc{}, true // stale contents (see joinAcc)
	}
	return acc, true
}

// find returns the slot of p's accumulator, or -1. A wait reads the
// accumulator in place and then removes it (removeAt): taking it out by
// value copied its eleven words out and back, and zeroed them, at every
// wait.
func (jt *joinTable) find(p unsafe.Pointer) int {
	mask := uint64(len(jt.keys) - 1)
	i := jt.slot(p)
	for ; jt.keys[i] != p; i = (i + 1) & mask {
		if jt.keys[i] == nil {
			return -1
		}
	}
	return int(i)
}

// removeAt removes the accumulator in slot i, whose contents the caller
// has taken over (its joinExt freed).
func (jt *joinTable) removeAt(at int) {
	mask := uint64(len(jt.keys) - 1)
	i := uint64(at)
	// Backward-shift deletion keeps probe sequences unbroken without
	// tombstones, so the table does not fill up over a long run.
	for j := (i + 1) & mask; jt.keys[j] != nil; j = (j + 1) & mask {
		home := jt.slot(jt.keys[j])
		if (j-home)&mask >= (j-i)&mask {
			jt.keys[i] = jt.keys[j]
			jt.accs[i] = jt.accs[j]
			i = j
		}
	}
	// Only the key: get clears what a new accumulator reads. Zeroing the
	// whole accumulator too was half of removeAt's instructions.
	jt.keys[i] = nil
	jt.n--
}

func (jt *joinTable) grow() {
	keys, accs := jt.keys, jt.accs
	jt.keys = make([]unsafe.Pointer, 2*len(keys))
	jt.accs = make([]joinAcc, 2*len(keys))
	jt.n = 0
	for i, k := range keys {
		if k != nil {
			*jt.get(k) = accs[i]
		}
	}
}
