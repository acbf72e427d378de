package report

import (
	_ "embed"
	"html/template"
	"io"

	"github.com/spanprof/spanprof/spanprofile"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"commas":   commas,
	"decimal":  decimal,
	"ratio":    ratio,
	"quantity": quantity,
	"place":    sitePlace,
	"plural":   plural,
	"round":    func(x float64) int64 { return int64(x + 0.5) },
}).Parse(htmlSource))

// htmlData is what the HTML template sees.
type htmlData struct {
	P        *spanprofile.Profile
	Speedup  []spanprofile.Bound
	Rows     []spanprofile.SiteMeasurement
	Sort     string
	Hidden   int // executed sites cut by -top
	NotRun   int
	UnitName string
	Warnings []string
	// NotProfiled is what the run did not profile, a sentence each.
	NotProfiled []string
}

// HTML writes the report of p as a self-contained page (no scripts, no
// external resources): the summary, the speedup estimate and the site table.
func HTML(w io.Writer, p *spanprofile.Profile, opts Options) error {
	r, err := selectRows(p, opts)
	if err != nil {
		return err
	}
	return htmlTemplate.Execute(w, htmlData{
		P:        p,
		Speedup:  p.SpeedupEstimate(opts.procs()),
		Rows:     r.all(),
		Sort:     r.sort.Name,
		Hidden:   r.executed - len(r.sites),
		NotRun:   r.unexecuted,
		UnitName: unitAbbrev(p.Unit),
		Warnings: Warnings(p),

		NotProfiled: notProfiledLines(p),
	})
}
