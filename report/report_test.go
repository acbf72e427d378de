package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// procs fixes the speedup estimate's processor counts: the default depends
// on the machine.
var procs = []int{2, 4, 8, 16, 32, 64}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func render(t *testing.T, format string, p *spanprofile.Profile, opts report.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Write(&buf, format, p, opts); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    *spanprofile.Profile
		opts report.Options
	}{
		{"quicksort", spanprofiletest.Profile(), report.Options{Procs: procs}},
		{"quicksort-top3-by-work", spanprofiletest.Profile(), report.Options{Procs: procs, Sort: "work", Top: 3, Wide: true}},
		{"empty", spanprofiletest.Empty(), report.Options{Procs: procs}},
		{"zero", &spanprofile.Profile{}, report.Options{Procs: procs}},
		{"pipeline-trace", spanprofiletest.Trace(), report.Options{Procs: procs}},
		{"quicksort-whatif", spanprofiletest.WhatIf(), report.Options{Procs: procs}},
		{"quicksort-whatif-wide", spanprofiletest.WhatIf(), report.Options{Procs: []int{2, 8, 32}, Wide: true}},
	} {
		for _, format := range report.Formats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				golden(t, tc.name+"."+format, render(t, format, tc.p, tc.opts))
			})
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	t.Parallel()
	err := report.Write(&bytes.Buffer{}, "xml", spanprofiletest.Profile(), report.Options{})
	if err == nil || !strings.Contains(err.Error(), "text, csv, json, html") {
		t.Errorf("Write(xml): %v, want an error listing the formats", err)
	}
}

// jsonReport mirrors docs/json-report.md field by field, independently of the
// package's own types.
type jsonReport struct {
	Mode                string  `json:"mode"`
	Measure             string  `json:"measure"`
	Unit                string  `json:"unit"`
	Work                int64   `json:"work"`
	Span                int64   `json:"span"`
	Parallelism         float64 `json:"parallelism"`
	BurdenedSpan        int64   `json:"burdened_span"`
	BurdenedParallelism float64 `json:"burdened_parallelism"`
	Burden              int64   `json:"burden"`
	Spawns              int64   `json:"spawns"`
	Syncs               int64   `json:"syncs"`
	AverageStrand       float64 `json:"average_strand"`
	SpeedupEstimate     []struct {
		Procs int     `json:"procs"`
		Lower float64 `json:"lower"`
		Upper float64 `json:"upper"`
	} `json:"speedup_estimate"`
	Sites []struct {
		Site   string          `json:"site"`
		Func   string          `json:"func"`
		Kind   string          `json:"kind"`
		OnWork jsonMeasurement `json:"on_work"`
		OnSpan jsonMeasurement `json:"on_span"`
	} `json:"sites"`
}

type jsonMeasurement struct {
	TopCallSite jsonTriple `json:"top_call_site"`
	TopCaller   jsonTriple `json:"top_caller"`
	Local       jsonTriple `json:"local"`
}

type jsonTriple struct {
	Count int64 `json:"count"`
	Work  int64 `json:"work"`
	Span  int64 `json:"span"`
}

func triple(t spanprofile.Triple) jsonTriple { return jsonTriple{t.Count, t.Work, t.Span} }

func measurement(m spanprofile.Measurement) jsonMeasurement {
	return jsonMeasurement{triple(m.TopCallSite), triple(m.TopCaller), triple(m.Local)}
}

