package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// The what-if section (docs/what-if.md): for each target of the profile's
// what-if estimates, the parallelism the run would have had with the
// target's strands 1/factor as long, in every format.

// WhatIfSummary is one what-if estimate of the JSON report: the work, span
// and parallelism of the run had Target's strands taken 1/Factor of their
// time (Factor 0: none), and the speedup bounds that follow.
type WhatIfSummary struct {
	Target      string  `json:"target"`
	Site        string  `json:"site"` // the first site the target matched, file:line; empty for a region and for all
	Func        string  `json:"func"`
	Factor      int64   `json:"factor"` // 0 for ∞
	Work        int64   `json:"work"`
	Span        int64   `json:"span"`
	Parallelism float64 `json:"parallelism"`

	BurdenedSpan        int64               `json:"burdened_span"`
	BurdenedParallelism float64             `json:"burdened_parallelism"`
	SpeedupEstimate     []spanprofile.Bound `json:"speedup_estimate"`
	// Sites counts the sites the target matched: 0 means none ran, and
	// the estimate is the run itself.
	Sites int `json:"sites"`
}

func whatIfSummaries(p *spanprofile.Profile, procs []int) []WhatIfSummary {
	var out []WhatIfSummary
	for _, w := range p.WhatIf {
		out = append(out, WhatIfSummary{
			Target: w.Target, Site: w.Site, Func: w.Func, Factor: w.Factor,
			Work: w.Work, Span: w.Span, Parallelism: w.Parallelism(),
			BurdenedSpan: w.BurdenedSpan, BurdenedParallelism: w.BurdenedParallelism(),
			SpeedupEstimate: w.SpeedupEstimate(procs), Sites: w.Sites,
		})
	}
	return out
}

// TopSites returns the first n executed sites of p in the report's default
// order, the root left out: what `spanprof run` asks the what-if profile
// about when it is told of no target.
func TopSites(p *spanprofile.Profile, n int) []spanprofile.SiteMeasurement {
	r, err := selectRows(p, Options{Top: n})
	if err != nil {
		return nil // the default options are valid
	}
	return r.sites
}

// whatIfTarget is one target's estimates, in the profile's order of
// factors.
type whatIfTarget struct {
	spanprofile.WhatIf // the first estimate: its target, site, func
	est                []spanprofile.WhatIf
}

// whatIfTargets groups the estimates by target, in the profile's order.
func whatIfTargets(p *spanprofile.Profile) []*whatIfTarget {
	var out []*whatIfTarget
	for _, w := range p.WhatIf {
		if len(out) == 0 || out[len(out)-1].Target != w.Target {
			out = append(out, &whatIfTarget{WhatIf: w})
		}
		t := out[len(out)-1]
		t.est = append(t.est, w)
	}
	return out
}

// factorName is a factor as the reports head it: ÷2, or ∞ for 0.
func factorName(f int64) string {
	if f == 0 {
		return "∞"
	}
	return "÷" + strconv.FormatInt(f, 10)
}

// whatIfFactors returns the factors of the estimates, in order.
func whatIfFactors(p *spanprofile.Profile) []int64 {
	var fs []int64
	for _, w := range p.WhatIf {
		if !slices.Contains(fs, w.Factor) {
			fs = append(fs, w.Factor)
		}
	}
	return fs
}

// targetPlace says where a target is: its site and function, or that it
// matched nothing.
func (t *whatIfTarget) place() string {
	switch {
	case t.Target == spanprofile.WhatIfAll:
		return "all the targets together"
	case t.Sites == 0:
		return "matched no site"
	case t.Site == "":
		return "region"
	case t.Func == t.Target:
		more := ""
		if t.Sites > 1 {
			more = fmt.Sprintf(" and %d more", t.Sites-1)
		}
		return t.Site + more
	}
	return t.Func
}

// textWhatIf writes the what-if section of the text report.
func textWhatIf(e *errWriter, p *spanprofile.Profile, opts Options) {
	targets := whatIfTargets(p)
	if len(targets) == 0 {
		return
	}
	factors := whatIfFactors(p)
	e.printf("\n4) What if: the parallelism had the target's strands taken 1/factor of their time (run: %s)\n", decimal(p.Parallelism(), 2))
	if !opts.Wide {
		t := &table{right: []bool{false, false}}
		head := []string{"target", "where"}
		for _, f := range factors {
			head = append(head, factorName(f))
			t.right = append(t.right, true)
		}
		t.add(head...)
		for _, tg := range targets {
			row := []string{tg.Target, tg.place()}
			for _, f := range factors {
				row = append(row, estimateCell(tg, f, func(w spanprofile.WhatIf) string { return decimal(w.Parallelism(), 2) }))
			}
			t.add(row...)
		}
		e.table(t, "")
		e.printf("Each target alone, and all of them together; the work shrinks with the span. spanprof report\n" +
			"-wide FILE shows the work, span and speedup bounds of every estimate.\n")
		return
	}
	procs := opts.procs()
	t := &table{right: []bool{false, true, true, true, true, true}}
	head := []string{"target", "factor", "work", "span", "T1/T∞", "burdened"}
	for _, n := range procs {
		head = append(head, "P="+strconv.Itoa(n))
		t.right = append(t.right, true)
	}
	t.add(head...)
	for _, tg := range targets {
		for _, w := range tg.est {
			row := []string{tg.Target, factorName(w.Factor), commas(w.Work), commas(w.Span),
				decimal(w.Parallelism(), 2), decimal(w.BurdenedParallelism(), 2)}
			for _, b := range w.SpeedupEstimate(procs) {
				row = append(row, decimal(b.Lower, 2)+"–"+decimal(b.Upper, 2))
			}
			t.add(row...)
		}
	}
	e.table(t, "")
	e.printf("Times in %s. P=n: the speedup bounds on n processors (lower–upper).\n", unitAbbrev(p.Unit))
}

