package perf

import (
	"fmt"
	"runtime"
	"slices"
)

// Measure reads a monotonically non-decreasing counter of the calling OS
// thread (or the process, for clock).
type Measure interface {
	// Name is the measure's name: "cpu", "clock", "instructions",
	// "cycles", "task-clock" or "synthetic".
	Name() string
	// Unit is the unit of Read: "nanoseconds", "instructions" or "cycles".
	Unit() string
	// Read returns the counter's current value; only differences between
	// reads mean anything. It is the hot path.
	Read() uint64
	// PerThread reports whether values are per OS thread, so the caller must
	// runtime.LockOSThread while measuring (cpu, instructions, cycles,
	// task-clock).
	PerThread() bool
	// Close releases the measure's resources. Closing twice is harmless;
	// Read after Close returns the last value read.
	Close() error
}

// The names that Open accepts.
const (
	// CPU is the thread's running time: the clock between events,
	// corrected by the thread's CPU time (cpu.go). It is the default.
	CPU          = "cpu"
	Clock        = "clock"
	Instructions = "instructions"
	Cycles       = "cycles"
	TaskClock    = "task-clock"
	// SyntheticName is accepted by Open for tests of instrumented programs;
	// it is not in Names.
	SyntheticName = "synthetic"
)

// Units of the measures.
const (
	UnitNanoseconds  = "nanoseconds"
	UnitInstructions = "instructions"
	UnitCycles       = "cycles"
)

// Names returns the user-selectable measures, in the order a flag's help
// should list them.
func Names() []string {
	return []string{CPU, Clock, Instructions, Cycles, TaskClock}
}

// Open opens the named measure. For per-thread measures the calling goroutine
// should already be locked to its OS thread (runtime.LockOSThread), and every
// Read must come from that thread.
//
// When a counter cannot be opened the error is an *OpenError, whose one-line
// message names the cause and the measure to use instead.
func Open(name string) (Measure, error) {
	switch name {
	case CPU:
		c, err := openCPU(DefaultPeriod)
		if err != nil {
			return nil, err
		}
		return c, nil
	case Clock:
		return openClock(), nil
	case Instructions:
		return openCounter(Instructions, UnitInstructions, true)
	case Cycles:
		return openCounter(Cycles, UnitCycles, true)
	case TaskClock:
		return openCounter(TaskClock, UnitNanoseconds, false)
	case SyntheticName:
		return NewSynthetic(), nil
	}
	return nil, fmt.Errorf("perf: unknown measure %q (want cpu, clock, instructions, cycles or task-clock)", name)
}

// OpenError reports why a counter could not be opened.
type OpenError struct {
	Measure  string // "instructions", "cycles" or "task-clock"
	Cause    string // what went wrong, ending with the errno's name, e.g. "(ENOENT)"
	Fallback string // what to use instead, e.g. "use -measure clock"
	Err      error  // the underlying error, usually a syscall.Errno
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("perf: cannot open %s counter: %s; %s", e.Measure, e.Cause, e.Fallback)
}

func (e *OpenError) Unwrap() error { return e.Err }

// Source says how m is read, for reports and logs: "tsc" (RDTSC scaled to
// nanoseconds), "nanotime" (the runtime's monotonic clock), either followed
// by "+thread-cputime" for cpu, "tsc (checked)" for a clock checked against
// the runtime's (tscWatch) and "nanotime (tsc given up)" once it parted,
// "rdpmc" (hardware counter read from user space), "read(2)" (counter read
// through the perf file descriptor), or "synthetic". It returns "" for a
// Measure from elsewhere.
func Source(m Measure) string {
	if s, ok := m.(interface{ source() string }); ok {
		return s.source()
	}
	return ""
}

// Overhead measures the cost, in m's unit, of one instrumented event: two
// back-to-back Reads (the end of one strand and the start of the next) plus
// event, if it is not nil. It runs the sequence n times after a short warm-up
// and returns the median, which the shadow runtime subtracts from every
// strand, as Cilkprof compensates for its instrumentation.
//
// A per-thread m must be read on the thread that opened it; Overhead keeps the
// calling goroutine on its thread while it measures.
func Overhead(m Measure, n int, event func()) uint64 {
	if n < 1 {
		n = 1
	}
	if m.PerThread() {
		// Lock nests, so this is harmless when the caller holds the lock
		// already, and keeps a caller that forgot it on one thread meanwhile.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	samples := make([]uint64, n)
	// Each sample spans one discarded Read, the event, and the Read that
	// closes it: exactly what instrumentation adds to a strand between the
	// strand's true end and the next strand's start.
	sample := func(samples []uint64) {
		prev := m.Read()
		for i := range samples {
			m.Read()
			if event != nil {
				event()
			}
			cur := m.Read()
			samples[i] = cur - prev
			prev = cur
		}
	}
	sample(samples[:min(n, 64)]) // warm caches, branch predictors and the event's own state
	sample(samples)
	slices.Sort(samples)
	return samples[n/2]
}
