package parlib

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkSpawnSync measures one spawn of an empty child and its sync: the
// scheduling burden of a single fork/join.
func BenchmarkSpawnSync(b *testing.B) {
	var g Group
	for b.Loop() {
		g.Spawn(func() {})
		g.Sync()
	}
}

// BenchmarkSpawnWait is BenchmarkSpawnSync through Spawn and Task.Wait.
func BenchmarkSpawnWait(b *testing.B) {
	for b.Loop() {
		Spawn(func() int { return 1 }).Wait()
	}
}

// BenchmarkDo2 measures Do with two empty functions: one spawn, one sync.
func BenchmarkDo2(b *testing.B) {
	f := func() {}
	for b.Loop() {
		Do(f, f)
	}
}

// BenchmarkFor runs a light body over 1e6 elements with several grains,
// next to the plain loop it replaces; ns/elem is comparable across rows.
func BenchmarkFor(b *testing.B) {
	const n = 1_000_000
	out := make([]float64, n)
	body := func(i int) { out[i] = math.Sqrt(float64(i)) * 1.5 }
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
	}
	b.Run("loop", func(b *testing.B) {
		for b.Loop() {
			for i := range n {
				body(i)
			}
		}
		report(b)
	})
	for _, grain := range []int{0, 64, 1024, 16384, 262144} {
		name := fmt.Sprintf("grain=%d", grain)
		if grain == 0 {
			name = "grain=default"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				For(0, n, grain, body)
			}
			report(b)
		})
	}
}