func estimateCell(t *whatIfTarget, f int64, v func(spanprofile.WhatIf) string) string {
	for _, w := range t.est {
		if w.Factor == f {
			return v(w)
		}
	}
	return "-"
}

// What-if chart geometry: one line per target, parallelism against factor.
const (
	wiW, wiH          = 560, 260
	wiLeft, wiRight   = 48, 150
	wiTop, wiBottom   = 14, 40
	wiPlotW, wiPlotH  = wiW - wiLeft - wiRight, wiH - wiTop - wiBottom
	maxWhatIfLines    = 8
	whatIfLabelHeight = 16
)

var wiColors = []string{"#1c7ed6", "#c92a2a", "#2b8a3e", "#e8590c", "#7048e8", "#0c8599", "#d6336c", "#5c940d"}

// whatIfChart is the what-if profile as a picture: for each target, the
// parallelism at the run's own speed (×1) and at each factor, on evenly
// spaced columns.
type whatIfChart struct {
	Width, Height  int
	Left, Top      int
	PlotW, PlotH   int
	XTicks, YTicks []chartTick
	Lines          []whatIfLine
}

type whatIfLine struct {
	Color, Points, Label string
	LabelY               float64
	Dots                 []chartPoint
}

func whatIfChartOf(p *spanprofile.Profile) *whatIfChart {
	targets := whatIfTargets(p)
	if len(targets) == 0 || p.Span <= 0 {
		return nil
	}
	targets = targets[:min(len(targets), maxWhatIfLines)]
	factors := whatIfFactors(p)
	top := p.Parallelism()
	for _, t := range targets {
		for _, w := range t.est {
			top = max(top, w.Parallelism())
		}
	}
	top *= 1.1
	step := niceStep(top / 5)
	top = step * math.Ceil(top/step)
	cols := len(factors) + 1
	xOf := func(i int) float64 { return round2(wiPlotW * float64(i) / float64(cols-1)) }
	yOf := func(s float64) float64 { return round2(wiPlotH * (1 - s/top)) }
	c := &whatIfChart{Width: wiW, Height: wiH, Left: wiLeft, Top: wiTop, PlotW: wiPlotW, PlotH: wiPlotH}
	c.XTicks = append(c.XTicks, chartTick{xOf(0), "run"})
	for i, f := range factors {
		c.XTicks = append(c.XTicks, chartTick{xOf(i + 1), factorName(f)})
	}
	for s := 0.0; s <= top+step/2; s += step {
		c.YTicks = append(c.YTicks, chartTick{yOf(s), strconv.FormatFloat(s, 'f', -1, 64)})
	}
	var used []float64
	for k, t := range targets {
		l := whatIfLine{Color: wiColors[k%len(wiColors)], Label: t.Target}
		pts := []string{point(xOf(0), yOf(p.Parallelism()))}
		last := yOf(p.Parallelism())
		for i, f := range factors {
			w, ok := estimate(t, f)
			if !ok {
				continue
			}
			x, y := xOf(i+1), yOf(w.Parallelism())
			pts = append(pts, point(x, y))
			l.Dots = append(l.Dots, chartPoint{X: x, Upper: y,
				Title: fmt.Sprintf("%s %s: parallelism %s", t.Target, factorName(f), decimal(w.Parallelism(), 2))})
			last = y
		}
		l.Points = strings.Join(pts, " ")
		// Labels at the lines' right ends, pushed apart where they meet.
		l.LabelY = last
		for slices.ContainsFunc(used, func(u float64) bool { return math.Abs(u-l.LabelY) < whatIfLabelHeight }) {
			l.LabelY += whatIfLabelHeight
		}
		used = append(used, l.LabelY)
		c.Lines = append(c.Lines, l)
	}
	return c
}

func estimate(t *whatIfTarget, f int64) (spanprofile.WhatIf, bool) {
	for _, w := range t.est {
		if w.Factor == f {
			return w, true
		}
	}
	return spanprofile.WhatIf{}, false
}

// htmlWhatIfRow is a row of the HTML report's what-if table.
type htmlWhatIfRow struct {
	Target, Where string
	Cells         []string
}

func htmlWhatIf(p *spanprofile.Profile) (head []string, rows []htmlWhatIfRow) {
	for _, f := range whatIfFactors(p) {
		head = append(head, factorName(f))
	}
	for _, t := range whatIfTargets(p) {
		r := htmlWhatIfRow{Target: t.Target, Where: t.place()}
		for _, f := range whatIfFactors(p) {
			r.Cells = append(r.Cells, estimateCell(t, f, func(w spanprofile.WhatIf) string { return decimal(w.Parallelism(), 2) }))
		}
		rows = append(rows, r)
	}
	return head, rows
}
