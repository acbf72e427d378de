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
}

// CSV writes the report's rows for spreadsheets: a header, then one row per
// site (and one of kind root for the program's own strands) with every
// value. The whole-run summary is not repeated; see Text or JSON.
func CSV(w io.Writer, p *spanprofile.Profile, opts Options) error {
	r, err := selectRows(p, opts)
	if err != nil {
		return err
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
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
