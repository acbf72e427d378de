package main

import (
	"slices"
	"testing"

	"github.com/google/pprof/profile"
)

// TestEngineProfile: each sample keeps the runtime's frames at its leaf end
// and no other (a sample in the program's code goes), the merged profile
// adds up the runs, and no path or build of the machine stays.
func TestEngineProfile(t *testing.T) {
	root := "/home/me/spanprof"
	fn := func(id uint64, name, file string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: root + "/" + file, StartLine: 10}
	}
	tick := fn(1, "github.com/spanprof/spanprof/shadow.(*engine).tick", "shadow/engine.go")
	read := fn(2, "github.com/spanprof/spanprof/perf.(*cpuClock).Read", "perf/cpu.go")
	group := fn(3, "github.com/spanprof/spanprof/shadow.GroupGo[...]", "shadow/emit_errgroup.go")
	fib := fn(4, "main.fib", "/elsewhere/fib/main.go")
	fib.Filename = "/elsewhere/fib/main.go"
	m := &profile.Mapping{ID: 1, File: "/tmp/spanprof-pgo-1/fib", BuildID: "abc", HasFunctions: true}
	loc := func(id uint64, f *profile.Function, line int64) *profile.Location {
		return &profile.Location{ID: id, Mapping: m, Address: 0x1000 * id, Line: []profile.Line{{Function: f, Line: line}}}
	}
	lRead, lTick, lGroup, lFib := loc(1, read, 12), loc(2, tick, 14), loc(3, group, 20), loc(4, fib, 30)
	mk := func() *profile.Profile {
		return &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:     1000000,
			TimeNanos:  12345, DurationNanos: 678,
			Sample: []*profile.Sample{
				// leaf first: Read ← tick ← GroupGo ← fib ← GroupGo
				{Location: []*profile.Location{lRead, lTick, lGroup, lFib, lGroup}, Value: []int64{2, 2000000}},
				{Location: []*profile.Location{lFib, lGroup, lFib}, Value: []int64{5, 5000000}},
			},
			Location: []*profile.Location{lRead, lTick, lGroup, lFib},
			Function: []*profile.Function{tick, read, group, fib},
			Mapping:  []*profile.Mapping{m},
		}
	}
	p, err := engineProfile([]*profile.Profile{mk(), mk()}, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 {
		t.Fatalf("%d samples, want 1 (the program's own goes)", len(p.Sample))
	}
	var got []string
	for _, l := range p.Sample[0].Location {
		got = append(got, l.Line[0].Function.Name)
	}
	if want := []string{read.Name, tick.Name, group.Name}; !slices.Equal(got, want) {
		t.Errorf("stack %q, want %q: the runtime's frames up to the program's first", got, want)
	}
	if v := p.Sample[0].Value[0]; v != 4 {
		t.Errorf("%d samples merged, want 4", v)
	}
	for _, f := range p.Function {
		if f.Filename != "shadow/engine.go" && f.Filename != "perf/cpu.go" && f.Filename != "shadow/emit_errgroup.go" {
			t.Errorf("%s: file %q, want a path relative to the repository", f.Name, f.Filename)
		}
	}
	for _, m := range p.Mapping {
		if m.File != "" || m.BuildID != "" {
			t.Errorf("mapping %q, build ID %q: want neither", m.File, m.BuildID)
		}
	}
	if p.TimeNanos != 0 || p.DurationNanos != 0 {
		t.Errorf("time %d, duration %d: want 0", p.TimeNanos, p.DurationNanos)
	}
}