func TestJSONSchema(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	data := render(t, "json", p, report.Options{Procs: procs})

	var got jsonReport
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Mode != "serial" || got.Measure != "clock" || got.Unit != "nanoseconds" {
		t.Errorf("mode, measure, unit = %q, %q, %q", got.Mode, got.Measure, got.Unit)
	}
	if got.Work != p.Work || got.Span != p.Span || got.BurdenedSpan != p.BurdenedSpan || got.Burden != p.Burden ||
		got.Spawns != p.Spawns || got.Syncs != p.Syncs {
		t.Errorf("whole-run values %+v differ from the profile's", got)
	}
	if got.Parallelism != p.Parallelism() || got.BurdenedParallelism != p.BurdenedParallelism() || got.AverageStrand != p.AverageStrand() {
		t.Errorf("parallelism %v, burdened %v, average strand %v; want %v, %v, %v", got.Parallelism, got.BurdenedParallelism,
			got.AverageStrand, p.Parallelism(), p.BurdenedParallelism(), p.AverageStrand())
	}
	want := p.SpeedupEstimate(procs)
	if len(got.SpeedupEstimate) != len(want) {
		t.Fatalf("speedup_estimate has %d entries, want %d", len(got.SpeedupEstimate), len(want))
	}
	for i, b := range got.SpeedupEstimate {
		if b.Procs != want[i].Procs || b.Lower != want[i].Lower || b.Upper != want[i].Upper {
			t.Errorf("speedup_estimate[%d] = %+v, want %+v", i, b, want[i])
		}
	}

	// Sites: the 7 executed ones, by local span on span; partition first.
	bySite := p.BySite()
	wantOrder := []int{1, 5, 6, 3, 2, 0, 4}
	if len(got.Sites) != len(wantOrder) {
		t.Fatalf("%d sites, want %d", len(got.Sites), len(wantOrder))
	}
	for i, s := range got.Sites {
		m := bySite[wantOrder[i]]
		wantSite := m.Site.File + ":" + itoa(m.Site.Line)
		if s.Site != wantSite || s.Func != m.Site.Func || s.Kind != string(m.Site.Kind) {
			t.Errorf("sites[%d] = %s %s %s, want %s %s %s", i, s.Site, s.Func, s.Kind, wantSite, m.Site.Func, m.Site.Kind)
		}
		if s.OnWork != measurement(m.OnWork) || s.OnSpan != measurement(m.OnSpan) {
			t.Errorf("sites[%d] (%s): on_work %+v on_span %+v, want %+v %+v", i, s.Site, s.OnWork, s.OnSpan, m.OnWork, m.OnSpan)
		}
		if s.Kind != "spawn" && s.Kind != "call" && s.Kind != "region" {
			t.Errorf("sites[%d] kind %q, want spawn, call or region", i, s.Kind)
		}
	}

	// Every key of §9 is there, with numbers as JSON numbers.
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"work", "span", "parallelism", "burdened_span", "burdened_parallelism", "burden",
		"spawns", "syncs", "average_strand"} {
		if _, ok := raw[key].(float64); !ok {
			t.Errorf("%s is %T, want a JSON number", key, raw[key])
		}
	}
	for _, key := range []string{"mode", "measure", "unit"} {
		if _, ok := raw[key].(string); !ok {
			t.Errorf("%s is %T, want a string", key, raw[key])
		}
	}
	site := raw["sites"].([]any)[0].(map[string]any)
	for _, prof := range []string{"on_work", "on_span"} {
		for _, m := range []string{"top_call_site", "top_caller", "local"} {
			triple, _ := site[prof].(map[string]any)[m].(map[string]any)
			for _, f := range []string{"count", "work", "span"} {
				if _, ok := triple[f].(float64); !ok {
					t.Errorf("sites[0].%s.%s.%s is %T, want a JSON number", prof, m, f, triple[f])
				}
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestJSONEmpty(t *testing.T) {
	t.Parallel()
	var got map[string]any
	if err := json.Unmarshal(render(t, "json", &spanprofile.Profile{}, report.Options{Procs: procs}), &got); err != nil {
		t.Fatal(err)
	}
	// An empty list, not null, so that consumers can iterate.
	if sites, ok := got["sites"].([]any); !ok || len(sites) != 0 {
		t.Errorf("sites of an empty profile = %#v, want []", got["sites"])
	}
	if got["parallelism"] != 0.0 {
		t.Errorf("parallelism of an empty profile = %v, want 0", got["parallelism"])
	}
}

// rowsCSV returns the site column and the named numeric column of the CSV
// report.
func rowsCSV(t *testing.T, p *spanprofile.Profile, opts report.Options) [][]string {
	t.Helper()
	records, err := csv.NewReader(bytes.NewReader(render(t, "csv", p, opts))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return records
}

func TestCSV(t *testing.T) {
	t.Parallel()
	records := rowsCSV(t, spanprofiletest.Profile(), report.Options{})
	header := records[0]
	if len(header) != 5+18+2 || header[22] != "onspan_local_span" || header[23] != "not_profiled_events" || header[24] != "ended" {
		t.Fatalf("header has %d columns, want the 23 of the contract and 2 added: %v", len(header), header)
	}
	// 7 executed sites and the root.
	if len(records) != 1+8 {
		t.Fatalf("%d records, want a header and 8 rows", len(records))
	}
	for _, r := range records[1:] {
		if len(r) != len(header) {
			t.Errorf("row %v has %d columns, want %d", r, len(r), len(header))
		}
	}
	col := slices.Index(header, "onwork_local_work")
	if col < 0 {
		t.Fatalf("no onwork_local_work column in %v", header)
	}
	// partition (first by local span on span) has all its local work.
	if records[1][0] != "qsort.go:20" || records[1][col] != "408150528" {
		t.Errorf("first row %v, want qsort.go:20 with onwork_local_work 408150528", records[1])
	}
}

// TestCSVColumns checks every column of every CSV row against the
// profile, by the column's name, not through a golden file (which -update
// rewrites with whatever the code prints): a profile whose 18 numbers are
// all different per row, so that two columns swapped, or a count, work and
// span taken from the wrong triple, show; and the numeric columns are
// named as the profile's pprof sample types.
func TestCSVColumns(t *testing.T) {
	t.Parallel()
	// distinct gives the k-th site's measurements the numbers 100k+1 to
	// 100k+18, in the order of the names below.
	distinct := func(k int64) (onWork, onSpan spanprofile.Measurement) {
		v := func(i int64) spanprofile.Triple {
			return spanprofile.Triple{Count: 100*k + 3*i + 1, Work: 100*k + 3*i + 2, Span: 100*k + 3*i + 3}
		}
		return spanprofile.Measurement{TopCallSite: v(0), TopCaller: v(1), Local: v(2)},
			spanprofile.Measurement{TopCallSite: v(3), TopCaller: v(4), Local: v(5)}
	}
	p := &spanprofile.Profile{
		Mode: "serial", Measure: "clock", Unit: "nanoseconds", Work: 1000, Span: 500,
		Sites: []spanprofile.Site{
			{File: "a.go", Line: 3, Column: 7, Func: "main.f", Caller: "main.main", Kind: spanprofile.KindSpawn},
			{File: "b.go", Line: 5, Func: "main.g", Caller: "main.f", Kind: spanprofile.KindCall},
		},
	}
	for k, stack := range [][]int{nil, {0}, {0, 1}} {
		w, s := distinct(int64(k))
		p.Contexts = append(p.Contexts, spanprofile.Context{Stack: stack, OnWork: w, OnSpan: s})
	}
	// The added columns: events at a site that were not profiled, and how
	// a run that did not complete ended.
	p.Ended = "watchdog"
	p.NotProfiled = []spanprofile.NotProfiled{{Reason: spanprofile.NotProfiledOtherGoroutine, Events: 9, Sites: []spanprofile.SiteEvents{{Site: 1, Events: 7}}}}
	for _, prof := range []*spanprofile.Profile{p, spanprofiletest.Profile()} {
		records := rowsCSV(t, prof, report.Options{})
		header := records[0]
		if !slices.Equal(header[:5], []string{"site", "column", "func", "kind", "caller"}) {
			t.Fatalf("the first columns are %v, want site, column, func, kind, caller", header[:5])
		}
		pp, err := prof.Pprof()
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, st := range pp.SampleType {
			types = append(types, st.Type)
		}
		numeric, added := header[5:len(header)-2], header[len(header)-2:]
		if !slices.Equal(added, []string{"not_profiled_events", "ended"}) {
			t.Errorf("the last columns are %v, want not_profiled_events, ended", added)
		}
		if !slices.Equal(numeric, types[2:]) {
			t.Errorf("the numeric columns are\n%v\nwant the profile's sample types after work and span\n%v", numeric, types[2:])
		}
		if len(numeric) != 18 {
			t.Fatalf("%d numeric columns, want 18: %v", len(numeric), numeric)
		}
		rows := 0
		bySite := map[string]spanprofile.SiteMeasurement{}
		for _, m := range append(prof.BySite(), prof.Root()) {
			name := "-"
			if m.Site.File != "" {
				name = m.Site.File + ":" + strconv.Itoa(m.Site.Line)
			}
			bySite[name+" "+strconv.Itoa(m.Site.Column)] = m // fib.go:8 has two sites
		}
		for _, r := range records[1:] {
			m, ok := bySite[r[0]+" "+r[1]]
			if !ok {
				t.Errorf("row of an unknown site %q, column %s", r[0], r[1])
				continue
			}
			rows++
			if r[2] != m.Site.Func || r[3] != string(m.Site.Kind) || r[4] != m.Site.Caller {
				t.Errorf("row %v: want func %s, kind %s, caller %s", r[:5], m.Site.Func, m.Site.Kind, m.Site.Caller)
			}
			for i, name := range numeric {
				if got, want := r[5+i], strconv.FormatInt(csvValue(t, m, name), 10); got != want {
					t.Errorf("%s, %s = %s, want %s", r[0], name, got, want)
				}
			}
			wantNP, wantEnded := "0", ""
			if prof == p {
				wantEnded = "watchdog"
				if m.Index == 1 {
					wantNP = "7"
				}
			}
			if got := r[len(r)-2:]; got[0] != wantNP || got[1] != wantEnded {
				t.Errorf("%s: not_profiled_events, ended = %v, want %s, %q", r[0], got, wantNP, wantEnded)
			}
		}
		if want := map[bool]int{true: 3, false: 8}[prof == p]; rows != want {
			t.Errorf("%d rows, want %d (the executed sites and the root)", rows, want)
		}
	}
}

// csvValue picks the number that a CSV column named like a pprof sample
// type (onwork_top_caller_span) holds.
func csvValue(t *testing.T, m spanprofile.SiteMeasurement, name string) int64 {
	t.Helper()
	which, rest, _ := strings.Cut(name, "_")
	var ms spanprofile.Measurement
	switch which {
	case "onwork":
		ms = m.OnWork
	case "onspan":
		ms = m.OnSpan
	default:
		t.Fatalf("column %s: neither onwork nor onspan", name)
	}
	i := strings.LastIndex(rest, "_")
	var tr spanprofile.Triple
	switch rest[:i] {
	case "top_call_site":
		tr = ms.TopCallSite
	case "top_caller":
		tr = ms.TopCaller
	case "local":
		tr = ms.Local
	default:
		t.Fatalf("column %s: no such measurement", name)
	}
	switch rest[i+1:] {
	case "count":
		return tr.Count
	case "work":
		return tr.Work
	case "span":
		return tr.Span
	}
	t.Fatalf("column %s: no such value", name)
	return 0
}

func TestSort(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	m := map[string]spanprofile.SiteMeasurement{}
	for _, s := range p.BySite() {
		m[s.Site.File+":"+itoa(s.Site.Line)+":"+itoa(s.Site.Column)] = s
	}
	for _, tc := range []struct {
		key   string
		value func(spanprofile.SiteMeasurement) float64
		asc   bool
	}{
		{"", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnSpan.Local.Span) }, false},
		{"local-span-on-span", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnSpan.Local.Span) }, false},
		{"local-work-on-span", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnSpan.Local.Work) }, false},
		{"work", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnWork.TopCallSite.Work) }, false},
		{"span", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnWork.TopCallSite.Span) }, false},
		{"work-on-span", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnSpan.TopCallSite.Work) }, false},
		{"span-on-span", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnSpan.TopCallSite.Span) }, false},
		{"local-work", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnWork.Local.Work) }, false},
		{"top-caller-work", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnWork.TopCaller.Work) }, false},
		{"count", func(s spanprofile.SiteMeasurement) float64 { return float64(s.OnWork.Local.Count) }, false},
		{"parallelism", func(s spanprofile.SiteMeasurement) float64 {
			return spanprofile.Ratio(s.OnWork.TopCallSite.Work, s.OnWork.TopCallSite.Span)
		}, true},
	} {
		s, err := report.Summarize(p, report.Options{Sort: tc.key})
		if err != nil {
			t.Fatalf("sort %q: %v", tc.key, err)
		}
		if len(s.Sites) != 7 {
			t.Fatalf("sort %q: %d sites, want 7", tc.key, len(s.Sites))
		}
		for i := 1; i < len(s.Sites); i++ {
			a := tc.value(m[s.Sites[i-1].Site+":"+itoa(s.Sites[i-1].Column)])
			b := tc.value(m[s.Sites[i].Site+":"+itoa(s.Sites[i].Column)])
			if (!tc.asc && a < b) || (tc.asc && a > b) {
				t.Errorf("sort %q: %s (%v) before %s (%v)", tc.key, s.Sites[i-1].Site, a, s.Sites[i].Site, b)
			}
		}
	}

	s, err := report.Summarize(p, report.Options{Sort: "site"})
	if err != nil {
		t.Fatal(err)
	}
	var places []string
	for _, site := range s.Sites {
		places = append(places, site.Site)
	}
	want := []string{"fib.go:8", "fib.go:8", "main.go:31", "main.go:33", "qsort.go:20", "qsort.go:21", "qsort.go:22"}
	if !slices.Equal(places, want) {
		t.Errorf("sort site: %v, want %v", places, want)
	}
	if s.Sites[0].Column != 9 || s.Sites[1].Column != 22 {
		t.Errorf("sort site: fib.go:8 columns %d, %d; want 9, 22", s.Sites[0].Column, s.Sites[1].Column)
	}
}

