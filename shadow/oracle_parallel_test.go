package shadow

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// The oracle test in parallel accounting: the random programs of
// oracle_test.go run with every spawn on a goroutine of its own, measured by
// a synthetic counter per goroutine, and the profile must equal the
// brute-force DAG's exactly.
//
// A run has two passes. The first runs the program serially and feeds the
// oracle, recording for every task (the main goroutine and each spawn) the
// fuel decisions it made, the tasks it spawned, and the serial position of
// each of its ordered events: join contributions, waits, and the ends of
// invocations and goroutines. The second runs the program with real
// goroutines and lets an ordered event happen only in its serial turn.
// Everything else (strands, calls, spawns, the engine's locking, its
// per-goroutine states, the sharing of path profiles and records between
// goroutines, and the crediting of a goroutine's work to its spawner)
// happens concurrently. The turns make a wait see the contributions the
// serial order gives it, ties break as in the serial order, and a child
// ends before the invocation that spawned it, which is what the oracle's
// definitions (doc.go) assume; a turn waits only for events earlier in the
// serial order, all of which some goroutine can reach, so the second pass
// cannot deadlock.

// goSynthetic is a synthetic measure per goroutine.
type goSynthetic struct {
	mu sync.Mutex
	n  map[uintptr]uint64
}

func (s *goSynthetic) Read() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[getg()]
}

func (s *goSynthetic) add(d int64) {
	s.mu.Lock()
	s.n[getg()] += uint64(d)
	s.mu.Unlock()
}

// ptask is what the first pass records of one task for the second.
type ptask struct {
	takes    []bool // per call or spawn op: run it (else one unit of work)
	children []int  // the tasks it spawns, in order
	ordered  []int  // serial positions of its ordered events
}

// pcursor is a task's progress through its record in the second pass.
type pcursor struct {
	t                   *ptask
	take, child, orderd int
}

type prun struct {
	p     *randProgram
	play  bool
	scale func(int64) int64 // if set, changes every strand's length (whatif_test.go)

	// First pass.
	o        *oracle
	fuel     int
	tasks    []*ptask
	nOrdered int

	// Second pass.
	e    *engine
	m    *goSynthetic
	mu   sync.Mutex
	cond *sync.Cond
	next int
	wg   sync.WaitGroup
}

func (r *prun) work(d int64) {
	if r.scale != nil {
		d = r.scale(d)
	}
	if r.play {
		r.m.add(d)
	} else {
		r.o.strand(d)
	}
}

// ordered runs an ordered event: in the first pass it takes the next serial
// position, in the second it waits for that position's turn.
func (r *prun) ordered(c *pcursor, ev func()) {
	if !r.play {
		c.t.ordered = append(c.t.ordered, r.nOrdered)
		r.nOrdered++
		ev()
		return
	}
	n := c.t.ordered[c.orderd]
	c.orderd++
	r.mu.Lock()
	for r.next != n {
		r.cond.Wait()
	}
	r.mu.Unlock()
	ev()
	r.mu.Lock()
	r.next++
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *prun) exec(c *pcursor, f int, param *joinObj, depth int) {
	var locals [4]*joinObj
	for i := 0; i < 3; i++ {
		locals[i] = &joinObj{i}
	}
	locals[3] = param
	if param == nil {
		locals[3] = locals[0]
	}
	for _, o := range r.p.fns[f] {
		obj := unsafe.Pointer(locals[o.obj])
		if !r.play {
			r.fuel--
		}
		switch o.kind {
		case opWork:
			r.work(o.d)
			continue
		case opDone:
			r.ordered(c, func() {
				if r.play {
					r.e.parDone(obj, noDepth)
				} else {
					r.o.Done(obj)
				}
			})
			continue
		case opWait:
			r.ordered(c, func() {
				if r.play {
					r.e.parWait(obj, r.e.beforeWait(), noDepth)
				} else {
					r.o.Wait(obj)
				}
			})
			continue
		}
		var take bool
		if r.play {
			take = c.t.takes[c.take]
			c.take++
		} else {
			take = depth < r.p.maxDepth && r.fuel > 0
			c.t.takes = append(c.t.takes, take)
		}
		if !take {
			r.work(1)
			continue
		}
		site, kind, callee, pass := SiteID(o.site), o.kind, o.callee, locals[o.pass]
		if kind == opCall {
			if r.play {
				r.e.parCallBegin(site, noDepth)
			} else {
				r.o.CallBegin(site)
			}
			r.exec(c, callee, pass, depth+1)
			r.ordered(c, func() {
				if r.play {
					r.e.parCallEnd(noDepth)
				} else {
					r.o.CallEnd()
				}
			})
			continue
		}
		if !r.play {
			child := &ptask{}
			r.tasks = append(r.tasks, child)
			c.t.children = append(c.t.children, len(r.tasks)-1)
			r.o.SpawnBegin(site)
			cc := &pcursor{t: child}
			r.exec(cc, callee, pass, depth+1)
			r.childEnd(cc, kind, obj, nil)
			continue
		}
		cc := &pcursor{t: r.tasks[c.t.children[c.child]]}
		c.child++
		g, _ := r.e.parSpawn(site, true, noDepth)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.e.startG(g)
			r.exec(cc, callee, pass, depth+1)
			r.childEnd(cc, kind, obj, g)
		}()
	}
}

