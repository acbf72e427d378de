package tracepath

import (
	"math/rand/v2"
	"testing"
)

// TestPvec checks the persistent array against maps: updates in batches
// of any size, indexes that make the tree grow, and versions kept by an
// edge that must not change when their source goes on.
func TestPvec(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type version struct {
		v    pvec
		want map[int]cell
	}
	var kept []version
	var v pvec
	want := map[int]cell{}
	for range 2000 {
		b := newBatch()
		for range 1 + r.IntN(8) {
			i := r.IntN(1 << (5 * (1 + r.IntN(4)))) // up to 2^20: four levels
			c := cell{int64(r.IntN(1000)), 1}
			v = b.add(v, i, c)
			w := want[i]
			want[i] = cell{w.ns + c.ns, w.n + c.n}
		}
		if r.IntN(10) == 0 {
			snap := map[int]cell{}
			for k, c := range want {
				snap[k] = c
			}
			kept = append(kept, version{v, snap})
		}
	}
	kept = append(kept, version{v, want})
	for n, k := range kept {
		got := map[int]cell{}
		k.v.each(func(i int, c cell) { got[i] = c })
		if len(got) != len(k.want) {
			t.Fatalf("version %d: %d cells, want %d", n, len(got), len(k.want))
		}
		for i, c := range k.want {
			if got[i] != c || k.v.get(i) != c {
				t.Fatalf("version %d: cell %d is %v (get %v), want %v", n, i, got[i], k.v.get(i), c)
			}
		}
	}
}