func TestSortUnknown(t *testing.T) {
	t.Parallel()
	for _, format := range report.Formats {
		err := report.Write(&bytes.Buffer{}, format, spanprofiletest.Profile(), report.Options{Sort: "bogus"})
		if err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), strings.Join(report.SortKeyNames(), ", ")) {
			t.Errorf("%s with sort key bogus: %v, want an error naming it and the valid keys", format, err)
		}
	}
}

func TestTop(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	for _, tc := range []struct{ top, sites int }{{0, 7}, {1, 1}, {3, 3}, {7, 7}, {100, 7}} {
		s, err := report.Summarize(p, report.Options{Top: tc.top})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Sites) != tc.sites || s.SitesExecuted != 7 || s.SitesNotExecuted != 1 {
			t.Errorf("top %d: %d sites (%d executed, %d not), want %d (7, 1)", tc.top, len(s.Sites), s.SitesExecuted, s.SitesNotExecuted, tc.sites)
		}
		if tc.top > 0 && tc.top < 7 && s.Sites[0].Site != "qsort.go:20" {
			t.Errorf("top %d: first site %s, want qsort.go:20", tc.top, s.Sites[0].Site)
		}
		if s.Root == nil || s.Root.OnSpan.Local.Span != 47_319 {
			t.Errorf("top %d: root %+v, want the root context", tc.top, s.Root)
		}
		// Text and CSV show the same rows plus the root.
		if got := len(rowsCSV(t, p, report.Options{Top: tc.top})); got != 1+tc.sites+1 {
			t.Errorf("top %d: CSV has %d records, want %d", tc.top, got, tc.sites+2)
		}
	}
	if _, err := report.Summarize(p, report.Options{Top: -1}); err == nil {
		t.Error("top -1: no error")
	}
	text := string(render(t, "text", p, report.Options{Top: 2}))
	if !strings.Contains(text, "5 more executed sites not shown (-top 2).") {
		t.Errorf("text with -top 2 does not say how many sites are hidden:\n%s", text)
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	fine := &spanprofile.Profile{Unit: "nanoseconds", Work: 1_000_000, Span: 10_000, BurdenedSpan: 2_000_000, Spawns: 10_000, Syncs: 10_000}
	w := report.Warnings(fine)
	if len(w) != 2 || !strings.Contains(w[0], "average strand is below 500 ns") || !strings.Contains(w[1], "burdened parallelism is below 1") {
		t.Errorf("Warnings of a fine-grained profile = %q, want the strand and burdened parallelism warnings", w)
	}
	text := string(render(t, "text", fine, report.Options{Procs: procs}))
	if !strings.Contains(text, "Warning: the average strand is below 500 ns") {
		t.Errorf("text report has no strand warning:\n%s", text)
	}
	if w := report.Warnings(spanprofiletest.Profile()); len(w) != 0 {
		t.Errorf("Warnings of the quicksort profile = %q, want none", w)
	}
	// The synthetic measure has no meaningful threshold.
	fine.Unit, fine.BurdenedSpan = "count", fine.Span
	if w := report.Warnings(fine); len(w) != 0 {
		t.Errorf("Warnings with unit count = %q, want none", w)
	}

	// Work on the clock beyond what the processors could run in the run's
	// duration: blocked time in strands (a worker pool's test: 35 hours of
	// work in 131 s on 2 processors). Just under the bound, no warning.
	blocked := &spanprofile.Profile{Measure: "clock", Unit: "nanoseconds", Work: 126_771e9, Span: 131e9, BurdenedSpan: 131e9,
		Spawns: 54_996, Procs: 2, DurationNanos: 131e9}
	if w := report.Warnings(blocked); len(w) != 1 || !strings.Contains(w[0], "more than 2 processors could run in the run's 131.00s") {
		t.Errorf("Warnings of a profile with blocked strands = %q, want the blocked-time warning", w)
	}
	blocked.Work = 2 * 131e9
	if w := report.Warnings(blocked); len(w) != 0 {
		t.Errorf("Warnings with work within 2 processors' reach = %q, want none", w)
	}
	// With cpu, goroutines past the thread limit read the clock.
	blocked.Work, blocked.Measure = 126_771e9, "cpu"
	if w := report.Warnings(blocked); len(w) != 0 {
		t.Errorf("Warnings of a cpu profile = %q, want none", w)
	}
	blocked.NotProfiled = []spanprofile.NotProfiled{{Reason: spanprofile.NotProfiledThreadLimit, Goroutines: 1168}}
	if w := report.Warnings(blocked); len(w) != 1 || !strings.Contains(w[0], "more than 2 processors could run") {
		t.Errorf("Warnings of a cpu profile with goroutines past the thread limit = %q, want the blocked-time warning", w)
	}
	blocked.NotProfiled = nil
	blocked.Work, blocked.Measure = 126_771e9, "instructions"
	if w := report.Warnings(blocked); len(w) != 0 {
		t.Errorf("Warnings of a counter measure = %q, want none", w)
	}
}

