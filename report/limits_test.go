package report

import (
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestBoundingLimit: a limit bounds the parallelism when its slot waits
// come to a quarter of the span or more and its spawn site is on the
// critical path; the verdict then names it, by kind, slots and line, and
// otherwise says the span bounds it.
func TestBoundingLimit(t *testing.T) {
	for _, c := range []struct {
		name    string
		delay   int64
		onSpan  int64
		kind    string
		verdict string
		bounds  bool
	}{
		{"semaphore", 300, 1, "semaphore", "bounded by a semaphore of 2 slots at a.go:9", true},
		{"errgroup", 300, 1, "errgroup SetLimit", "bounded by errgroup SetLimit(2) at a.go:9", true},
		{"unnamed", 300, 1, "", "bounded by a limit of 2 on the spawns at a.go:10", true},
		{"little delay", 99, 1, "semaphore", "bounded by the span", false},
		{"at a quarter", 100, 1, "semaphore", "bounded by a semaphore", true},
		{"off the span", 300, 0, "semaphore", "bounded by the span", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &spanprofile.Profile{
				Mode: "serial", Unit: "nanoseconds", Work: 800, Span: 400, BurdenedSpan: 400, Spawns: 8,
				Sites: []spanprofile.Site{{File: "a.go", Line: 10, Func: "main.main.func1", Caller: "main.main", Kind: spanprofile.KindSpawn,
					LimitKind: c.kind, LimitAt: "a.go:9"}},
				Contexts: []spanprofile.Context{
					{Stack: nil, OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 1}}},
					{Stack: []int{0}, OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 8, Work: 800, Span: 800}},
						OnSpan: spanprofile.Measurement{Local: spanprofile.Triple{Count: c.onSpan, Work: 100 * c.onSpan, Span: 400 * c.onSpan}}},
				},
				Limits: []spanprofile.LimitUse{{Site: 0, N: 2, Waits: 3, Delay: c.delay}},
			}
			if v := Verdict(p); !strings.Contains(v, c.verdict) {
				t.Errorf("verdict %q, want it to say %q", v, c.verdict)
			}
			if ls := Limits(p); len(ls) != 1 || ls[0].Bounds != c.bounds {
				t.Errorf("limits %+v", ls)
			}
		})
	}
}

// TestGrainAdvice: where burdened parallelism is below 1 the advice fits
// the loops around the site that spawns the most: an outer loop only for a
// spawn in nested loops, parlib.For chunks for a flat loop, a larger grain for a parlib loop, a larger base
// case for a spawn in no loop (recursion), and the old words when the
// profile does not say.
func TestGrainAdvice(t *testing.T) {
	for _, c := range []struct {
		loop      string
		want, not string
	}{
		{spanprofile.LoopNested, "in an inner loop; parallelize an outer loop instead", "parlib.For"},
		{spanprofile.LoopFlat, "the loop at a.go:10:3 spawns once per iteration; give each goroutine a chunk of iterations, e.g. parlib.For", "outer loop"},
		{spanprofile.LoopNone, "stop spawning at a.go:10:3 below a larger problem size", "loop"},
		{spanprofile.LoopParlib, "give the parallel loop at a.go:10:3 a larger grain", "parlib.For"},
		{"", "parallelize an outer loop rather than an inner one", "parlib.For"},
	} {
		p := &spanprofile.Profile{
			Mode: "serial", Unit: "nanoseconds", Work: 1_000_000_000, Span: 100_000_000, BurdenedSpan: 2_000_000_000, Spawns: 1000,
			Sites: []spanprofile.Site{
				{File: "a.go", Line: 5, Column: 2, Func: "main.few", Caller: "main.main", Kind: spanprofile.KindSpawn, Loop: spanprofile.LoopNested},
				{File: "a.go", Line: 10, Column: 3, Func: "main.many", Caller: "main.main", Kind: spanprofile.KindSpawn, Loop: c.loop},
			},
			Contexts: []spanprofile.Context{
				{Stack: nil, OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 1}}},
				{Stack: []int{0}, OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 10, Work: 10_000_000}}},
				{Stack: []int{1}, OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 990, Work: 990_000_000}}},
			},
		}
		var got string
		for _, w := range Warnings(p) {
			if strings.HasPrefix(w, "burdened parallelism is below 1") {
				got = w
			}
		}
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("loop %q: warning %q, want it to say %q and not %q", c.loop, got, c.want, c.not)
		}
	}
}
