package forkjoin_test

import (
	"go/token"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// TestFacts checks the per-function facts: Serial, Outside (and the spawns
// it makes not elidable) and StartedBy.
func TestFacts(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), forkjoin.Analyzer, "facts")
	if len(results) != 1 {
		t.Fatalf("got %d results, want 1", len(results))
	}
	r := results[0].Result.(*forkjoin.Result)
	fset := results[0].Pass.Fset
	byName := make(map[string]*forkjoin.Func)
	for _, f := range r.Funcs {
		byName[strings.TrimPrefix(f.Name, "facts.")] = f
	}
	fn := func(name string) *forkjoin.Func {
		t.Helper()
		f := byName[name]
		if f == nil {
			t.Fatalf("no function %s", name)
		}
		return f
	}

	for name, want := range map[string]bool{
		"acquire": true, "sum": true, "tick": true, "release": true,
		"forks": false, "callsForks": false, "callsValue": false, "spawns": false,
		"viaLit.func1": false, // a literal counts in its declaration
	} {
		if got := fn(name).Serial; got != want {
			t.Errorf("%s.Serial = %v, want %v", name, got, want)
		}
	}

	line := func(p token.Pos) string { return "L" + itoa(fset.Position(p).Line) }
	for name, want := range map[string]string{
		"acquire":      "calls example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation, at L13",
		"viaCall":      "calls facts.acquire, which calls example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation, at L13",
		"viaLit":       "calls facts.viaLit.func1, which calls facts.acquire, which calls example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation, at L13",
		"spawns.func1": "calls facts.viaCall, which calls facts.acquire, which calls example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation, at L13",
		"release":      "",
		"spawns.func2": "",
	} {
		got := ""
		if o := fn(name).Outside; o != nil {
			got = o.Describe(line)
		}
		if got != want {
			t.Errorf("%s.Outside: %q, want %q", name, got, want)
		}
	}

	var elidable []bool
	var outside []string
	for _, s := range fn("spawns").Spawns {
		elidable = append(elidable, s.Elidable)
		o := ""
		if s.Outside != nil {
			o = s.Outside.Describe(line)
		}
		outside = append(outside, o)
	}
	wantOutside := []string{
		"calls facts.viaCall, which calls facts.acquire, which calls example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation, at L13",
		"",
		"spawns example.com/sem.(*Weighted).Acquire, which takes a context and may wait for the continuation",
	}
	if len(elidable) != 3 || elidable[0] || !elidable[1] || elidable[2] || strings.Join(outside, "|") != strings.Join(wantOutside, "|") {
		t.Errorf("spawns of spawns: elidable %v, outside %q; want [false true false], %q", elidable, outside, wantOutside)
	}

	for name, want := range map[string]string{
		"timers.func1":   "AfterFunc",
		"timers.func1.1": "AfterFunc",
		"tick":           "AfterFunc",
		"timers":         "",
		"sum":            "",
	} {
		got := ""
		if by := fn(name).StartedBy; by != nil {
			got = by.API.Name()
		}
		if got != want {
			t.Errorf("%s.StartedBy: %q, want %q", name, got, want)
		}
	}
	if f := fn("tick"); r.FuncOf(f.Obj) != f || r.Enclosing(f.Body.Pos()) != f {
		t.Errorf("FuncOf or Enclosing does not find tick")
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestLimits: every errgroup SetLimit call is a Limit, with its group and
// its constant limit where it has one.
func TestLimits(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), forkjoin.Analyzer, "limits")
	r := results[0].Result.(*forkjoin.Result)
	if len(r.Limits) != 2 {
		t.Fatalf("%d limits, want 2", len(r.Limits))
	}
	a, b := r.Limits[0], r.Limits[1]
	if !a.NKnown || a.N != 2 || b.NKnown {
		t.Errorf("limits %d (known %v) and %d (known %v), want 2 and unknown", a.N, a.NKnown, b.N, b.NKnown)
	}
	if a.Join == nil || a.Join == b.Join || a.Func == nil || a.Func.Name != "limits.limited" {
		t.Errorf("limits' groups %v, %v, function %v: want two groups of limits.limited", a.Join, b.Join, a.Func)
	}
	// The limited group is the one its spawns and wait use.
	var spawnJoin *forkjoin.JoinObject
	for _, s := range r.Spawns {
		spawnJoin = s.Join
	}
	if spawnJoin != a.Join {
		t.Errorf("the limit's group %v is not its spawns' %v", a.Join, spawnJoin)
	}
}

// TestSemaphores: a buffered channel sent on before a spawn (or first in
// the spawned function) and received from in the spawned function is a
// semaphore, and its send and receive do not make the spawn unelidable; a
// send the child never receives, or a child that also receives from
// another channel, is no such case. Each spawn counts its enclosing loops.
func TestSemaphores(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), forkjoin.Analyzer, "sems")
	r := results[0].Result.(*forkjoin.Result)
	fset := results[0].Pass.Fset
	line := func(p token.Pos) int { return fset.Position(p).Line }
	type sem struct {
		fn               string
		acquire, release int
		inChild          bool
	}
	var got []sem
	for _, s := range r.Semaphores {
		got = append(got, sem{s.Spawn.Func.Name, line(s.Acquire.Pos()), line(s.Release.Pos()), s.InChild})
	}
	want := []sem{{"sems.before", 12, 16, false}, {"sems.inChild", 30, 32, true}, {"sems.other", 56, 61, false}}
	if !slices.Equal(got, want) {
		t.Errorf("semaphores %v, want %v", got, want)
	}
	elidable := map[string]bool{"sems.before": true, "sems.inChild": true, "sems.results": true, "sems.other": false}
	loops := map[string]int{"sems.before": 1, "sems.inChild": 2, "sems.results": 0, "sems.other": 0}
	for _, s := range r.Spawns {
		if s.Elidable != elidable[s.Func.Name] {
			t.Errorf("spawn in %s: elidable %v (%s), want %v", s.Func.Name, s.Elidable, s.Reason, elidable[s.Func.Name])
		}
		if s.Loops != loops[s.Func.Name] {
			t.Errorf("spawn in %s: %d loops, want %d", s.Func.Name, s.Loops, loops[s.Func.Name])
		}
	}
}