// TestEnded: a run that did not complete says how it ended in every
// format that has a summary.
func TestEnded(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	p.Ended = "deadlock"
	for _, format := range []string{"text", "html"} {
		if out := string(render(t, format, p, report.Options{Procs: procs})); !strings.Contains(out, "the run did not complete (deadlock)") {
			t.Errorf("the %s report does not say the run ended in a deadlock:\n%s", format, out)
		}
	}
	s, err := report.Summarize(p, report.Options{Procs: procs})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ended != "deadlock" {
		t.Errorf("JSON ended = %q, want deadlock", s.Ended)
	}
	p.Ended = "completed"
	if s, _ := report.Summarize(p, report.Options{Procs: procs}); s.Ended != "" || len(s.Warnings) != 0 {
		t.Errorf("a completed run: ended %q, warnings %q; want neither", s.Ended, s.Warnings)
	}
}

// TestEndedCSV: the CSV report says how a run that did not complete ended,
// on every row, in a column added after the contract's.
func TestEndedCSV(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	p.Ended = "watchdog"
	records := rowsCSV(t, p, report.Options{})
	col := slices.Index(records[0], "ended")
	for _, r := range records[1:] {
		if r[col] != "watchdog" {
			t.Errorf("row %v: ended %q, want watchdog", r, r[col])
		}
	}
	p.Ended = "completed"
	for _, r := range rowsCSV(t, p, report.Options{})[1:] {
		if r[col] != "" {
			t.Errorf("a completed run: row %v says ended %q", r, r[col])
		}
	}
}

