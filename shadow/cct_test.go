package shadow

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStacksOracle checks stacks, which carves all stacks out of one array,
// against a walk up the parents of each context, on random trees.
func TestStacksOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 5))
	for trial := 0; trial < 100; trial++ {
		c := newContexts()
		for i, n := 0, rng.IntN(500); i < n; i++ {
			c.child(int32(rng.IntN(len(c.parent))), int32(rng.IntN(6)))
		}
		got := c.stacks()
		if len(got) != len(c.parent) {
			t.Fatalf("trial %d: %d stacks, want %d", trial, len(got), len(c.parent))
		}
		for ctx := range c.parent {
			var want []int
			for x := int32(ctx); x > 0; x = c.parent[x] {
				want = append([]int{int(c.site[x])}, want...)
			}
			if !slices.Equal(got[ctx], want) {
				t.Fatalf("trial %d: context %d: stack %v, want %v", trial, ctx, got[ctx], want)
			}
			if len(got[ctx]) != cap(got[ctx]) {
				t.Fatalf("trial %d: context %d: stack of capacity %d beyond its length %d: an append to it would overwrite the next", trial, ctx, cap(got[ctx]), len(got[ctx]))
			}
		}
	}
}
