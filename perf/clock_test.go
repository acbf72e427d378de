package perf

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

// bracket reads m between two nanotime reads, keeping the tightest of a few
// tries, and returns m's value, the nanotime at the middle, and the bracket's
// width (the uncertainty of the pairing).
func bracket(m Measure) (v uint64, ns, width int64) {
	width = math.MaxInt64
	for range 9 {
		a := nanotime()
		x := m.Read()
		b := nanotime()
		if b-a < width {
			v, ns, width = x, a+(b-a)/2, b-a
		}
	}
	return v, ns, width
}

// TestClockTracksNanotime checks that both clock paths run at the runtime's
// monotonic clock's rate, within the calibration's precision plus the
// uncertainty of pairing the reads.
func TestClockTracksNanotime(t *testing.T) {
	for _, m := range []Measure{openClock(), nanoClock{}} {
		t.Run(Source(m), func(t *testing.T) {
			v0, n0, w0 := bracket(m)
			time.Sleep(30 * time.Millisecond)
			v1, n1, w1 := bracket(m)
			got, want := int64(v1-v0), n1-n0
			slack := want/1000 + w0 + w1 + 1000
			if got < want-slack || got > want+slack {
				t.Errorf("clock advanced %d ns while nanotime advanced %d ns (allowed ±%d)", got, want, slack)
			}
		})
	}
}

// TestClockAcrossThreads passes clock readings between two goroutines locked
// to different threads: a value read after receiving another thread's value
// must not be smaller, or strands that cross threads would measure negative.
func TestClockAcrossThreads(t *testing.T) {
	m := openClock()
	ping, pong := make(chan uint64), make(chan uint64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for v := range ping {
			if now := m.Read(); now < v {
				pong <- v - now + 1<<63 // report the backwards step
				continue
			}
			pong <- m.Read()
		}
		close(pong)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range 5000 {
		ping <- m.Read()
		v := <-pong
		if v >= 1<<63 {
			t.Fatalf("round %d: the other thread read %d ns earlier than this one had", i, v-1<<63)
		}
		if now := m.Read(); now < v {
			t.Fatalf("round %d: read %d after the other thread read %d", i, now, v)
		}
	}
	close(ping)
}

func TestCalibrateTSC(t *testing.T) {
	t.Parallel()
	// A fake 3 GHz counter driven by the runtime's clock.
	ticks := func() uint64 { return 3 * uint64(nanotime()) }
	mult, hz, ok := calibrateTSC(ticks, nanotime, time.Millisecond)
	if !ok {
		t.Fatal("calibrating a 3 GHz counter failed")
	}
	if math.Abs(hz/3e9-1) > 1e-3 {
		t.Errorf("hz = %g, want 3e9", hz)
	}
	if got := scaleTicks(3_000_000_000, mult); got < 999_000_000 || got > 1_001_000_000 {
		t.Errorf("3e9 ticks scale to %d ns, want 1e9", got)
	}

	if _, _, ok := calibrateTSC(func() uint64 { return 42 }, nanotime, time.Millisecond); ok {
		t.Error("a counter that does not tick calibrated")
	}
	slow := func() uint64 { return uint64(nanotime()) / 100 } // 10 MHz
	if _, _, ok := calibrateTSC(slow, nanotime, time.Millisecond); ok {
		t.Error("a 10 MHz counter calibrated; want it refused as implausible")
	}
}

func TestScaleTicks(t *testing.T) {
	t.Parallel()
	tests := []struct{ ticks, mult, want uint64 }{
		{0, 1 << 32, 0},
		{1000, 1 << 32, 1000},           // 1 ns per tick
		{1000, 1 << 31, 500},            // 2 GHz
		{1 << 62, 1 << 31, 1 << 61},     // no overflow at large uptimes
		{1<<63 + 5, 3 << 30, 3<<61 + 3}, // 0.75 ns per tick: 3.75 truncates to 3
		{7, 0x6666_6666, 2},             // 0.4 ns per tick: 2.8 truncates to 2
	}
	for _, tt := range tests {
		if got := scaleTicks(tt.ticks, tt.mult); got != tt.want {
			t.Errorf("scaleTicks(%d, %#x) = %d, want %d", tt.ticks, tt.mult, got, tt.want)
		}
	}
}

func TestOpenClockIsShared(t *testing.T) {
	a, b := openClock(), openClock()
	if a != b {
		t.Error("each Open of clock calibrated anew")
	}
}

func TestTSCReliable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		info string
		want bool
	}{
		{"processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc tsc_reliable rdrand\n", true},
		{"processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n", false},
		// Only the flags line counts: bugs or power management naming
		// the word do not.
		{"flags\t\t: fpu tsc\nbugs\t\t: tsc_reliable\n", false},
		{"flags\t\t: tsc_reliable_not\n", false},
		{"", false},
	} {
		if got := tscReliable(c.info); got != c.want {
			t.Errorf("tscReliable(%q) = %v, want %v", c.info, got, c.want)
		}
	}
}