// TestNotProfiledInEveryFormat (item 2): what the run did not profile is in
// every format: how many events, from which goroutines and sites, and why.
func TestNotProfiledInEveryFormat(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	p.NotProfiled = []spanprofile.NotProfiled{
		{Reason: spanprofile.NotProfiledOtherGoroutine, Events: 1234, Goroutines: 3,
			Creators: []spanprofile.Creator{{Where: "testing.(*B).RunParallel (benchmark.go:950)", Goroutines: 2}, {Where: "time.goFunc (sleep.go:215)", Goroutines: 1}},
			Sites:    []spanprofile.SiteEvents{{Site: 1, Events: 1000}, {Site: 7, Events: 234}}},
		{Reason: spanprofile.NotProfiledUnwound, Events: 2},
	}
	text := string(render(t, "text", p, report.Options{Procs: procs}))
	for _, want := range []string{
		"Not profiled: 1,234 events from 3 goroutines: events from goroutines that did not hold the profiler",
		"created by testing.(*B).RunParallel (benchmark.go:950), time.goFunc (sleep.go:215)",
		"at qsort.go:20 main.partition (1,000), main.go:40 main.main.func1 (234)",
		"Not profiled: 2 invocations: invocations that a panic or runtime.Goexit (t.Fatal) unwound",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text)
		}
	}
	html := string(render(t, "html", p, report.Options{Procs: procs}))
	if !strings.Contains(html, "Not profiled: 1,234 events from 3 goroutines") || !strings.Contains(html, "main.go:40 main.main.func1 (234)") {
		t.Errorf("the HTML report lacks what was not profiled:\n%s", html)
	}
	s, err := report.Summarize(p, report.Options{Procs: procs})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.NotProfiled) != 2 || s.NotProfiled[0].Events != 1234 || s.NotProfiled[0].Goroutines != 3 ||
		len(s.NotProfiled[0].Sites) != 2 || s.NotProfiled[0].Sites[1] != (report.NotProfiledSite{Site: "main.go:40", Func: "main.main.func1", Events: 234}) ||
		!strings.Contains(s.NotProfiled[0].Why, "did not hold the profiler") {
		t.Errorf("JSON not_profiled = %+v", s.NotProfiled)
	}
	records := rowsCSV(t, p, report.Options{})
	col := slices.Index(records[0], "not_profiled_events")
	for _, r := range records[1:] {
		want := map[string]string{"qsort.go:20": "1000"}[r[0]]
		if want == "" {
			want = "0"
		}
		if r[col] != want {
			t.Errorf("CSV row %v: not_profiled_events %q, want %s", r, r[col], want)
		}
	}
}

