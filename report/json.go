package report

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// Summary is the JSON report, a contract (docs/json-report.md): fields may
// be added, never renamed or moved. Fields after Sites are additions.
type Summary struct {
	Mode                string              `json:"mode"`
	Measure             string              `json:"measure"`
	Unit                string              `json:"unit"`
	Work                int64               `json:"work"`
	Span                int64               `json:"span"`
	Parallelism         float64             `json:"parallelism"`
	BurdenedSpan        int64               `json:"burdened_span"`
	BurdenedParallelism float64             `json:"burdened_parallelism"`
	Burden              int64               `json:"burden"`
	Spawns              int64               `json:"spawns"`
	Syncs               int64               `json:"syncs"`
	AverageStrand       float64             `json:"average_strand"`
	SpeedupEstimate     []spanprofile.Bound `json:"speedup_estimate"`
	Sites               []SiteSummary       `json:"sites"`

	// Overhead is the per-event instrumentation cost subtracted from every
	// strand and Subtracted the total removed from the work, in Unit.
	Overhead   int64 `json:"overhead"`
	Subtracted int64 `json:"subtracted"`
	// ShadowBytes is the peak memory of the shadow runtime's structures;
	// absent when unknown.
	ShadowBytes int64 `json:"shadow_bytes,omitempty"`
	// Procs is GOMAXPROCS at the end of the run; absent when unknown.
	Procs int64 `json:"procs,omitempty"`
	// Root holds the program's own strands, outside every site; absent
	// when there are none.
	Root *RootSummary `json:"root,omitempty"`
	// Sort is the sort key of Sites; SitesExecuted counts the executed
	// sites before -top and SitesNotExecuted those that never ran, which no
	// format lists.
	Sort             string `json:"sort"`
	SitesExecuted    int    `json:"sites_executed"`
	SitesNotExecuted int    `json:"sites_not_executed"`
	// Warnings are the text report's warnings (see Warnings).
	Warnings []string `json:"warnings"`
	// Ended says how a run that did not complete ended (deadlock,
	// watchdog, "signal SIGINT", "exit 3", panic); absent when it completed.
	Ended string `json:"ended,omitempty"`
	// Trust says how far to trust the numbers (spanprofile.Trust); absent
	// when the profile does not say.
	Trust *spanprofile.Trust `json:"trust,omitempty"`
	// NotProfiled is what the run did not profile, by reason, with how
	// many events, from which goroutines and sites, and why; absent when
	// it profiled all it saw.
	NotProfiled []NotProfiledSummary `json:"not_profiled,omitempty"`
	// Trace mode only (docs/trace-mode.md): what the trace held, the
	// functions on the critical path (all of them, see Functions), and the
	// runtime/trace tasks by type.
	Trace     *spanprofile.TraceInfo    `json:"trace,omitempty"`
	Functions []FunctionSummary         `json:"functions,omitempty"`
	Tasks     []spanprofile.TaskSummary `json:"tasks,omitempty"`
	// Verdict is the report's one sentence (see Verdict); Limits what the
	// limits on spawn sites did, the one that bounds the parallelism
	// marked (see Limits).
	Verdict string         `json:"verdict,omitempty"`
	Limits  []LimitSummary `json:"limits,omitempty"`
	// LeftOut are the calls left out of the profile that may carry work
	// (at most 20), LeftOutMore how many more there are.
	LeftOut     []LeftOutSummary `json:"left_out,omitempty"`
	LeftOutMore int              `json:"left_out_more,omitempty"`
	// WhatIf is the what-if profile (docs/what-if.md): per target and
	// factor, then for all the targets together, the run had the
	// target's strands taken 1/factor of their time; absent without
	// targets.
	WhatIf []WhatIfSummary `json:"what_if,omitempty"`
}

// SiteSummary is one site of the JSON report.
type SiteSummary struct {
	Site   string                  `json:"site"` // file:line relative to the module root
	Func   string                  `json:"func"`
	Kind   spanprofile.Kind        `json:"kind"` // spawn, call or region
	OnWork spanprofile.Measurement `json:"on_work"`
	OnSpan spanprofile.Measurement `json:"on_span"`

	Column int    `json:"column,omitempty"` // tells apart sites on one line
	Caller string `json:"caller"`           // the function that contains the site
	// Loop, LimitKind and LimitAt: what the analyzer saw around a spawn
	// (spanprofile.Site).
	Loop      string `json:"loop,omitempty"`
	LimitKind string `json:"limit_kind,omitempty"`
	LimitAt   string `json:"limit_at,omitempty"`
}

// RootSummary is the root row of the JSON report.
type RootSummary struct {
	Func   string                  `json:"func"`
	OnWork spanprofile.Measurement `json:"on_work"`
	OnSpan spanprofile.Measurement `json:"on_span"`
}

// Summarize returns the JSON report of p.
func Summarize(p *spanprofile.Profile, opts Options) (*Summary, error) {
	r, err := selectRows(p, opts)
	if err != nil {
		return nil, err
	}
	s := &Summary{
		Mode: p.Mode, Measure: p.Measure, Unit: p.Unit,
		Work: p.Work, Span: p.Span, Parallelism: p.Parallelism(),
		BurdenedSpan: p.BurdenedSpan, BurdenedParallelism: p.BurdenedParallelism(), Burden: p.Burden,
		Spawns: p.Spawns, Syncs: p.Syncs, AverageStrand: p.AverageStrand(),
		SpeedupEstimate: p.SpeedupEstimate(opts.procs()),
		Sites:           make([]SiteSummary, 0, len(r.sites)),
		Overhead:        p.Overhead, Subtracted: p.Subtracted, ShadowBytes: p.ShadowBytes, Procs: p.Procs,
		Sort: r.sort.Name, SitesExecuted: r.executed, SitesNotExecuted: r.unexecuted,
		Warnings:    Warnings(p),
		Trust:       p.Trust,
		NotProfiled: notProfiled(p),
		Trace:       p.Trace, Functions: Functions(p), Tasks: p.Tasks,
		Verdict: strings.TrimPrefix(Verdict(p), "Verdict: "), Limits: Limits(p),
		WhatIf: whatIfSummaries(p, opts.procs()),
	}
	s.LeftOut, s.LeftOutMore = leftOut(p, maxLeftOutJSON)
	if p.Partial() {
		s.Ended = p.Ended
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	for _, m := range r.sites {
		s.Sites = append(s.Sites, SiteSummary{
			Site: siteName(m.Site), Func: m.Site.Func, Kind: m.Site.Kind,
			OnWork: m.OnWork, OnSpan: m.OnSpan,
			Column: m.Site.Column, Caller: m.Site.Caller,
			Loop: m.Site.Loop, LimitKind: m.Site.LimitKind, LimitAt: m.Site.LimitAt,
		})
	}
	if r.root != nil {
		s.Root = &RootSummary{Func: r.root.Site.Func, OnWork: r.root.OnWork, OnSpan: r.root.OnSpan}
	}
	return s, nil
}

// JSON writes the report of p as indented JSON (docs/json-report.md).
func JSON(w io.Writer, p *spanprofile.Profile, opts Options) error {
	s, err := Summarize(p, opts)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
