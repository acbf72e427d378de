package report

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spanprof/spanprof/spanprofile"
)

// How far to trust a profile: the lines of the text report's Trust section
// and the warnings the trust figures call for (spanprofile.Trust).

// busyShare is the share of the machine other processes may take before the
// report calls the run disturbed; the spanprof command's -count auto uses
// the same figure.
const busyShare = 0.10

// trustLines returns the Trust section's lines, label and value.
func trustLines(p *spanprofile.Profile) [][2]string {
	t := p.Trust
	if t == nil {
		return nil
	}
	var out [][2]string
	switch {
	case t.Runs > 1:
		out = append(out, [2]string{"Runs", strconv.FormatInt(t.Runs, 10) + ", each strand its shortest time over them"})
	case t.RunsNote != "":
		out = append(out, [2]string{"Runs", "1 (" + t.RunsNote + ")"})
	}
	if t.CPUs > 0 && p.DurationNanos > 0 {
		machine := float64(t.CPUs) * float64(p.DurationNanos)
		v := fmt.Sprintf("other processes used %.0f%% of %d CPUs", 100*float64(t.OtherCPU)/machine, t.CPUs)
		if t.Steal > 0 {
			v += fmt.Sprintf(", the hypervisor stole %.0f%%", 100*float64(t.Steal)/machine)
		}
		out = append(out, [2]string{"Machine", v})
	}
	if t.RunDelay > 0 && p.DurationNanos > 0 {
		out = append(out, [2]string{"Waited for a CPU", fmt.Sprintf("%s, %.0f%% of the run (the profiled thread, ready to run)",
			duration(float64(t.RunDelay)), 100*float64(t.RunDelay)/float64(p.DurationNanos))})
	}
	if t.Checks > 0 {
		out = append(out, [2]string{"Not running", fmt.Sprintf("%s of clock time excluded from strands (%s corrections in %s reads of thread CPU time)",
			duration(float64(t.Excluded)), commas(t.Corrections), commas(t.Checks))})
	}
	return out
}

// trustWarnings returns the warnings of the trust figures.
func trustWarnings(p *spanprofile.Profile) []string {
	t := p.Trust
	if t == nil {
		return nil
	}
	var out []string
	var load float64
	if t.CPUs > 0 && p.DurationNanos > 0 {
		load = float64(t.OtherCPU) / (float64(t.CPUs) * float64(p.DurationNanos))
	}
	clockLike := p.Measure == "clock"
	switch {
	case p.Mode == "trace" && heldOverCPU(p) > heldOverCPUWarn:
		// traceWarnings said it, with the program's own figure.
	case p.Mode == "trace" && load > busyShare:
		out = append(out, fmt.Sprintf("other processes used %.0f%% of the machine: a strand is the time its goroutine held a P, "+
			"which includes the time the system gave its thread to them, and the span picks the longest; trace on a quiet machine", 100*load))
	case clockLike && t.RunDelay > 0 && p.DurationNanos > 0 && float64(t.RunDelay) > 0.05*float64(p.DurationNanos):
		out = append(out, fmt.Sprintf("the profiled thread waited %s (%.0f%% of the run) for a CPU, and the clock counted that as work: "+
			"strands on the critical path may read far too long; profile with -measure cpu (the default), which excludes it",
			duration(float64(t.RunDelay)), 100*float64(t.RunDelay)/float64(p.DurationNanos)))
	case clockLike && load > busyShare:
		out = append(out, fmt.Sprintf("other processes used %.0f%% of the machine, and the clock counts the time they took from the profiled thread as work; "+
			"profile with -measure cpu (the default), which excludes it", 100*load))
	case load > busyShare && t.Runs <= 1 && t.RunsNote == "" && p.Measure != "instructions":
		out = append(out, fmt.Sprintf("other processes used %.0f%% of the machine: even the time the profiled thread ran is slowed by them (caches, a busy sibling hyperthread), "+
			"and the span picks the slowest strands; -count 3 keeps each strand's shortest time over 3 runs", 100*load))
	}
	if t.TSCGivenUp {
		out = append(out, "the time-stamp counter, which the measure read, parted from the kernel's clock during the run "+
			"(a VM moved or restored, or CPUs whose counters disagree), and the kernel's clock was read from then on: "+
			"strands around that moment may read wrong; profile again")
	}
	if p.Work > 0 && p.Subtracted > p.Work && p.Measure != "cpu" && p.Measure != "clock" {
		out = append(out, fmt.Sprintf("the instrumentation's own cost, subtracted from the strands (%s), exceeds the work left: "+
			"the strands are too short for the %s measure, whose reads cost more than they do; use -measure cpu (the default)%s",
			quantity(p.Subtracted, p.Unit), p.Measure, map[bool]string{true: " or instructions", false: ""}[t.Counters]))
	}
	remedy := "-count 3, or on a quiet machine"
	if t.Runs > 1 {
		remedy = "more runs (-count 10), or on a quiet machine"
	}
	if t.Counters {
		remedy = "-measure instructions (this machine counts them), or " + remedy
	}
	for _, o := range t.Outliers {
		if o.Context < 0 || o.Context >= len(p.Contexts) {
			continue
		}
		out = append(out, fmt.Sprintf("the invocations of %s on the critical path read %.1fx the average of all its invocations (%s against %s, deviation %s), "+
			"although those are alike: noise chose the critical path there; profile with %s",
			contextSite(p, o.Context), o.PathMean/max(o.Mean, 1), duration(o.PathMean), duration(o.Mean), duration(o.StdDev), remedy))
	}
	return out
}

// contextSite names the innermost site of context i.
func contextSite(p *spanprofile.Profile, i int) string {
	st := p.Contexts[i].Stack
	if len(st) == 0 {
		return "the root"
	}
	s := p.Sites[st[len(st)-1]]
	return filepath.Base(s.File) + ":" + strconv.Itoa(s.Line) + " (" + s.Func + ")"
}