// TestWarningsHoldAsPrinted (B8): a warning fires only when its condition
// holds for the numbers as the report prints them.
func TestWarningsHoldAsPrinted(t *testing.T) {
	t.Parallel()
	// One trivial spawn before 33 ms of strands: parallelism and burdened
	// parallelism both print as 1.00. The old code said "burdened
	// parallelism is below 1 ... coarsen the parallel grain".
	p := &spanprofile.Profile{Measure: "cpu", Unit: "nanoseconds", Work: 33_000_000, Span: 32_999_000, BurdenedSpan: 33_000_500,
		Burden: 1_500, Spawns: 1, Syncs: 1}
	if w := report.Warnings(p); len(w) != 0 {
		t.Errorf("Warnings of a profile whose parallelism and burdened parallelism print as 1.00 = %q, want none", w)
	}
	// Burdens that do outweigh the parallelism.
	p = &spanprofile.Profile{Measure: "cpu", Unit: "nanoseconds", Work: 10_000_000, Span: 2_000_000, BurdenedSpan: 20_000_000,
		Burden: 1_500, Spawns: 1_000, Syncs: 1_000}
	if w := report.Warnings(p); len(w) != 1 || !strings.Contains(w[0], "burdened parallelism is below 1") {
		t.Errorf("Warnings of a profile with parallelism 5 and burdened parallelism 0.5 = %q, want the burden warning", w)
	}
	// No spawn: no spawn overhead to warn of, however short the strands
	// between calls.
	p = &spanprofile.Profile{Measure: "cpu", Unit: "nanoseconds", Work: 10_000, Span: 10_000, BurdenedSpan: 10_000, Syncs: 100}
	if w := report.Warnings(p); len(w) != 0 {
		t.Errorf("Warnings of a profile without spawns = %q, want none", w)
	}
}

