package perf

import (
	"errors"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockThread keeps the test's goroutine on one OS thread, as per-thread
// measures require. Subtests and sub-benchmarks run on goroutines of their
// own, so each must lock again.
func lockThread(t testing.TB) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

// openOrSkip opens name, skipping the test only for the documented reasons a
// counter cannot be opened (not supported here, or not permitted), with the
// error's own message.
func openOrSkip(t testing.TB, name string) Measure {
	t.Helper()
	m, err := Open(name)
	if err != nil {
		if unavailable(err) {
			t.Skip(err.Error())
		}
		t.Fatalf("Open(%q): %v", name, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// unavailable reports whether err is Open's documented failure for a counter
// this machine or this user cannot have.
func unavailable(err error) bool {
	var oe *OpenError
	if !errors.As(err, &oe) {
		return false
	}
	return strings.Contains(oe.Cause, "not supported") || strings.Contains(oe.Cause, "permission denied") ||
		strings.Contains(oe.Cause, "need Linux") || strings.Contains(oe.Cause, "no perf_event_open") ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, errors.ErrUnsupported)
}

// spin burns CPU in user mode.
//
//go:noinline
func spin(n int) uint64 {
	x := uint64(1)
	for i := range n {
		x = x*6364136223846793005 + uint64(i)
	}
	return x
}

var sink uint64

// spinSink keeps the work of a goroutine that spins beside a test's own.
var spinSink atomic.Uint64

func TestNames(t *testing.T) {
	want := []string{"cpu", "clock", "instructions", "cycles", "task-clock"}
	got := Names()
	if !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if Names()[0] != "cpu" {
		t.Fatal("Names returns shared storage")
	}
}

func TestOpenUnknown(t *testing.T) {
	for _, name := range []string{"x", "", "Clock", "wall"} {
		_, err := Open(name)
		want := `perf: unknown measure "` + name + `" (want cpu, clock, instructions, cycles or task-clock)`
		if err == nil || err.Error() != want {
			t.Errorf("Open(%q) error = %v, want %s", name, err, want)
		}
	}
}

func TestMeasures(t *testing.T) {
	units := map[string]string{
		"cpu":          "nanoseconds",
		"clock":        "nanoseconds",
		"instructions": "instructions",
		"cycles":       "cycles",
		"task-clock":   "nanoseconds",
		"synthetic":    "nanoseconds",
	}
	perThread := map[string]bool{"cpu": true, "instructions": true, "cycles": true, "task-clock": true}
	for _, name := range append(Names(), "synthetic") {
		t.Run(name, func(t *testing.T) {
			lockThread(t)
			m := openOrSkip(t, name)
			if m.Name() != name || m.Unit() != units[name] || m.PerThread() != perThread[name] {
				t.Errorf("Name, Unit, PerThread = %q, %q, %v; want %q, %q, %v",
					m.Name(), m.Unit(), m.PerThread(), name, units[name], perThread[name])
			}
			if Source(m) == "" {
				t.Error("Source is empty")
			}
			t.Logf("%s read by %s", name, Source(m))
			prev := m.Read()
			first := prev
			for i := range 2000 {
				sink += spin(100)
				v := m.Read()
				if v < prev {
					t.Fatalf("read %d: %d after %d: not monotonic", i, v, prev)
				}
				prev = v
			}
			if name != "synthetic" && prev == first {
				t.Errorf("%s did not advance over 2000 reads and busy loops", name)
			}
			if o := Overhead(m, 50, nil); name != "synthetic" && o == 0 {
				t.Errorf("Overhead(%s) = 0: two reads cost nothing", name)
			}
			if allocs := testing.AllocsPerRun(100, func() { m.Read() }); allocs != 0 {
				t.Errorf("Read allocates %v times", allocs)
			}
			last := m.Read()
			if err := m.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := m.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if name != "clock" && name != "cpu" { // clocks keep running after Close: they hold nothing
				if v := m.Read(); v != last {
					t.Errorf("Read after Close = %d, want the last value %d", v, last)
				}
			}
		})
	}
}

func TestSynthetic(t *testing.T) {
	s := NewSynthetic()
	if s.Read() != 0 {
		t.Fatalf("new Synthetic reads %d", s.Read())
	}
	s.Advance(5)
	s.Advance(0)
	if got := s.Read(); got != 5 {
		t.Fatalf("after Advance(5): %d", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				s.Advance(3)
			}
		})
	}
	wg.Wait()
	if got := s.Read(); got != 5+8*1000*3 {
		t.Fatalf("after concurrent Advances: %d, want %d", got, 5+8*1000*3)
	}
	m, err := Open("synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "synthetic" || Source(m) != "synthetic" {
		t.Errorf("Open(synthetic) gives %q from %q", m.Name(), Source(m))
	}
}

func TestOverheadSynthetic(t *testing.T) {
	s := NewSynthetic()
	if got := Overhead(s, 100, nil); got != 0 {
		t.Errorf("Overhead with no event = %d, want 0", got)
	}
	if got := Overhead(s, 101, func() { s.Advance(7) }); got != 7 {
		t.Errorf("Overhead with an event of 7 = %d, want 7", got)
	}
	// The median ignores rare outliers, as it must for interrupts.
	i := 0
	event := func() {
		i++
		d := uint64(2)
		if i%10 == 0 {
			d = 1000
		}
		s.Advance(d)
	}
	if got := Overhead(s, 1000, event); got != 2 {
		t.Errorf("Overhead with 10%% outliers = %d, want the median 2", got)
	}
	if got := Overhead(s, 0, func() { s.Advance(1) }); got != 1 {
		t.Errorf("Overhead with n=0 = %d, want one sample of 1", got)
	}
}

func TestOverheadClock(t *testing.T) {
	m := openOrSkip(t, "clock")
	got := Overhead(m, 1000, nil)
	// Two reads cost something, and far less than a millisecond: a huge
	// value would be a negative difference wrapped around.
	if got == 0 || got > uint64(time.Millisecond) {
		t.Errorf("Overhead(clock) = %d ns, want between 1 ns and 1 ms", got)
	}
	t.Logf("clock: %d ns per event (two reads)", got)
	// The event's own time counts: a 200 µs sleep cannot take less.
	if got := Overhead(m, 5, func() { time.Sleep(200 * time.Microsecond) }); got < uint64(200*time.Microsecond) {
		t.Errorf("Overhead(clock, sleep 200µs) = %d ns, want at least 200000", got)
	}
}
