package forkjoin_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

func loadIdioms(t *testing.T) *forkjoin.Result {
	t.Helper()
	results := analysistest.Run(t, analysistest.TestData(), forkjoin.Analyzer, "idioms")
	if len(results) != 1 {
		t.Fatalf("got %d results, want 1", len(results))
	}
	return results[0].Result.(*forkjoin.Result)
}

func funcNamed(t *testing.T, r *forkjoin.Result, name string) *forkjoin.Func {
	t.Helper()
	for _, f := range r.Funcs {
		if f.Name == "idioms."+name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return nil
}

// TestIdentity checks that the spawn, its signals and the wait of one
// fork/join share one *JoinObject, through parameters, fields and aliases.
func TestIdentity(t *testing.T) {
	r := loadIdioms(t)
	tests := []struct {
		spawner string // the function that spawns and waits
		callee  string // the spawned function, whose Done names the object its own way
	}{
		{"goClosure", "goClosure.func1"},
		{"goNamed", "worker"},
		{"(*server).start", "(*server).loop"},
		{"(*Pool[...]).Each", "visit[...]"},
		{"literalVar", "literalVar.func1"},
		{"embedded", "embedded.func1"},
	}
	for _, tt := range tests {
		t.Run(tt.spawner, func(t *testing.T) {
			f := funcNamed(t, r, tt.spawner)
			if len(f.Spawns) == 0 || len(f.Waits) == 0 {
				t.Fatalf("%s: %d spawns, %d waits", tt.spawner, len(f.Spawns), len(f.Waits))
			}
			s, w := f.Spawns[0], f.Waits[0]
			if s.Join == nil || s.Join != w.Join {
				t.Fatalf("spawn joins %v, wait %v: want the same object", s.Join, w.Join)
			}
			if s.Callee == nil || s.Callee.Name != "idioms."+tt.callee {
				t.Fatalf("callee = %v, want %s", s.Callee, tt.callee)
			}
			if len(s.Signals) == 0 {
				t.Fatal("no signals")
			}
			for _, sig := range s.Signals {
				if got := s.Map(sig.Join); got != s.Join {
					t.Errorf("Map(%s) = %v, want %v", sig.Join, got, s.Join)
				}
			}
			if got := r.Object(s.Join.Key); got != s.Join {
				t.Errorf("Object(%q) = %v, want the spawn's object", s.Join.Key, got)
			}
		})
	}
}

// TestMapCalleeLocal checks that a variable declared in the spawned function
// is never the spawner's, even when the callee is the spawner (recursion).
func TestMapCalleeLocal(t *testing.T) {
	r := loadIdioms(t)
	fib := funcNamed(t, r, "fib")
	s := fib.Spawns[0]
	lit := s.Callee
	if len(lit.Calls) != 1 || lit.Calls[0].Callee != fib {
		t.Fatalf("the spawned literal should call fib once, calls %v", lit.Calls)
	}
	call := lit.Calls[0]
	inner := call.Map(fib.Waits[0].Join) // fib's g, seen from the literal's call of fib
	if inner == s.Join || inner.Key == s.Join.Key || inner.Exact {
		t.Errorf("the callee's own g mapped to %v (exact %v); want an inexact object other than %v", inner.Key, inner.Exact, s.Join.Key)
	}
}

// TestObjectsUnique checks that Objects lists each key once.
func TestObjectsUnique(t *testing.T) {
	r := loadIdioms(t)
	seen := make(map[string]bool)
	for _, j := range r.Objects {
		if seen[j.Key] {
			t.Errorf("key %s listed twice", j.Key)
		}
		seen[j.Key] = true
		if r.Object(j.Key) != j {
			t.Errorf("Object(%s) is not the listed object", j.Key)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no objects")
	}
}
