package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/spanprof/spanprof/spanprofile"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"commas":   commas,
	"decimal":  decimal,
	"ratio":    ratio,
	"quantity": quantity,
	"duration": func(ns int64) string { return duration(float64(ns)) },
	"percent":  percent,
	"plural":   plural,
	"orDash":   orDash,
}).Parse(htmlSource))

// htmlData is what the HTML template sees.
type htmlData struct {
	P       *spanprofile.Profile
	Trace   bool // trace mode: sites are stack frames
	Verdict string
	// Key are the numbers the page opens with; Details the rest of the
	// parallelism profile, Trust how far to trust it.
	Key      []keyNumber
	Details  [][2]string
	Trust    [][2]string
	Warnings []string
	// NotProfiled is what the run did not profile, a sentence each.
	NotProfiled []string
	// LeftOut names the calls left out that may carry work.
	LeftOut string

	Icicle  *icicleChart
	Speedup []spanprofile.Bound
	Chart   *speedupChart

	Rows      []htmlRow
	Sort      string
	SortCol   int // the column the rows are sorted by, -1 for none shown
	Hidden    int // executed sites cut by -top
	NotRun    int
	UnitName  string
	Functions []FunctionSummary // trace mode, at most TopFunctions
	MoreFuncs int

	// The what-if profile: a chart, and a table of parallelism by
	// target and factor.
	WhatIfChart *whatIfChart
	WhatIfHead  []string
	WhatIfRows  []htmlWhatIfRow
}

type keyNumber struct {
	Label, Value, Note string
}

// htmlRow is a row of the site table, with the values its columns sort by.
type htmlRow struct {
	Root           bool
	Place          string
	URL            template.URL
	Func, Kind     string
	SpanPct        string // as printed
	SpanV, SpanBar float64
	SpanTitle      string
	WorkPct        string
	WorkV, WorkBar float64
	WorkTitle      string
	Par            string
	ParV           float64
	Calls          int64
}

// The site table's columns that the sort keys name, by key.
var sortColumn = map[string]int{
	"site": 0, DefaultSort: 3, "local-work": 4, "parallelism": 5, "count": 6,
}

// HTML writes the report of p as one self-contained page (inline CSS, SVG
// and a small script; nothing fetched): the verdict, the key numbers and
// warnings, the critical path as an icicle chart, the speedup bounds as a
// chart and a table, and the sites in a table sortable by any column, each
// linked to its source line (Options.SourceURL).
func HTML(w io.Writer, p *spanprofile.Profile, opts Options) error {
	r, err := selectRows(p, opts)
	if err != nil {
		return err
	}
	bounds := p.SpeedupEstimate(opts.procs())
	d := htmlData{
		P:           p,
		Trace:       p.Mode == "trace",
		Verdict:     Verdict(p),
		Trust:       trustLines(p),
		Warnings:    Warnings(p),
		NotProfiled: notProfiledLines(p),
		LeftOut:     leftOutLine(p),
		Icicle:      icicle(p, opts.SourceURL),
		Speedup:     bounds,
		Chart:       speedup(p, bounds),
		Sort:        r.sort.Name,
		SortCol:     -1,
		Hidden:      r.executed - len(r.sites),
		NotRun:      r.unexecuted,
		UnitName:    unitAbbrev(p.Unit),
	}
	d.WhatIfChart = whatIfChartOf(p)
	d.WhatIfHead, d.WhatIfRows = htmlWhatIf(p)
	if c, ok := sortColumn[r.sort.Name]; ok {
		d.SortCol = c
	}
	unit := p.Unit
	d.Key = []keyNumber{
		{"Work", quantity(p.Work, unit), "T1, all strands"},
		{"Span", quantity(p.Span, unit), "T∞, the critical path"},
		{"Parallelism", decimal(p.Parallelism(), 2), "work / span"},
	}
	if d.Trace {
		// No instrumentation: nothing burdened, nothing subtracted.
		d.Details = traceLines(p)
		funcs := Functions(p)
		d.Functions = funcs[:min(len(funcs), TopFunctions)]
		d.MoreFuncs = len(funcs) - len(d.Functions)
	} else {
		d.Key = append(d.Key, keyNumber{"Burdened parallelism", decimal(p.BurdenedParallelism(), 2), "with the cost of spawning"})
		overhead := "none"
		if p.Overhead != 0 || p.Subtracted != 0 {
			overhead = quantity(p.Overhead, unit) + " per event, " + quantity(p.Subtracted, unit) + " in all"
		}
		d.Details = [][2]string{
			{"Burdened span", quantity(p.BurdenedSpan, unit)},
			{"Spawns", commas(p.Spawns)},
			{"Syncs", commas(p.Syncs)},
			{"Average strand", quantity(int64(math.Round(p.AverageStrand())), unit)},
			{"Burden", quantity(p.Burden, unit) + " per spawn"},
			{"Overhead subtracted", overhead},
		}
	}
	for _, m := range r.all() {
		ow := m.OnWork.TopCallSite
		row := htmlRow{
			Root:  m.Index < 0,
			Place: sitePlace(m.Site),
			Func:  m.Site.Func,
			Kind:  string(m.Site.Kind),
			Par:   ratio(ow.Work, ow.Span),
			ParV:  spanprofile.Ratio(ow.Work, ow.Span),
			Calls: m.OnWork.Local.Count,
		}
		if !row.Root {
			row.URL = sourceLink(opts.SourceURL, m.Site)
		}
		row.SpanPct, row.SpanV, row.SpanBar = share(m.OnSpan.Local.Span, p.Span)
		row.WorkPct, row.WorkV, row.WorkBar = share(m.OnWork.Local.Work, p.Work)
		row.SpanTitle = fmt.Sprintf("local span on span: %s", quantity(m.OnSpan.Local.Span, unit))
		row.WorkTitle = fmt.Sprintf("local work on work: %s", quantity(m.OnWork.Local.Work, unit))
		d.Rows = append(d.Rows, row)
	}
	return htmlTemplate.Execute(w, d)
}

// share returns a as a share of b: printed, as a number to sort by, and as
// a bar's width in percent.
func share(a, b int64) (string, float64, float64) {
	if b <= 0 {
		return "-", 0, 0
	}
	pct := 100 * float64(a) / float64(b)
	return percent(a, b), pct, round2(math.Max(0, math.Min(100, pct)))
}
