package shadow

import (
	"sync"
	"testing"
	"unsafe"
)

// withEngine makes e the running engine for the package-level entry points
// for the length of a test. Not parallel: it sets the process-wide run.
func withEngine(t *testing.T, e *engine) {
	old := current
	current = e
	t.Cleanup(func() { current = old })
}

// TestForeignGoroutinesAreIgnored: events from goroutines other than the
// profiled one leave the engine alone (run it under -race), and the
// helpers still do what the program did.
func TestForeignGoroutinesAreIgnored(t *testing.T) {
	if !goroutineCheck {
		t.Skip("no goroutine identity on this architecture")
	}
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, benchTable())
	withEngine(t, e)

	var ran sync.WaitGroup
	var foreign sync.WaitGroup
	for i := 0; i < 4; i++ {
		foreign.Add(1)
		go func() {
			defer foreign.Done()
			for j := 0; j < 200; j++ {
				CallBegin(1)
				CallEnd()
				ran.Add(1)
				Go(0, ran.Done) // a real goroutine, as the go statement was
				var wg sync.WaitGroup
				WaitGroupGo(0, &wg, func() {})
				WaitGroupWait(&wg)
			}
		}()
	}
	// Meanwhile the profiled goroutine works as usual.
	obj := unsafe.Pointer(new(wgStub))
	for i := 0; i < 200; i++ {
		m.now += 2
		spawn(0, obj, func() { m.now += 3 })
		join(obj)
	}
	foreign.Wait()
	ran.Wait()
	p := e.stop()
	if p.Spawns != 200 || p.Syncs != 200 || p.Work != 1000 {
		t.Errorf("spawns %d, syncs %d, work %d; want 200, 200, 1000 from the profiled goroutine alone", p.Spawns, p.Syncs, p.Work)
	}
	if got := e.notProf.events[whyOther].Load(); got < 4*200*4 {
		t.Errorf("%d events ignored, want at least %d", got, 4*200*4)
	}
}

// TestUnmatchedEndsAreIgnored: an end with no begin (its begin ignored, or
// lost to a recovered panic) does not pop the root.
func TestUnmatchedEndsAreIgnored(t *testing.T) {
	m := &synthetic{}
	e := newEngine(config{Measure: m, MeasureName: "synthetic"}, benchTable())
	withEngine(t, e)
	CallEnd()
	spawnEnd(nil)
	spawnBegin(0)
	CallEnd() // the spawned child's root frame is no call
	spawnEnd(nil)
	if got := e.notProf.events[whyUnmatched].Load(); got != 3 {
		t.Errorf("%d unmatched ends counted, want 3", got)
	}
	if p := e.stop(); p.Spawns != 1 {
		t.Errorf("spawns %d, want 1", p.Spawns)
	}
}