// TestTraceMode checks what the report adds in trace mode: the functions
// (own time from leaf frames, time with callees counted once per stack) and
// the warning of a trace without CPU samples; other modes have neither.
func TestTraceMode(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Trace()
	funcs := report.Functions(p)
	if len(funcs) != 4 || funcs[0].Func != "main.transform" || funcs[0].Span != 400_000_000 ||
		funcs[1].Func != "main.run" || funcs[1].SpanCum != 400_500_000 || funcs[1].WorkCum != 700_000_000 {
		t.Errorf("functions %+v; want main.transform first (400ms own), then main.run (400.5ms with callees, 700ms of work)", funcs)
	}
	if report.Functions(spanprofiletest.Profile()) != nil {
		t.Errorf("a serial profile has functions; its sites are not frames")
	}
	has := func(ws []string, s string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, s) })
	}
	if has(report.Warnings(p), "no CPU samples") {
		t.Errorf("warnings %q: the trace has CPU samples", report.Warnings(p))
	}
	p.Trace.CPUSamples, p.Trace.Sampled = 0, 0
	if !has(report.Warnings(p), "no CPU samples") {
		t.Errorf("warnings %q: want one about the missing CPU samples", report.Warnings(p))
	}
}

// TestTextFitsTheWidth: the default text report fits 100 columns, whatever
// the names of the sites, keeping their ends; -wide shows every column.
func TestTextFitsTheWidth(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	for i := range p.Sites {
		if p.Sites[i].File != "" {
			p.Sites[i].File = "internal/very/deeply/nested/package/path/" + p.Sites[i].File
			p.Sites[i].Func = "github.com/example/project/internal/pkg.(*someLongTypeName)." + p.Sites[i].Func
		}
	}
	text := string(render(t, "text", p, report.Options{Procs: procs}))
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	if !strings.Contains(text, "qsort.go:20 ") || !strings.Contains(text, ".main.partition ") || !strings.Contains(text, "…") {
		t.Errorf("long names do not keep their ends:\n%s", text)
	}
	wide := string(render(t, "text", p, report.Options{Procs: procs, Wide: true}))
	if !strings.Contains(wide, "local on span") || !strings.Contains(wide, "internal/very/deeply/nested/package/path/qsort.go:20") {
		t.Errorf("the wide report lacks its columns or full names:\n%s", wide)
	}
}

