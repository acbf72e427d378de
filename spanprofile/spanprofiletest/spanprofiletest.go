// Package spanprofiletest provides hand-built span profiles for the tests of
// the packages that read, write and report them.
package spanprofiletest

import "github.com/spanprof/spanprof/spanprofile"

func t(count, work, span int64) spanprofile.Triple {
	return spanprofile.Triple{Count: count, Work: work, Span: span}
}

func m(topCallSite, topCaller, local spanprofile.Triple) spanprofile.Measurement {
	return spanprofile.Measurement{TopCallSite: topCallSite, TopCaller: topCaller, Local: local}
}

// Profile returns a serial clock profile of a small program that sorts with
// a parallel quicksort and then computes a parallel Fibonacci number, in the
// spirit of Cilkprof's Figures 2 and 7:
//
//   - the quicksort's serial partition (qsort.go:20) holds most of the span;
//   - the two recursive fib sites share one line (fib.go:8, columns 9 and
//     22) and recursion is folded: a site already on the stack returns to
//     its frame;
//   - a region site was never executed;
//   - the root context (empty stack) holds main's own strands.
//
// Work and Span are the sums of the contexts' local work on work and local
// span on span, as the shadow runtime computes them.
func Profile() *spanprofile.Profile {
	p := &spanprofile.Profile{
		Mode:          "serial",
		Measure:       "clock",
		Unit:          "nanoseconds",
		Burden:        1_500,
		Spawns:        8_518,
		Syncs:         8_518,
		Overhead:      21,
		Subtracted:    1_073_268,
		TimeNanos:     1_767_225_600_000_000_000, // 2026-01-01T00:00:00Z
		DurationNanos: 1_450_000_000,
		Sites: []spanprofile.Site{
			{File: "main.go", Line: 31, Func: "main.pqsort", Caller: "main.main", Kind: spanprofile.KindCall},
			{File: "qsort.go", Line: 20, Func: "main.partition", Caller: "main.pqsort", Kind: spanprofile.KindCall},
			{File: "qsort.go", Line: 21, Func: "main.pqsort", Caller: "main.pqsort", Kind: spanprofile.KindSpawn},
			{File: "qsort.go", Line: 22, Func: "main.pqsort", Caller: "main.pqsort", Kind: spanprofile.KindCall},
			{File: "main.go", Line: 33, Func: "main.fib", Caller: "main.main", Kind: spanprofile.KindCall},
			{File: "fib.go", Line: 8, Column: 9, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindSpawn},
			{File: "fib.go", Line: 8, Column: 22, Func: "main.fib", Caller: "main.fib", Kind: spanprofile.KindCall},
			{File: "main.go", Line: 40, Func: "main.main.func1", Caller: "main.main", Kind: spanprofile.KindRegion},
		},
		Contexts: []spanprofile.Context{
			{ // main's own strands
				Stack:  nil,
				OnWork: m(t(0, 0, 0), t(0, 0, 0), t(1, 81_940, 47_319)),
				OnSpan: m(t(0, 0, 0), t(0, 0, 0), t(1, 81_940, 47_319)),
			},
			{ // pqsort from main
				Stack:  []int{0},
				OnWork: m(t(1, 790_518_060, 141_902_681), t(1, 790_518_060, 141_902_681), t(1, 885, 885)),
				OnSpan: m(t(1, 790_518_060, 141_902_681), t(1, 790_518_060, 141_902_681), t(1, 885, 885)),
			},
			{ // the first partition, of the whole array
				Stack:  []int{0, 1},
				OnWork: m(t(1, 12_300_000, 12_300_000), t(1, 12_300_000, 12_300_000), t(1, 12_300_000, 12_300_000)),
				OnSpan: m(t(1, 12_300_000, 12_300_000), t(1, 12_300_000, 12_300_000), t(1, 12_300_000, 12_300_000)),
			},
			{ // spawned pqsort, recursion folded
				Stack:  []int{0, 2},
				OnWork: m(t(1, 372_000_000, 58_000_000), t(1, 372_000_000, 58_000_000), t(4_259, 4_340, 3_823)),
				OnSpan: m(t(1, 372_000_000, 58_000_000), t(1, 372_000_000, 58_000_000), t(9, 3_823, 3_823)),
			},
			{ // partitions under the spawned pqsort
				Stack:  []int{0, 2, 1},
				OnWork: m(t(4_259, 200_925_264, 200_925_264), t(0, 0, 0), t(4_259, 200_925_264, 200_925_264)),
				OnSpan: m(t(9, 64_795_645, 64_795_645), t(0, 0, 0), t(9, 64_795_645, 64_795_645)),
			},
			{ // called pqsort
				Stack:  []int{0, 3},
				OnWork: m(t(1, 406_216_236, 71_602_681), t(1, 406_216_236, 71_602_681), t(4_259, 7_068, 6_682)),
				OnSpan: m(t(1, 406_216_236, 71_602_681), t(1, 406_216_236, 71_602_681), t(10, 6_682, 6_682)),
			},
			{ // partitions under the called pqsort
				Stack:  []int{0, 3, 1},
				OnWork: m(t(4_259, 194_925_264, 194_925_264), t(0, 0, 0), t(4_259, 194_925_264, 194_925_264)),
				OnSpan: m(t(10, 64_795_646, 64_795_646), t(0, 0, 0), t(10, 64_795_646, 64_795_646)),
			},
			{ // fib from main
				Stack:  []int{4},
				OnWork: m(t(1, 450_325_186, 40_331), t(1, 450_325_186, 40_331), t(1, 780, 688)),
				OnSpan: m(t(1, 450_325_186, 40_331), t(1, 450_325_186, 40_331), t(1, 688, 688)),
			},
			{ // the spawned fib(n-1), recursion folded
				Stack:  []int{4, 5},
				OnWork: m(t(1, 279_094_680, 39_643), t(1, 279_094_680, 39_643), t(832_040, 150_281_850, 150_281_850)),
				OnSpan: m(t(1, 279_094_680, 39_643), t(1, 279_094_680, 39_643), t(29, 21_000, 21_000)),
			},
			{ // the called fib(n-2) under the top call
				Stack:  []int{4, 6},
				OnWork: m(t(1, 171_229_726, 14_688), t(1, 171_229_726, 14_688), t(514_228, 121_330_045, 86_699_953)),
				OnSpan: m(t(1, 171_229_726, 14_688), t(1, 171_229_726, 14_688), t(14, 12_643, 12_643)),
			},
			{ // fib(n-2) calls under the spawned fib(n-1)
				Stack:  []int{4, 5, 6},
				OnWork: m(t(317_811, 178_712_511, 9_100), t(0, 0, 0), t(317_811, 178_712_511, 7_500)),
				OnSpan: m(t(1, 6_000, 6_000), t(0, 0, 0), t(1, 6_000, 6_000)),
			},
		},
	}
	for _, c := range p.Contexts {
		p.Work += c.OnWork.Local.Work
		p.Span += c.OnSpan.Local.Span
	}
	// A burden of 1,500 ns on each of the 19 spawns on the critical path.
	p.BurdenedSpan = p.Span + 19*p.Burden
	return p
}