// childEnd ends a spawned task as its op says: its return signals obj
// (errgroup's Go, wg.Go), or it calls Done on obj and returns (go with
// defer wg.Done()), or it just returns.
func (r *prun) childEnd(c *pcursor, kind opKind, obj unsafe.Pointer, g *gstate) {
	end := func(obj unsafe.Pointer) func() {
		return func() {
			if r.play {
				r.e.endG(g, obj)
			} else {
				r.o.SpawnEnd(obj)
			}
		}
	}
	switch kind {
	case opSpawnReturn:
		r.ordered(c, end(obj))
	case opSpawnDone:
		// Half of these children end at their Done, as a goroutine whose
		// Done is its last action does (parDoneLast), by the parity of
		// their end's serial position; endG then only hands the state
		// back. The oracle's DAG is the same: no work comes between.
		last := r.play && c.t.ordered[len(c.t.ordered)-1]%2 == 0
		r.ordered(c, func() {
			switch {
			case last:
				r.e.parDoneLast(obj, noDepth)
			case r.play:
				r.e.parDone(obj, noDepth)
			default:
				r.o.Done(obj)
			}
		})
		r.ordered(c, end(nil))
	default:
		r.ordered(c, end(nil))
	}
}

// checkParallelAgainstOracle checks the program of seed in parallel
// accounting against the oracle, with the goroutines' states in the
// goroutine table alone if noAnchors.
func checkParallelAgainstOracle(t *testing.T, seed uint64, noAnchors bool) {
	r := rand.New(rand.NewPCG(seed, 17))
	p := genProgram(r)
	burden := int64(r.IntN(6))
	fuel := 60 + r.IntN(200)
	w0, w1 := int64(r.IntN(3)), int64(r.IntN(3))

	// First pass: serial, into the oracle.
	rec := &prun{p: p, o: newOracle(p.sites, burden), fuel: fuel, tasks: []*ptask{{}}}
	rec.work(w0)
	rec.exec(&pcursor{t: rec.tasks[0]}, 0, nil, 0)
	rec.work(w1)
	want := rec.o.solve()

	// Second pass: goroutines, into the engine.
	tab := &siteTable{}
	tab.add(p.sites)
	m := &goSynthetic{n: map[uintptr]uint64{}}
	e := newEngine(config{Measure: m, MeasureName: "synthetic", Unit: "count", Mode: parallelMode, Burden: burden}, tab)
	if noAnchors {
		e.anchorKey = 0 // before any goroutine's event
	}
	pl := &prun{p: p, play: true, e: e, m: m, tasks: rec.tasks}
	pl.cond = sync.NewCond(&pl.mu)
	// The engine's root is the goroutine that made it: the main task runs
	// here.
	pl.work(w0)
	finished := make(chan struct{})
	go func() {
		select {
		case <-finished:
		case <-time.After(time.Minute):
			panic(fmt.Sprintf("seed %d: the parallel pass is stuck", seed))
		}
	}()
	pl.exec(&pcursor{t: pl.tasks[0]}, 0, nil, 0)
	pl.work(w1)
	pl.wg.Wait()
	close(finished)
	got := e.stop()
	compareWithOracle(t, seed, got, want)
	if anchorsWork() && !noAnchors && e.anchorKey == 0 {
		t.Errorf("seed %d: the goroutines were not anchored", seed)
	}
	if e.par.live != 0 || e.par.byG.live != 1 {
		t.Errorf("seed %d: %d goroutines live and %d states registered after the run, want 0 and 1", seed, e.par.live, e.par.byG.live)
	}
	if e.ap.live != 0 {
		t.Errorf("seed %d: %d activity nodes live after the run, want 0", seed, e.ap.live)
	}
}

// TestOracleParallelTable is TestOracleParallel with every goroutine's
// state in the goroutine table, as on platforms without anchors
// (anchor.go), on fewer programs.
func TestOracleParallelTable(t *testing.T) {
	oracleParallelSeeds(t, 300, 50, true)
}

func TestOracleParallel(t *testing.T) {
	oracleParallelSeeds(t, 3000, 300, false)
}

// oracleParallelSeeds checks n programs (short with -short) at GOMAXPROCS
// 1, 2 and 8, with the table alone if noAnchors.
func oracleParallelSeeds(t *testing.T, n, short int, noAnchors bool) {
	if testing.Short() {
		n = short
	}
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for seed := uint64(0); seed < uint64(n); seed++ {
				checkParallelAgainstOracle(t, seed, noAnchors)
				if t.Failed() {
					return
				}
			}
		})
	}
}
