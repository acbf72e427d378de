package perf

import "sync/atomic"

// Synthetic is a deterministic measure for tests: Read returns a counter that
// only Advance moves, so a test can give every strand an exact length and
// compare the profiler's results with an oracle's exactly. Its unit is
// nanoseconds, so the profile looks like a clock profile. It is safe for
// concurrent use and is not per thread.
type Synthetic struct {
	now atomic.Uint64
}

// NewSynthetic returns a Synthetic measure that reads 0.
func NewSynthetic() *Synthetic { return new(Synthetic) }

// Advance moves the counter forward by d.
func (s *Synthetic) Advance(d uint64) { s.now.Add(d) }

// Name returns "synthetic".
func (s *Synthetic) Name() string { return SyntheticName }

// Unit returns "nanoseconds".
func (s *Synthetic) Unit() string { return UnitNanoseconds }

// Read returns the sum of all Advances so far.
func (s *Synthetic) Read() uint64 { return s.now.Load() }

// PerThread reports false: the counter is shared by all goroutines.
func (s *Synthetic) PerThread() bool { return false }

// Close does nothing and returns nil; Read keeps working.
func (s *Synthetic) Close() error { return nil }

func (s *Synthetic) source() string { return "synthetic" }