// Empty returns a profile of a run that executed no instrumented site: only
// the root context, and a site table of one site that never ran.
func Empty() *spanprofile.Profile {
	return &spanprofile.Profile{
		Mode: "serial", Measure: "clock", Unit: "nanoseconds",
		Work: 1_200, Span: 1_200, BurdenedSpan: 1_200, Burden: 1_500,
		Sites: []spanprofile.Site{
			{File: "main.go", Line: 9, Func: "main.work", Caller: "main.main", Kind: spanprofile.KindCall},
		},
		Contexts: []spanprofile.Context{{
			OnWork: m(t(0, 0, 0), t(0, 0, 0), t(1, 1_200, 1_200)),
			OnSpan: m(t(0, 0, 0), t(0, 0, 0), t(1, 1_200, 1_200)),
		}},
	}
}

// Trace returns a trace-mode profile (package tracepath) of a three-stage
// channel pipeline whose stages cost 1, 4 and 2 per item: its sites are
// stack frames, its critical path runs through main.transform, and one
// runtime/trace task type was seen. Work and Span are the sums of the
// contexts' exclusive values; a context's top-call-site values are those of
// its subtree.
func Trace() *spanprofile.Profile {
	frame := func(file string, line int, fn string) spanprofile.Site {
		return spanprofile.Site{File: file, Line: line, Func: fn, Caller: fn, Kind: spanprofile.KindFrame}
	}
	ctx := func(stack []int, work, span, inWork, inSpan int64) spanprofile.Context {
		return spanprofile.Context{
			Stack:  stack,
			OnWork: m(t(2, inWork, inSpan), t(2, inWork, inSpan), t(1, work, span)),
			OnSpan: m(t(2, inSpan, inSpan), t(2, inSpan, inSpan), t(1, span, span)),
		}
	}
	return &spanprofile.Profile{
		Mode: "trace", Measure: "clock", Unit: "nanoseconds",
		Work: 700_000_000, Span: 400_500_000, BurdenedSpan: 400_500_000,
		Spawns: 2, Syncs: 4_000, Procs: 2,
		TimeNanos: 1_767_225_600_000_000_000, DurationNanos: 410_000_000,
		Trace: &spanprofile.TraceInfo{
			Events: 16_412, Bytes: 98_304, Duration: 410_000_000, Goroutines: 3, Strands: 4_010,
			Wakeups: 4_000, External: 3, RuntimeGoroutines: 4, RuntimeTime: 1_250_000,
			Syscall: 400_000, STW: 120_000, CPUSamples: 41, Sampled: 290_000_000,
			Period: 4_194_304, Excluded: 2_000_000, Checked: 120, Corrected: 3, CPU: 720_000_000,
		},
		Tasks: []spanprofile.TaskSummary{{
			Type: "item", Count: 2_000, Unfinished: 1,
			LatencyMean: 250_000, LatencyMax: 900_000, WorkMean: 350_000, SpanMean: 200_000,
			Slowest:   []spanprofile.TaskRun{{ID: 17, Latency: 900_000, Work: 360_000, Span: 210_000}},
			Functions: []spanprofile.FunctionTime{{Func: "main.transform", Span: 120_000, Share: 0.57}, {Func: "main.consume", Span: 60_000, Share: 0.29}},
		}},
		Sites: []spanprofile.Site{
			frame("main.go", 30, "main.main"),
			frame("main.go", 60, "main.run"),
			frame("main.go", 61, "main.run"),
			frame("main.go", 62, "main.run"),
			frame("main.go", 73, "main.produce"),
			frame("main.go", 88, "main.transform"),
		},
		Contexts: []spanprofile.Context{
			ctx([]int{0}, 0, 0, 700_000_000, 400_500_000),
			ctx([]int{0, 1}, 0, 0, 100_000_000, 0),
			ctx([]int{0, 1, 4}, 100_000_000, 0, 100_000_000, 0),
			ctx([]int{0, 2}, 0, 0, 400_000_000, 400_000_000),
			ctx([]int{0, 2, 5}, 400_000_000, 400_000_000, 400_000_000, 400_000_000),
			ctx([]int{0, 3}, 200_000_000, 500_000, 200_000_000, 500_000),
		},
	}
}

// WhatIf returns Profile with a what-if profile of two targets, the
// partition function and a region that matched no site, and both
// together: its span shrinks with partition's strands, its work too.
func WhatIf() *spanprofile.Profile {
	p := Profile()
	part := int64(120_000_000) // partition's share of the span, at full speed
	partWork := int64(400_000_000)
	for _, target := range []string{"main.partition", "build tree", spanprofile.WhatIfAll} {
		for _, f := range []int64{2, 4, 8, 0} {
			w := spanprofile.WhatIf{Target: target, Factor: f, Work: p.Work, Span: p.Span, BurdenedSpan: p.BurdenedSpan}
			switch target {
			case "main.partition":
				w.Site, w.Func, w.Sites = "qsort.go:20", "main.partition", 1
			case spanprofile.WhatIfAll:
				w.Sites = 1
			}
			if w.Sites > 0 {
				cut, cutWork := part, partWork
				if f > 0 {
					cut, cutWork = part-part/f, partWork-partWork/f
				}
				w.Work -= cutWork
				w.Span -= cut
				w.BurdenedSpan -= cut
			}
			p.WhatIf = append(p.WhatIf, w)
		}
	}
	return p
}
