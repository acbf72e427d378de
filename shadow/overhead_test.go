package shadow

import (
	"unsafe"

	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestOverheadSubtracted: every strand loses the calibrated overhead of the
// event that ends it, so that the profile's work is the program's, and the
// subtracted total is what was taken off. A fib whose events each cost the
// instrumentation 10 units must have the work of the program alone, in both
// modes; with the subtraction gone (Issue 12's audit: fib's work read
// 1.03 s instead of 0.14 s while the report still printed "Overhead
// subtracted") the work is the raw readings'.
func TestOverheadSubtracted(t *testing.T) {
	const own, overhead = 7, 10
	for _, mode := range []runMode{serialMode, parallelMode} {
		t.Run(mode.String(), func(t *testing.T) {
			tab := &siteTable{}
			tab.add([]SiteInfo{
				{File: "fib.go", Line: 4, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindSpawn},
				{File: "fib.go", Line: 5, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindCall},
			})
			m := &synthetic{now: 1000}
			e := newEngine(config{Measure: m, MeasureName: "synthetic", Mode: mode, Overhead: overhead}, tab)
			start := m.now
			var program, events int64
			// work is the program's; every event costs the instrumentation
			// overhead before the engine reads the measure.
			work := func() {
				m.now += own
				program += own
			}
			event := func(f func()) {
				m.now += overhead
				events++
				f()
			}
			call, callEnd, spawnEnd, wait := e.CallBegin, e.CallEnd, e.SpawnEnd, e.Wait
			spawn := e.SpawnBegin
			if mode == parallelMode {
				call = func(s SiteID) { e.parCallBegin(s, noDepth) }
				callEnd = func() { e.parCallEnd(noDepth) }
				spawn = func(s SiteID) { e.parSpawnInline(s, noDepth) }
				wait = func(obj unsafe.Pointer) { e.parWait(obj, e.beforeWait(), noDepth) }
				spawnEnd = func(obj unsafe.Pointer) { e.parSpawnEnd(obj, noDepth) }
			}
			var fib func(n int)
			fib = func(n int) {
				work()
				if n < 2 {
					return
				}
				obj := fibObjs[n]
				event(func() { spawn(0) })
				fib(n - 1)
				event(func() { spawnEnd(obj) })
				work()
				event(func() { call(1) })
				fib(n - 2)
				event(func() { callEnd() })
				work()
				event(func() { wait(obj) })
				work()
			}
			fib(12)
			m.now += overhead // Stop's reading ends the last strand
			events++
			p := e.stop()
			if p.Work != program || p.Overhead != overhead {
				t.Errorf("work %d, overhead %d per event: want the program's %d and %d", p.Work, p.Overhead, program, overhead)
			}
			if p.Work+p.Subtracted != int64(m.now-start) || p.Subtracted != overhead*events {
				t.Errorf("subtracted %d, work %d: want %d subtracted of %d read in all", p.Subtracted, p.Work, overhead*events, m.now-start)
			}
		})
	}
}

// stepping is a measure that advances by step at every reading: all the
// engine reads in an empty loop is its own cost.
type stepping struct{ now, step uint64 }

func (s *stepping) Read() uint64 { s.now += s.step; return s.now }

// TestCalibrateOverhead: the calibration finds the cost of an event as the
// measure sees it, one reading's step per event with one reading per event.
func TestCalibrateOverhead(t *testing.T) {
	for _, mode := range []runMode{serialMode, parallelMode} {
		if got := calibrateOverhead(&stepping{step: 5}, "synthetic", mode, false); got != 5 {
			t.Errorf("%s: calibrated %d per event, want 5", mode, got)
		}
	}
}

// disturbed is stepping where something else runs now and then: in most
// stretches of blockReads readings, every 100th jumps by a millisecond.
type disturbed struct {
	stepping
	reads, blockReads uint64
	clean             map[uint64]bool // the blocks nothing disturbs
}

func (d *disturbed) Read() uint64 {
	d.reads++
	if !d.clean[(d.reads-1)/d.blockReads] && d.reads%100 == 0 {
		d.now += 1_000_000
	}
	return d.stepping.Read()
}

// TestCalibrateOverheadTakesCheapestBatch: interference in seven of the
// nine batches, enough to move their median, leaves the calibration at the
// cost of an event, which the two clean batches show.
func TestCalibrateOverheadTakesCheapestBatch(t *testing.T) {
	// The scratch engine reads the measure once when it starts, and a
	// serial batch once per event, two events per pair: block b of the
	// disturbed reads, (reads-1)/block, holds the reads of batch b but
	// its last, whose number is odd and never disturbed.
	block := uint64(2 * calibrationPairs)
	m := &disturbed{stepping: stepping{step: 5}, blockReads: block, clean: map[uint64]bool{3: true, 6: true}}
	if got := calibrateOverhead(m, "synthetic", serialMode, false); got != 5 {
		t.Errorf("calibrated %d per event with 7 of %d batches disturbed, want 5", got, calibrationBatches)
	}
	if want := 1 + uint64(calibrationBatches)*block; m.reads != want {
		t.Fatalf("the calibration read the measure %d times, want %d: the test's blocks are not its batches", m.reads, want)
	}
}