// TestVerdict: one sentence with the parallelism, what bounds it and the
// site holding most of the span.
func TestVerdict(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	if v, want := report.Verdict(p), "Verdict: parallelism 6.05, bounded by the span; main.partition (qsort.go:20) holds 99.9% of it."; v != want {
		t.Errorf("Verdict = %q, want %q", v, want)
	}
	p.BurdenedSpan = 3 * p.Span
	if v := report.Verdict(p); !strings.Contains(v, "burdened 2.02: the cost of spawning bounds it") {
		t.Errorf("Verdict with a burdened span three times the span = %q", v)
	}
	if v := report.Verdict(&spanprofile.Profile{}); v != "" {
		t.Errorf("Verdict of an empty profile = %q, want none", v)
	}
}

// TestRatioOfAWaitingHelper: invocations whose span exceeds their work
// waited for goroutines spawned before them (a helper that waits on a
// WaitGroup passed in); their T1/T∞ is no parallelism of theirs and shows
// as "-", where it read 0.0.
func TestRatioOfAWaitingHelper(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	c := &p.Contexts[1] // pqsort called from main: main.go:31
	c.OnWork.TopCallSite.Work = c.OnWork.TopCallSite.Span / 50
	for _, wide := range []bool{false, true} {
		text := string(render(t, "text", p, report.Options{Procs: procs, Wide: wide}))
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(l, "main.go:31") {
				continue
			}
			if strings.Contains(l, " 0.0 ") || !strings.Contains(l, " - ") {
				t.Errorf("wide %v: the waiting helper's row reads a ratio below 1:\n%s", wide, l)
			}
		}
	}
}
