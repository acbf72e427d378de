package report_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

// TestWhatIfInEveryFormat: the what-if estimates reach each format: the
// text table of parallelism by factor, the JSON field what_if with every
// estimate's numbers and bounds, the HTML chart with a line per target;
// a profile without estimates has no section and no field.
func TestWhatIfInEveryFormat(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.WhatIf()
	text := string(render(t, "text", p, report.Options{Procs: procs}))
	part := p.WhatIf[0] // main.partition ÷2
	row := regexp.MustCompile(`(?m)^main\.partition +qsort\.go:20 +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$`).FindStringSubmatch(text)
	if row == nil {
		t.Fatalf("no what-if row for main.partition:\n%s", text)
	}
	for i, w := range p.WhatIf[:4] {
		if want := fmt.Sprintf("%.2f", w.Parallelism()); row[1+i] != want {
			t.Errorf("main.partition %s: %s, want %s", []string{"÷2", "÷4", "÷8", "∞"}[i], row[1+i], want)
		}
	}
	if !strings.Contains(text, "build tree") || !strings.Contains(text, "matched no site") {
		t.Errorf("the target that matched nothing is not said so:\n%s", text)
	}

	s, err := report.Summarize(p, report.Options{Procs: procs})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.WhatIf) != len(p.WhatIf) {
		t.Fatalf("JSON what_if has %d entries, want %d", len(s.WhatIf), len(p.WhatIf))
	}
	got := s.WhatIf[0]
	if got.Target != "main.partition" || got.Site != "qsort.go:20" || got.Func != "main.partition" || got.Factor != 2 ||
		got.Work != part.Work || got.Span != part.Span || got.Parallelism != part.Parallelism() || len(got.SpeedupEstimate) != len(procs) {
		t.Errorf("JSON what_if[0] = %+v, want the estimate %+v", got, part)
	}
	if inf := s.WhatIf[3]; inf.Factor != 0 || inf.Span >= got.Span {
		t.Errorf("JSON what_if[3] (∞) = %+v: factor 0, and a span below ÷2's", inf)
	}
	if b := got.SpeedupEstimate[len(procs)-1]; b.Upper != min(float64(procs[len(procs)-1]), part.Parallelism()) {
		t.Errorf("the ÷2 estimate's upper bound on %d processors = %v", procs[len(procs)-1], b.Upper)
	}

	html := string(render(t, "html", p, report.Options{Procs: procs}))
	if !strings.Contains(html, `id="what-if-chart"`) || strings.Count(html, "<polyline points=") < 2+3 {
		t.Errorf("the HTML report lacks the what-if chart with a line per target")
	}
	if !strings.Contains(html, fmt.Sprintf("main.partition ÷2: parallelism %.2f", part.Parallelism())) {
		t.Errorf("the HTML chart's points do not say their parallelism")
	}

	plain := spanprofiletest.Profile()
	if text := string(render(t, "text", plain, report.Options{Procs: procs})); strings.Contains(text, "What if") {
		t.Errorf("a profile without estimates has a what-if section")
	}
	if js := string(render(t, "json", plain, report.Options{Procs: procs})); strings.Contains(js, "what_if") {
		t.Errorf("a profile without estimates has a what_if field")
	}
	if html := string(render(t, "html", plain, report.Options{Procs: procs})); strings.Contains(html, "what-if") {
		t.Errorf("a profile without estimates has a what-if chart")
	}
}

// TestTopSites: run's default what-if targets are the report's first
// sites, in its order, without the root.
func TestTopSites(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	top := report.TopSites(p, 2)
	if len(top) != 2 || top[0].Site.Func != "main.partition" {
		t.Fatalf("TopSites = %+v, want 2 sites, partition first", top)
	}
	for _, m := range top {
		if m.Site.Kind == spanprofile.KindRoot || m.Index < 0 {
			t.Errorf("TopSites includes the root")
		}
	}
}
