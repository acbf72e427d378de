package report

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestLeftOut: the calls left out that may carry work are named, with
// file:line, callee and why, in the text, HTML and JSON reports, at most
// five in text and HTML with the rest counted.
func TestLeftOut(t *testing.T) {
	p := &spanprofile.Profile{
		Mode: "serial", Unit: "nanoseconds", Work: 100, Span: 100, BurdenedSpan: 100,
		Contexts: []spanprofile.Context{{OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: 1, Work: 100}}}},
	}
	for i := range 7 {
		p.LeftOut = append(p.LeftOut, spanprofile.LeftOutCall{File: "m/a.go", Line: 10 + i, Column: 2, Func: fmt.Sprintf("m.f%d", i), Caller: "m.g", Why: "deferred"})
	}
	var text, html, js bytes.Buffer
	if err := Text(&text, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, p, Options{}); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(text.String()), " ")
	for _, want := range []string{"Not instrumented: 7 calls that may carry work", "m/a.go:10 m.f0 (deferred)", "m/a.go:14 m.f4 (deferred); and 2 more."} {
		if !strings.Contains(flat, want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	if strings.Contains(flat, "m.f5") {
		t.Errorf("text report names a sixth call:\n%s", text.String())
	}
	var s Summary
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.LeftOut) != 7 || s.LeftOut[6] != (LeftOutSummary{Site: "m/a.go:16", Column: 2, Func: "m.f6", Caller: "m.g", Why: "deferred"}) || s.LeftOutMore != 0 {
		t.Errorf("JSON left_out %+v, more %d", s.LeftOut, s.LeftOutMore)
	}
}
