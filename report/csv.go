package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/spanprof/spanprof/spanprofile"
)

// csvHeader names the CSV columns; the 18 numbers have the names of the
// pprof sample types that carry them (see package spanprofile).
var csvHeader = []string{
	"site", "column", "func", "kind", "caller",
	"onwork_top_call_site_count", "onwork_top_call_site_work", "onwork_top_call_site_span",
	"onwork_top_caller_count", "onwork_top_caller_work", "onwork_top_caller_span",
	"onwork_local_count", "onwork_local_work", "onwork_local_span",
	"onspan_top_call_site_count", "onspan_top_call_site_work", "onspan_top_call_site_span",
	"onspan_top_caller_count", "onspan_top_caller_work", "onspan_top_caller_span",
	"onspan_local_count", "onspan_local_work", "onspan_local_span",
	// Added columns: the events at the site that goroutines which did not
	// hold the profiler began (not profiled), and how the run ended when
	// it did not complete (the same on every row; empty when it did).
	"not_profiled_events", "ended",
}

// CSV writes the report's rows for spreadsheets: a header, then one row per
// site (and one of kind root for the program's own strands) with every
// value. The whole-run summary is not repeated (see Text or JSON), but for
// how a run that did not complete ended, on every row.
func CSV(w io.Writer, p *spanprofile.Profile, opts Options) error {
	r, err := selectRows(p, opts)
	if err != nil {
		return err
	}
	at := notProfiledAt(p)
	ended := ""
	if p.Partial() {
		ended = p.Ended
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, m := range r.all() {
		record := []string{siteName(m.Site), strconv.Itoa(m.Site.Column), m.Site.Func, string(m.Site.Kind), m.Site.Caller}
		for _, t := range []spanprofile.Triple{
			m.OnWork.TopCallSite, m.OnWork.TopCaller, m.OnWork.Local,
			m.OnSpan.TopCallSite, m.OnSpan.TopCaller, m.OnSpan.Local,
		} {
			record = append(record, strconv.FormatInt(t.Count, 10), strconv.FormatInt(t.Work, 10), strconv.FormatInt(t.Span, 10))
		}
		var np int64
		if m.Index >= 0 {
			np = at[m.Index]
		}
		record = append(record, strconv.FormatInt(np, 10), ended)
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
