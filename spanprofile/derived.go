package spanprofile

import (
	"runtime"
	"slices"
)

// SpanCoefficient is Cilkview's δ: the lower speedup bound charges each
// processor 2δ = 1.7 burdened spans (Cilkview inequality (6)).
const SpanCoefficient = 0.85

// Ratio returns a/b, or 0 when b is 0, so that derived values of an empty or
// degenerate profile are numbers (JSON has no NaN or infinity).
func Ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Parallelism returns the work divided by the span, T1/T∞ (0 for an empty
// profile).
func (p *Profile) Parallelism() float64 { return Ratio(p.Work, p.Span) }

// BurdenedParallelism returns the work divided by the burdened span (0 for an
// empty profile).
func (p *Profile) BurdenedParallelism() float64 { return Ratio(p.Work, p.BurdenedSpan) }

// AverageStrand returns Cilkview's average maximal strand: the work divided
// by 1 + 2·spawns + syncs, the number of strands a fork/join run with that
// many spawns and syncs has at least.
func (p *Profile) AverageStrand() float64 {
	return Ratio(p.Work, 1+2*p.Spawns+p.Syncs)
}

// Bound is the estimated speedup range on Procs processors.
type Bound struct {
	Procs int     `json:"procs"`
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// SpeedupEstimate returns Cilkview's speedup bounds for each processor count:
// upper = min(P, T1/T∞) (the work and span laws) and lower =
// T1 / (T1/P + 1.7·burdened span) (inequality (6) with δ = 0.85). The lower
// bound is clamped to the upper one, which it can only exceed when the
// burdened span is smaller than the span, that is in a corrupt profile.
func (p *Profile) SpeedupEstimate(procs []int) []Bound {
	bounds := make([]Bound, 0, len(procs))
	par := p.Parallelism()
	for _, n := range procs {
		b := Bound{Procs: n, Upper: min(float64(n), par)}
		if n > 0 {
			den := float64(p.Work)/float64(n) + 2*SpanCoefficient*float64(p.BurdenedSpan)
			if den > 0 {
				b.Lower = min(float64(p.Work)/den, b.Upper)
			}
		}
		bounds = append(bounds, b)
	}
	return bounds
}

// DefaultProcs returns the processor counts of the speedup estimate: the
// powers of two from 2 to 64, plus this machine's runtime.NumCPU() when it is
// not one of them, in increasing order.
func DefaultProcs() []int {
	procs := []int{2, 4, 8, 16, 32, 64}
	if n := runtime.NumCPU(); !slices.Contains(procs, n) {
		procs = append(procs, n)
		slices.Sort(procs)
	}
	return procs
}

// SiteMeasurement is the measurements of one site summed over every calling
// context whose innermost site it is.
type SiteMeasurement struct {
	// Index is the site's index in Profile.Sites, or -1 for the root (the
	// strands outside every instrumented invocation).
	Index  int
	Site   Site
	OnWork Measurement
	OnSpan Measurement
}

// Executed reports whether any invocation of the site was measured.
func (m SiteMeasurement) Executed() bool {
	return m.OnWork != (Measurement{}) || m.OnSpan != (Measurement{})
}

// BySite returns one SiteMeasurement per site, in the order of p.Sites, each
// the sum of the contexts whose stack ends at that site. Sites that were
// never executed are included with zero measurements. The root context
// (empty stack) belongs to no site: see Root. Contexts whose leaf index is
// out of range are ignored; Check reports them.
func (p *Profile) BySite() []SiteMeasurement {
	out := make([]SiteMeasurement, len(p.Sites))
	for i, s := range p.Sites {
		out[i] = SiteMeasurement{Index: i, Site: s}
	}
	for _, c := range p.Contexts {
		if len(c.Stack) == 0 {
			continue
		}
		leaf := c.Stack[len(c.Stack)-1]
		if leaf < 0 || leaf >= len(out) {
			continue
		}
		out[leaf].OnWork = out[leaf].OnWork.Add(c.OnWork)
		out[leaf].OnSpan = out[leaf].OnSpan.Add(c.OnSpan)
	}
	return out
}

// Root returns the sum of the root contexts (empty stack): the program's own
// strands outside every instrumented invocation. Its Site is the profile's
// root site when it has one (see RootSite), otherwise a Site of KindRoot
// named "main".
func (p *Profile) Root() SiteMeasurement {
	root := SiteMeasurement{Index: -1, Site: p.RootSite()}
	for _, c := range p.Contexts {
		if len(c.Stack) == 0 {
			root.OnWork = root.OnWork.Add(c.OnWork)
			root.OnSpan = root.OnSpan.Add(c.OnSpan)
		}
	}
	return root
}

// RootName is the function name given to the root of every stack when the
// profile has no site of KindRoot: the program as a whole.
const RootName = "main"

// RootSite returns the first site of KindRoot in p.Sites, which names the
// program's entry (main.main, or the test runner), or a Site{Func: "main",
// Kind: KindRoot} when there is none.
func (p *Profile) RootSite() Site {
	for _, s := range p.Sites {
		if s.Kind == KindRoot {
			return s
		}
	}
	return Site{Func: RootName, Kind: KindRoot}
}
