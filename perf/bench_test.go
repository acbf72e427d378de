package perf

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkRead measures one Read of every measure that opens here, on the
// path Open chose (see Source in the log).
func BenchmarkRead(b *testing.B) {
	for _, name := range append(Names(), "synthetic") {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			m := openOrSkip(b, name)
			b.Logf("%s: %s", name, Source(m))
			b.ReportAllocs()
			for b.Loop() {
				sink += m.Read()
			}
		})
	}
}

// BenchmarkClockPath compares the ways to read a clock, to justify the choice
// in clock.go.
func BenchmarkClockPath(b *testing.B) {
	b.Run("nanotime", func(b *testing.B) {
		for b.Loop() {
			sink += uint64(nanotime())
		}
	})
	b.Run("time.Since", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			sink += uint64(time.Since(start))
		}
	})
	if ok, _ := tscUsable(); !ok {
		return
	}
	b.Run("rdtsc", func(b *testing.B) {
		for b.Loop() {
			sink += rdtsc()
		}
	})
	if !hasRDTSCP() {
		return
	}
	b.Run("rdtscp", func(b *testing.B) {
		for b.Loop() {
			sink += rdtscp()
		}
	})
}
