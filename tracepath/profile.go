package tracepath

import (
	"cmp"
	"slices"

	"github.com/spanprof/spanprof/spanprofile"
)

// profile returns the span profile of the analysis, after finish.
//
// Each calling context gets, as in docs/profile-format.md, its exclusive
// work and span (the pieces whose stack it is, over all strands and on the
// critical path) and the per-site numbers, mapped as docs/trace-mode.md
// says: local = exclusive, top-call-site = inclusive (the context and every
// context below it; recursion is folded, so no time counts twice), and
// top-caller the same as top-call-site. Counts are pieces of strands.
func (a *analyzer) profile() *spanprofile.Profile {
	st := a.st
	n := len(st.ctxParent)
	exW := make([]cell, n)
	copy(exW, a.work)
	exS := make([]cell, n)
	a.crit.profile().each(func(i int, c cell) { exS[i] = c })
	incW, incS := slices.Clone(exW), slices.Clone(exS)
	// A context's parent has a smaller index: sum children into parents.
	for c := n - 1; c > 0; c-- {
		p := st.ctxParent[c]
		incW[p].ns += incW[c].ns
		incW[p].n += incW[c].n
		incS[p].ns += incS[c].ns
		incS[p].n += incS[c].n
	}

	// Sites in name order, so that the file does not depend on the order
	// the trace showed them in.
	order := make([]int, len(st.sites))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		a, b := st.sites[x], st.sites[y]
		return cmp.Or(cmp.Compare(a.Func, b.Func), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	newIndex := make([]int, len(st.sites))
	used := make([]bool, len(st.sites))
	var contexts []spanprofile.Context
	for c := 0; c < n; c++ {
		if incW[c] == (cell{}) && incS[c] == (cell{}) {
			continue
		}
		ctx := spanprofile.Context{
			OnWork: spanprofile.Measurement{Local: spanprofile.Triple{Count: exW[c].n, Work: exW[c].ns, Span: exS[c].ns}},
			OnSpan: spanprofile.Measurement{Local: spanprofile.Triple{Count: exS[c].n, Work: exS[c].ns, Span: exS[c].ns}},
		}
		if c > 0 {
			// The root is no site: it has no inclusive measurements.
			in := spanprofile.Triple{Count: incW[c].n, Work: incW[c].ns, Span: incS[c].ns}
			ctx.OnWork.TopCallSite, ctx.OnWork.TopCaller = in, in
			on := spanprofile.Triple{Count: incS[c].n, Work: incS[c].ns, Span: incS[c].ns}
			ctx.OnSpan.TopCallSite, ctx.OnSpan.TopCaller = on, on
			for _, s := range st.ctxStack(ctxID(c)) {
				ctx.Stack = append(ctx.Stack, int(s))
				used[s] = true
			}
		}
		contexts = append(contexts, ctx)
	}
	var sites []spanprofile.Site
	for _, s := range order {
		if used[s] {
			newIndex[s] = len(sites)
			sites = append(sites, st.sites[s])
		}
	}
	for i := range contexts {
		for j, s := range contexts[i].Stack {
			contexts[i].Stack[j] = newIndex[s]
		}
	}
	slices.SortFunc(contexts, func(x, y spanprofile.Context) int { return slices.Compare(x.Stack, y.Stack) })

	info := a.info
	info.Events = a.events
	info.Duration = int64(a.last - a.first)
	info.Period = a.gaps.period()
	return &spanprofile.Profile{
		Mode: "trace", Measure: "clock", Unit: "nanoseconds",
		Work: a.totalWork, Span: a.span, BurdenedSpan: a.span,
		Spawns: a.spawns, Syncs: a.info.Wakeups,
		Procs:     a.procs,
		TimeNanos: a.wall, DurationNanos: info.Duration,
		Trace: &info,
		Tasks: a.tasks.summaries(st),
		Sites: sites, Contexts: contexts,
	}
}
