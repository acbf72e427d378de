package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/spanprof/spanprof/spanprofile"
)

// Trace mode (docs/trace-mode.md): its sites are stack frames, so the report
// adds what a frame table does not say at once: which functions hold the
// critical path, and the runtime/trace tasks.

// TopFunctions is how many functions the text report lists in trace mode.
const TopFunctions = 10

// FunctionSummary is a function's time on the critical path and in the
// work: its own (flat: in frames of it that are the leaf) and with its
// callees (cumulative: in stacks that hold it, once however often).
type FunctionSummary struct {
	Func    string `json:"func"`
	Span    int64  `json:"span"`
	SpanCum int64  `json:"span_cum"`
	Work    int64  `json:"work"`
	WorkCum int64  `json:"work_cum"`
}

// Functions returns the functions of a trace-mode profile's stacks, largest
// own time on the critical path first (ties: cumulative, then name); nil
// for a profile of another mode, whose sites are not frames.
func Functions(p *spanprofile.Profile) []FunctionSummary {
	if p.Mode != "trace" {
		return nil
	}
	byName := map[string]*FunctionSummary{}
	get := func(name string) *FunctionSummary {
		f := byName[name]
		if f == nil {
			f = &FunctionSummary{Func: name}
			byName[name] = f
		}
		return f
	}
	seen := map[string]bool{}
	for _, c := range p.Contexts {
		if len(c.Stack) == 0 {
			continue
		}
		w, s := c.OnWork.Local.Work, c.OnSpan.Local.Span
		if w == 0 && s == 0 {
			continue
		}
		leaf := get(p.Sites[c.Stack[len(c.Stack)-1]].Func)
		leaf.Work += w
		leaf.Span += s
		clear(seen)
		for _, i := range c.Stack {
			name := p.Sites[i].Func
			if !seen[name] {
				seen[name] = true
				f := get(name)
				f.WorkCum += w
				f.SpanCum += s
			}
		}
	}
	out := make([]FunctionSummary, 0, len(byName))
	for _, f := range byName {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b FunctionSummary) int {
		return cmp.Or(cmp.Compare(b.Span, a.Span), cmp.Compare(b.SpanCum, a.SpanCum), cmp.Compare(a.Func, b.Func))
	})
	return out
}

// traceLines returns the lines of the parallelism profile that trace mode
// has in place of the instrumentation's (burden, overhead, strands).
func traceLines(p *spanprofile.Profile) [][2]string {
	t := p.Trace
	if t == nil {
		return nil
	}
	share := func(n int64) string {
		if p.Work == 0 {
			return ""
		}
		return fmt.Sprintf(" (%.0f%%)", 100*float64(n)/float64(p.Work))
	}
	out := [][2]string{
		{"Goroutines", fmt.Sprintf("%s, %s created while tracing; %s strands (running intervals)",
			commas(t.Goroutines), commas(p.Spawns), commas(t.Strands))},
		{"Wake-ups", fmt.Sprintf("%s by goroutines (edges), %s by timers, the network or the runtime (no edge)",
			commas(t.Wakeups), commas(t.External))},
		{"Trace", fmt.Sprintf("%s events over %s", commas(t.Events), duration(float64(t.Duration)))},
		{"Runtime goroutines", fmt.Sprintf("%s, ran %s (not in the work)", commas(t.RuntimeGoroutines), duration(float64(t.RuntimeTime)))},
		{"In the work", fmt.Sprintf("system calls %s%s, GC assists %s%s; the world stopped %s",
			duration(float64(t.Syscall)), share(t.Syscall), duration(float64(t.Assist)), share(t.Assist), duration(float64(t.STW)))},
	}
	if t.Bytes > 0 {
		size := fmt.Sprintf("%.1f MB", float64(t.Bytes)/1e6)
		if t.Bytes < 1e6 {
			size = fmt.Sprintf("%.1f kB", float64(t.Bytes)/1e3)
		}
		out[2][1] = size + ", " + out[2][1]
		if t.Duration > 0 {
			out[2][1] += fmt.Sprintf(" (%s events/s)", commas(int64(float64(t.Events)/(float64(t.Duration)/1e9))))
		}
	}
	stacks := "the stack of the event ending each piece of a strand (no CPU samples in the trace)"
	if t.CPUSamples > 0 {
		stacks = fmt.Sprintf("%s CPU samples placed %s%s; event stacks the rest", commas(t.CPUSamples), duration(float64(t.Sampled)), share(t.Sampled))
	}
	out = append(out, [2]string{"Stacks", stacks})
	if t.Period > 0 {
		out = append(out, [2]string{"Not running", fmt.Sprintf("%s excluded from %s of %s pieces longer than the %s sampling period",
			duration(float64(t.Excluded)), commas(t.Corrected), commas(t.Checked), duration(float64(t.Period)))})
	}
	if t.CPU > 0 {
		out = append(out, [2]string{"CPU time", fmt.Sprintf("%s used by the program; its goroutines held a P %.2fx as long",
			duration(float64(t.CPU)), heldOverCPU(p))})
		cost := float64(t.Events) * TracerCostPerEvent
		out = append(out, [2]string{"Tracing cost", fmt.Sprintf("about %s of it (%s ns per event), %.0f%%",
			duration(cost), commas(TracerCostPerEvent), 100*cost/float64(t.CPU))})
	}
	return out
}

