package region_test

import (
	"testing"

	"github.com/spanprof/spanprof/region"
)

// TestUnprofiled: outside a profiled run, Do runs its function once, and
// Begin and End do nothing and cost nothing: no allocation.
func TestUnprofiled(t *testing.T) {
	n := 0
	region.Do("count", func() { n++ })
	if n != 1 {
		t.Errorf("Do ran its function %d times, want 1", n)
	}
	if a := testing.AllocsPerRun(100, func() { region.Begin("x").End() }); a != 0 {
		t.Errorf("Begin and End allocate %v times", a)
	}
}

// BenchmarkBeginEnd: a region in an unprofiled binary, next to nothing.
func BenchmarkBeginEnd(b *testing.B) {
	for b.Loop() {
		region.Begin("x").End()
	}
}