// checkedTSC returns a clock that reads the counter checked by a watch of
// its own, whatever the machine's clock source, or skips.
func checkedTSC(t *testing.T) *tscClock {
	t.Helper()
	tsc := openTSC()
	if tsc == nil {
		t.Skip("no invariant TSC here")
	}
	c := &tscClock{mult: tsc.mult, hz: tsc.hz, watch: newTSCWatch(tsc.mult)}
	if c.watch == nil {
		t.Skip("no tight bracket of nanotime between two counter reads")
	}
	return c
}

// TestTSCWatchKeepsAnAgreeingCounter: checks that find the counter in step
// with the runtime's clock keep it, and move the next check on.
func TestTSCWatchKeepsAnAgreeingCounter(t *testing.T) {
	c := checkedTSC(t)
	w := c.watch
	first := w.anchorNano
	for range 3 {
		time.Sleep(tscWatchPeriod + time.Millisecond)
		c.Read()
	}
	if w.gaveUp.Load() || Source(c) != "tsc (checked)" {
		t.Fatalf("a counter in step with the runtime's clock was given up: %s", Source(c))
	}
	if w.anchorNano == first {
		t.Error("no check ran in three periods")
	}
	if next, now := w.next.Load(), c.Read(); next <= now-uint64(tscWatchPeriod) || next > now+uint64(tscWatchPeriod) {
		t.Errorf("next check at %d, %d after the last read; want within a period", next, int64(next-now))
	}
}

// TestTSCWatchGivesUpAJumpingCounter: a check that finds the counter out
// of step with the runtime's clock (a counter that jumped forward or back,
// as one of a restored VM would) switches the clock to the runtime's for
// every thread, without a jump in the readings, which then follow the
// runtime's clock.
func TestTSCWatchGivesUpAJumpingCounter(t *testing.T) {
	for _, jump := range []time.Duration{time.Second, -time.Second, 200 * time.Microsecond} {
		t.Run(jump.String(), func(t *testing.T) {
			c := checkedTSC(t)
			w := c.watch
			v0, n0, w0 := bracket(c)
			// As if the counter had jumped since the last check: that
			// check's reading moves the other way, and the next Read
			// checks.
			w.anchorTSC -= uint64(jump)
			w.next.Store(0)
			v1, n1, w1 := bracket(c)
			if !w.gaveUp.Load() || Source(c) != "nanotime (tsc given up)" {
				t.Fatalf("after a jump of %v the clock reads by %s", jump, Source(c))
			}
			// The readings go on from where the counter would have
			// been: the clock moved as nanotime did, less the jump.
			got := int64(v1-v0) - (n1 - n0)
			if slack := w0 + w1 + 20_000; got < -int64(jump)-slack || got > -int64(jump)+slack {
				t.Errorf("across the switch the clock moved %v more than nanotime; want the jump undone, %v", time.Duration(got), -jump)
			}
			time.Sleep(20 * time.Millisecond)
			v2, n2, w2 := bracket(c)
			got, want := int64(v2-v1), n2-n1
			if slack := w1 + w2 + 1000; got < want-slack || got > want+slack {
				t.Errorf("after the switch the clock advanced %d ns while nanotime advanced %d", got, want)
			}
			// Another thread reads the runtime's clock too.
			other := make(chan uint64)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				other <- c.Read()
			}()
			if v, now := <-other, c.Read(); v > now || now-v > uint64(time.Second) {
				t.Errorf("another thread read %d, this one %d after it", v, now)
			}
		})
	}
}

// TestTSCWatchConcurrent reads a checked counter from several goroutines
// across many checks, for the race detector: one check at a time, and
// every thread's readings go forward.
func TestTSCWatchConcurrent(t *testing.T) {
	c := checkedTSC(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			last := c.Read()
			for deadline := time.Now().Add(5 * tscWatchPeriod); time.Now().Before(deadline); {
				if now := c.Read(); now < last {
					t.Errorf("read %d after %d on one thread", now, last)
					return
				}
				last = c.Read()
			}
		})
	}
	wg.Wait()
	if c.watch.gaveUp.Load() {
		t.Error("checks under contention gave up a counter in step with the runtime's clock")
	}
}

// TestClockGaveUpTSC: the process's clock says whether it gave up a
// checked counter, for the profile's trust figures.
func TestClockGaveUpTSC(t *testing.T) {
	old := checkedClock.Load()
	defer checkedClock.Store(old)
	c := checkedTSC(t)
	checkedClock.Store(c)
	if ClockGaveUpTSC() {
		t.Fatal("a counter in step with the runtime's clock reads as given up")
	}
	c.watch.anchorTSC -= uint64(time.Second)
	c.watch.next.Store(0)
	c.Read()
	if !ClockGaveUpTSC() {
		t.Error("a counter given up reads as kept")
	}
	checkedClock.Store(nil)
	if ClockGaveUpTSC() {
		t.Error("a clock that reads no checked counter reads as one given up")
	}
}
