package shadow

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestThreadLimit: with a per-thread measure, every goroutine that runs for
// real keeps a thread of its own, and a pool of waiting workers then needs
// a thread per worker: panjf2000/ants's tests crashed at Go's 10,000. Past
// maxLocked at once the next goroutines read the shared measure, the
// profile counts them, and the numbers stay whole: here the shared measure
// is the same per-goroutine count, so work and span stay exact. Without a
// shared measure (a counter in instructions has no clock to fall back on)
// they are counted as goroutines without a counter of their own.
func TestThreadLimit(t *testing.T) {
	old := maxLocked
	maxLocked = 4
	t.Cleanup(func() { maxLocked = old })
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "clock", false: "none"}[shared], func(t *testing.T) {
			const workers = 10
			tab := &siteTable{}
			pool := tab.add([]SiteInfo{{File: "pool.go", Line: 1, Func: "pool.worker", Caller: "pool.Start", Kind: spanprofile.KindSpawn, Goroutine: true}})
			m := &goSynthetic{n: map[uintptr]uint64{}}
			var open, peak atomic.Int32
			cfg := config{Measure: m, MeasureName: "synthetic", Unit: "nanoseconds", Mode: serialMode, PerThread: true,
				Open: func() (reader, func(), error) {
					n := open.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					return m, func() { open.Add(-1) }, nil
				}}
			if shared {
				cfg.Shared = m
			}
			e := newEngine(cfg, tab)
			withEngine(t, e)

			// Every worker waits until all have started, as a pool's
			// workers wait for tasks: all ten are live at once.
			var started sync.WaitGroup
			started.Add(workers)
			release := make(chan struct{})
			var wg sync.WaitGroup
			for i := range workers {
				WaitGroupGo(pool, &wg, func() {
					m.add(int64(10 + i))
					started.Done()
					<-release
				})
			}
			started.Wait()
			close(release)
			WaitGroupWait(&wg)
			p := e.stop()

			if got := peak.Load(); got > 4 {
				t.Errorf("%d goroutines held threads of their own at once, want at most maxLocked = 4", got)
			}
			if open.Load() != 0 {
				t.Errorf("%d measures left open", open.Load())
			}
			if e.par.locked.Load() != 0 {
				t.Errorf("%d goroutines still counted as holding threads", e.par.locked.Load())
			}
			reason := spanprofile.NotProfiledThreadLimit
			if !shared {
				reason = spanprofile.NotProfiledNoCounter
			}
			var got int64
			for _, n := range p.NotProfiled {
				if n.Reason == reason {
					got = n.Goroutines
				}
			}
			if got != workers-4 {
				t.Errorf("not profiled %+v: want %d goroutines under %s", p.NotProfiled, workers-4, reason)
			}
			if shared && (p.Work != 10*10+45 || p.Span != 19) {
				t.Errorf("work %d span %d, want %d and 19: a worker on the shared measure was measured wrong", p.Work, p.Span, 10*10+45)
			}
		})
	}
}
