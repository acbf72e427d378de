package shadow

import (
	"testing"
	"unsafe"
)

type slabElem struct {
	p *int
	x [7]uint64
}

// checkGrow grows a full slab of c elements and checks that growSlab kept length and contents, made room,
// left the tail zero, and doubled a slab of bigSlab bytes or more.
func checkGrow(t *testing.T, c int) {
	n := c
	t.Helper()
	vals := make([]int, 4)
	s := make([]slabElem, c)
	for i := range s {
		s[i] = slabElem{p: &vals[i%len(vals)], x: [7]uint64{uint64(i), ^uint64(i)}}
	}
	s = s[:n]
	growSlab(&s)
	if len(s) != n || cap(s) <= c {
		t.Fatalf("len %d cap %d: grew to len %d cap %d", n, c, len(s), cap(s))
	}
	if size := uintptr(c) * unsafe.Sizeof(slabElem{}); size >= bigSlab && cap(s) != 2*c {
		t.Errorf("slab of %d bytes: cap %d, want %d (doubled)", size, cap(s), 2*c)
	}
	for i, e := range s {
		if e.p != &vals[i%len(vals)] || e.x[0] != uint64(i) || e.x[1] != ^uint64(i) {
			t.Fatalf("len %d cap %d: element %d is %v after growing", n, c, i, e)
		}
	}
	for i, e := range s[len(s):cap(s)] {
		if e != (slabElem{}) {
			t.Fatalf("len %d cap %d: element %d past the length is %v, want zero", n, c, len(s)+i, e)
		}
	}
}

func TestGrowSlab(t *testing.T) {
	elem := int(unsafe.Sizeof(slabElem{}))
	for _, c := range []int{0, 1, 63, 64, 1000, bigSlab/elem - 1} {
		checkGrow(t, c)
	}
	if testing.Short() {
		return
	}
	// The doubling path, and the one that forces a collection with the
	// pointers of the new copy live.
	checkGrow(t, bigSlab/elem)
	checkGrow(t, freeSlab/elem)
}
