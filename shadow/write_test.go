package shadow

import "testing"

// TestCollectBeforeWrite: the collector runs before the profile is written
// only where the write allocates more than a collection scans, as in the
// runs measured for it (docs/benchmarks.md).
func TestCollectBeforeWrite(t *testing.T) {
	for _, c := range []struct {
		name     string
		contexts int
		scan     uint64
		want     bool
	}{
		{"matmul: 17,611 contexts, 3.5 MB to scan", 17_611, 3_536_368, true},
		{"cholesky: 2,939 contexts, 1.85 MB to scan", 2_939, 1_850_768, true},
		{"cilksort: 2,994 contexts, 12 MB to scan", 2_994, 12_026_576, false},
		{"treesum: 13 contexts, 207 MB to scan", 13, 207_546_128, false},
		{"the runtime says nothing", 100_000, 0, false},
	} {
		if got := collectBeforeWrite(c.contexts, c.scan); got != c.want {
			t.Errorf("%s: collectBeforeWrite = %v, want %v", c.name, got, c.want)
		}
	}
	// A running program has stacks and globals to scan at the least: a
	// scanBytes that reads 0 turns the collection off everywhere.
	if scanBytes() == 0 {
		t.Error("scanBytes() = 0: the runtime's metrics were not read")
	}
}