// TracerCostPerEvent is the CPU time, in nanoseconds, that Go's execution
// tracer (with the CPU profiler that run -mode trace starts) adds to a
// program per event it records: measured on spanprof's examples with their
// default inputs on a 2-vCPU VM, between 130 (matmul) and 290 (cilksort),
// traced over plain CPU time 1.02x to 1.52x, geometric mean 1.18
// (docs/trace-mode.md).
const TracerCostPerEvent = 200

// heldOverCPU returns how much longer the program's goroutines held a P
// than the program used the CPU (0 when unknown): about 1 on a quiet
// machine (the runtime's own work outside goroutines makes it less), more
// where the system gave the threads' CPUs to other processes.
func heldOverCPU(p *spanprofile.Profile) float64 {
	if p.Trace == nil || p.Trace.CPU <= 0 {
		return 0
	}
	return float64(p.Work+p.Trace.Excluded+p.Trace.RuntimeTime) / float64(p.Trace.CPU)
}

// heldOverCPUWarn is the ratio of heldOverCPU above which the report warns.
const heldOverCPUWarn = 1.3

// traceWarnings returns the warnings particular to trace mode.
func traceWarnings(p *spanprofile.Profile) []string {
	t := p.Trace
	if t == nil {
		return nil
	}
	var out []string
	if r := heldOverCPU(p); r > heldOverCPUWarn {
		out = append(out, fmt.Sprintf("the goroutines held a P %.1fx as long as the program used the CPU: the system gave their threads' CPUs "+
			"to other processes; CPU samples correct the pieces of strands longer than their period, not the shorter ones, which read long, "+
			"and the span most, since it picks the longest; trace on a quiet machine", r))
	}
	if t.CPUSamples == 0 && p.Work > 0 {
		out = append(out, "the trace has no CPU samples: each piece of a strand is placed on the line where it ended "+
			"(a channel operation, a lock, a go statement), in the right function but not on the line that took the time; "+
			"trace with a CPU profile running (go test -trace FILE -cpuprofile FILE2, or spanprof run -mode trace)")
	}
	return out
}

// textTrace writes the text report's trace-mode sections: the functions on
// the critical path and the tasks.
func textTrace(e *errWriter, p *spanprofile.Profile) {
	funcs := Functions(p)
	e.printf("\n4) Functions on the critical path\n")
	if len(funcs) == 0 {
		e.printf("None.\n")
	} else {
		t := &table{right: []bool{false, true, true, true, true, true}, group: []groupLabel{{1, 3, " on span "}, {4, 5, " on work "}}}
		t.add("func", "own", "share", "with callees", "own", "with callees")
		for i, f := range funcs {
			if i == TopFunctions {
				break
			}
			t.add(f.Func, commas(f.Span), fmt.Sprintf("%.1f%%", 100*spanprofile.Ratio(f.Span, p.Span)), commas(f.SpanCum), commas(f.Work), commas(f.WorkCum))
		}
		e.table(t, "")
		e.printf("Times in ns. Own: in the function's own frames; with callees: in stacks that hold it.\n")
		if n := len(funcs) - TopFunctions; n > 0 {
			e.printf("%s not shown.\n", plural(n, "more function"))
		}
	}
	if len(p.Tasks) == 0 {
		return
	}
	e.printf("\n5) Tasks (runtime/trace), by type\n")
	t := &table{right: []bool{false, true, true, true, true, true, true}}
	t.add("type", "count", "latency", "max", "work", "span", "span/latency")
	for _, s := range p.Tasks {
		t.add(orDash(s.Type), commas(s.Count), duration(float64(s.LatencyMean)), duration(float64(s.LatencyMax)),
			duration(float64(s.WorkMean)), duration(float64(s.SpanMean)), decimal(spanprofile.Ratio(s.SpanMean, s.LatencyMean), 2))
	}
	e.table(t, "")
	e.printf("Means over the ended tasks. Span: the critical path through the task's own strands;\n" +
		"latency minus span is time it waited for something outside it (locks, I/O, the scheduler).\n")
	for _, s := range p.Tasks {
		if len(s.Functions) > 0 {
			if len(s.Slowest) == 1 {
				e.printf("The slowest %q task is bound by:", s.Type)
			} else {
				e.printf("The %s slowest %q tasks are bound by:", strconv.Itoa(len(s.Slowest)), s.Type)
			}
			for i, f := range s.Functions {
				if i > 0 {
					e.printf(",")
				}
				e.printf(" %s %.0f%%", f.Func, 100*f.Share)
			}
			e.printf(".\n")
		}
		if s.Unfinished > 0 {
			e.printf("%s of type %q still open when the trace ended, not counted.\n", plural(int(s.Unfinished), "task"), s.Type)
		}
	}
}
