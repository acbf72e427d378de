// Package report prints a span profile for people and programs: the
// whole-run summary and speedup estimate of Cilkview, then one row per site
// with the measurements of Cilkprof, as text, CSV, JSON (the schema of
// docs/json-report.md) or a self-contained HTML page.
//
// Every format shows the same rows in the same order: the sites that were
// executed, sorted by Options.Sort, at most Options.Top of them, and the root
// (the program's own strands outside every instrumented invocation), which
// -top never drops.
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// Options selects and orders the site rows.
type Options struct {
	// Sort is the name of a sort key (see SortKeys); "" means DefaultSort.
	Sort string
	// Top limits the number of sites shown; 0 shows them all. The root row
	// does not count.
	Top int
	// Procs are the processor counts of the speedup estimate; nil means
	// spanprofile.DefaultProcs().
	Procs []int
	// Wide makes the text report's site table show every measurement
	// (work and span on work, on span and local), 150 columns or more;
	// otherwise it shows each site's shares and fits 100 columns.
	Wide bool
	// SourceURL is the prefix of the HTML report's links to the sites'
	// source lines: the site's file, relative to the module root, and
	// "#L<line>" are appended to it, as in
	// "https://github.com/org/repo/blob/main/" or "file:///home/me/repo/".
	// With none, the links are relative to the page (file:// URLs for
	// files recorded with absolute paths).
	SourceURL string
}

// DefaultSort is the sort key of the Cilkprof paper's first question: where
// does the critical path spend its time?
const DefaultSort = "local-span-on-span"

// A SortKey orders site rows. Rows that tie are in site order.
type SortKey struct {
	Name string
	Doc  string
	cmp  func(a, b *spanprofile.SiteMeasurement) int
}

// descending orders rows by a value, largest first.
func descending(v func(m *spanprofile.SiteMeasurement) int64) func(a, b *spanprofile.SiteMeasurement) int {
	return func(a, b *spanprofile.SiteMeasurement) int { return cmp.Compare(v(b), v(a)) }
}

// SortKeys lists the sort keys, the default first.
var SortKeys = []SortKey{
	{DefaultSort, "local span on span: the critical path's own time at each site (the first place to look)",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnSpan.Local.Span })},
	{"local-work-on-span", "local work on span",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnSpan.Local.Work })},
	{"work", "work on work (T1 of the top-call-site invocations)",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnWork.TopCallSite.Work })},
	{"span", "span on work (T∞ of the top-call-site invocations)",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnWork.TopCallSite.Span })},
	{"work-on-span", "work on span (T1 of the top-call-site invocations on the critical path)",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnSpan.TopCallSite.Work })},
	{"span-on-span", "span on span (T∞ of the top-call-site invocations on the critical path)",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnSpan.TopCallSite.Span })},
	{"local-work", "local work on work: where the work is done, excluding instrumented children",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnWork.Local.Work })},
	{"top-caller-work", "top-caller work on work: compares the sites of one function",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnWork.TopCaller.Work })},
	{"parallelism", "parallelism on work (T1/T∞ of the top-call-site invocations), least parallel first",
		func(a, b *spanprofile.SiteMeasurement) int {
			return cmp.Compare(
				spanprofile.Ratio(a.OnWork.TopCallSite.Work, a.OnWork.TopCallSite.Span),
				spanprofile.Ratio(b.OnWork.TopCallSite.Work, b.OnWork.TopCallSite.Span))
		}},
	{"count", "number of invocations",
		descending(func(m *spanprofile.SiteMeasurement) int64 { return m.OnWork.Local.Count })},
	{"site", "file and line", func(a, b *spanprofile.SiteMeasurement) int { return 0 }},
}

// SortKeyNames returns the names of the sort keys, the default first.
func SortKeyNames() []string {
	names := make([]string, len(SortKeys))
	for i, k := range SortKeys {
		names[i] = k.Name
	}
	return names
}

// lookupSort returns the named sort key.
func lookupSort(name string) (SortKey, error) {
	if name == "" {
		name = DefaultSort
	}
	for _, k := range SortKeys {
		if k.Name == name {
			return k, nil
		}
	}
	return SortKey{}, fmt.Errorf("unknown sort key %q (valid: %s)", name, strings.Join(SortKeyNames(), ", "))
}

// Formats lists the output formats of Write.
var Formats = []string{"text", "csv", "json", "html"}

// Write writes the report of p in the named format.
func Write(w io.Writer, format string, p *spanprofile.Profile, opts Options) error {
	switch format {
	case "text":
		return Text(w, p, opts)
	case "csv":
		return CSV(w, p, opts)
	case "json":
		return JSON(w, p, opts)
	case "html":
		return HTML(w, p, opts)
	}
	return fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
}

// rows is what every format shows.
type rows struct {
	sort       SortKey
	sites      []spanprofile.SiteMeasurement // sorted, at most Top of them
	root       *spanprofile.SiteMeasurement  // nil when the root has no measurements
	executed   int                           // sites executed, shown or not
	unexecuted int                           // sites never executed
}

// all returns the rows of a table: the sites and the root, in sort order.
func (r *rows) all() []spanprofile.SiteMeasurement {
	out := slices.Clone(r.sites)
	if r.root != nil {
		out = append(out, *r.root)
		slices.SortStableFunc(out, r.compare)
	}
	return out
}

// compare orders two rows by the sort key, then by site.
func (r *rows) compare(a, b spanprofile.SiteMeasurement) int {
	if c := r.sort.cmp(&a, &b); c != 0 {
		return c
	}
	return compareSites(&a, &b)
}

// compareSites orders rows by file, line, column and index; the root
// (index -1) comes first.
func compareSites(a, b *spanprofile.SiteMeasurement) int {
	if (a.Index < 0) != (b.Index < 0) {
		if a.Index < 0 {
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(a.Site.File, b.Site.File),
		cmp.Compare(a.Site.Line, b.Site.Line),
		cmp.Compare(a.Site.Column, b.Site.Column),
		cmp.Compare(a.Index, b.Index))
}

// selectRows applies the options to p.
func selectRows(p *spanprofile.Profile, opts Options) (*rows, error) {
	key, err := lookupSort(opts.Sort)
	if err != nil {
		return nil, err
	}
	if opts.Top < 0 {
		return nil, fmt.Errorf("negative -top %d", opts.Top)
	}
	r := &rows{sort: key}
	for _, m := range p.BySite() {
		// A site of kind root stands for the program, whose measurements
		// are the root context's; it is shown as the root row.
		if !m.Executed() || m.Site.Kind == spanprofile.KindRoot {
			if m.Site.Kind != spanprofile.KindRoot {
				r.unexecuted++
			}
			continue
		}
		r.sites = append(r.sites, m)
	}
	r.executed = len(r.sites)
	slices.SortStableFunc(r.sites, r.compare)
	if opts.Top > 0 && len(r.sites) > opts.Top {
		r.sites = r.sites[:opts.Top]
	}
	if root := p.Root(); root.Executed() {
		r.root = &root
	}
	return r, nil
}

// procs returns the processor counts of the speedup estimate.
func (o Options) procs() []int {
	if o.Procs != nil {
		return o.Procs
	}
	return spanprofile.DefaultProcs()
}

// siteName returns a site's place as the JSON report writes it: file:line,
// relative to the module root, with forward slashes.
func siteName(s spanprofile.Site) string {
	if s.File == "" {
		return "-"
	}
	return filepath.ToSlash(s.File) + ":" + strconv.Itoa(s.Line)
}

// sitePlace is siteName with the column, when known, for the formats that
// do not promise the file:line form.
func sitePlace(s spanprofile.Site) string {
	if s.Column == 0 {
		return siteName(s)
	}
	return siteName(s) + ":" + strconv.Itoa(s.Column)
}

// Warnings returns what the whole-run values say is wrong with the program's
// parallelism, one sentence each.
func Warnings(p *spanprofile.Profile) []string {
	var out []string
	if p.Partial() {
		out = append(out, fmt.Sprintf("the run did not complete (%s): the profile holds what ran until then", p.Ended))
	}
	if p.Mode == "trace" {
		// Trace mode's strands are the trace's, not the instrumentation's:
		// neither the average strand nor blocked time applies.
		return append(append(out, traceWarnings(p)...), trustWarnings(p)...)
	}
	switch p.Unit {
	case "nanoseconds", "instructions", "cycles":
		if p.Work > 0 && p.Spawns > 0 && p.AverageStrand() < MinAverageStrand {
			out = append(out, fmt.Sprintf("the average strand is below %d %s: spawn overhead is noticeable; "+
				"stop spawning below a larger grain (call instead of spawn for small subproblems)",
				MinAverageStrand, unitAbbrev(p.Unit)))
		}
	}
	onClock := p.Measure == "clock" || slices.ContainsFunc(p.NotProfiled, func(n spanprofile.NotProfiled) bool {
		return n.Reason == spanprofile.NotProfiledThreadLimit
	})
	if onClock && p.Procs > 0 && p.DurationNanos > 0 && float64(p.Work) > 1.1*float64(p.Procs)*float64(p.DurationNanos) {
		// Goroutines that run for real (goroutine sites, parallel mode)
		// are measured on the clock between their events (with cpu, those
		// past the thread limit), so time they spend blocked where no
		// event is seen counts as their work.
		out = append(out, fmt.Sprintf("the work (%s) is more than %d processors could run in the run's %s: "+
			"strands include time goroutines spent blocked where spanprof sees no event (channels, locks, sleeps, I/O), "+
			"so work and parallelism are overstated; profile with -measure instructions to count only what ran",
			duration(float64(p.Work)), p.Procs, duration(float64(p.DurationNanos))))
	}
	out = append(out, trustWarnings(p)...)
	// Burdens outweigh parallelism only where there is some, and only by
	// what the report shows: a parallelism and a burdened parallelism that
	// both print as 1.00 (one trivial spawn before long strands) call for
	// no coarser grain.
	if p.Spawns > 0 && p.BurdenedSpan > 0 && below1(p.BurdenedParallelism()) && !atMost1(p.Parallelism()) {
		out = append(out, "burdened parallelism is below 1: scheduling costs outweigh the parallelism, "+
			"so the program may run slower in parallel than serially; "+grainAdvice(p))
	}
	return out
}

// below1 and atMost1 compare a ratio with 1 as the report prints it, to two
// decimals: a warning's condition must hold for the numbers it is read
// with.
func below1(x float64) bool  { return math.Round(x*100) < 100 }
func atMost1(x float64) bool { return math.Round(x*100) <= 100 }

// Verdict says in one sentence what the profile finds: the parallelism,
// what bounds it (a limit on a spawn site's children when BoundingLimit
// finds one, the burden of spawning when the burdened parallelism is well
// below it, else the span), and the site holding the largest share of the
// span. It is "" for a profile without a span.
func Verdict(p *spanprofile.Profile) string {
	if p.Span <= 0 || p.Work <= 0 {
		return ""
	}
	par := p.Parallelism()
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict: parallelism %s", decimal(par, 2))
	if l := BoundingLimit(p); l != nil {
		b.WriteString(", bounded by " + l.Phrase)
	} else if bp := p.BurdenedParallelism(); p.Mode != "trace" && p.Spawns > 0 && bp < 0.8*par {
		fmt.Fprintf(&b, ", burdened %s: the cost of spawning bounds it more than the span does", decimal(bp, 2))
	} else {
		b.WriteString(", bounded by the span")
	}
	var top *spanprofile.SiteMeasurement
	sites := p.BySite()
	for i := range sites {
		if top == nil || sites[i].OnSpan.Local.Span > top.OnSpan.Local.Span {
			top = &sites[i]
		}
	}
	if top != nil && top.OnSpan.Local.Span > 0 {
		where := sitePlace(top.Site)
		if top.Site.Kind == spanprofile.KindRoot {
			where = "outside any instrumented site"
		}
		fmt.Fprintf(&b, "; %s (%s) holds %s of it", top.Site.Func, where, percent(top.OnSpan.Local.Span, p.Span))
	}
	return b.String() + "."
}

// LimitSummary is what a limit on a spawn site's children (errgroup's
// SetLimit, a buffered-channel semaphore) did in the run.
type LimitSummary struct {
	Site  string `json:"site"` // the spawn site, file:line
	Func  string `json:"func"` // the spawned function
	Kind  string `json:"kind"` // "errgroup SetLimit", "semaphore", or "" when the analyzer did not name it
	At    string `json:"at,omitempty"`
	N     int64  `json:"n"`
	Waits int64  `json:"waits"`
	Delay int64  `json:"delay"`
	// Bounds says the limit, not the span, holds the parallelism down
	// (BoundingLimit), and Phrase names it as the verdict does.
	Bounds bool   `json:"bounds"`
	Phrase string `json:"phrase"`
}

// limitBoundShare is the share of the span that waits for a limit's slots
// must reach before the report says the limit bounds the parallelism.
// Eight equal tasks under a limit of k wait (8/k - 1) task lengths of a
// span of 8/k: 75% for k = 2, 50% for k = 4 and k = 7 (two rounds
// either way); a limit that one slow task reaches once, late, waits for
// little of the span.
const limitBoundShare = 0.25

// Limits returns what each limit did, the one that bounds the parallelism
// (if any) marked.
func Limits(p *spanprofile.Profile) []LimitSummary {
	if len(p.Limits) == 0 {
		return nil
	}
	onSpan := make(map[int]bool)
	for _, m := range p.BySite() {
		if m.Index >= 0 && m.OnSpan.Local.Count > 0 {
			onSpan[m.Index] = true
		}
	}
	var out []LimitSummary
	best := -1
	for _, u := range p.Limits {
		if u.Site < 0 || u.Site >= len(p.Sites) {
			continue
		}
		s := p.Sites[u.Site]
		l := LimitSummary{Site: siteName(s), Func: s.Func, Kind: s.LimitKind, At: s.LimitAt, N: u.N, Waits: u.Waits, Delay: u.Delay}
		switch {
		case s.LimitKind == "errgroup SetLimit":
			l.Phrase = fmt.Sprintf("errgroup SetLimit(%d) at %s", u.N, s.LimitAt)
		case s.LimitKind == "semaphore":
			l.Phrase = fmt.Sprintf("a semaphore of %d slots at %s", u.N, s.LimitAt)
		default:
			l.Phrase = fmt.Sprintf("a limit of %d on the spawns at %s", u.N, siteName(s))
		}
		if p.Span > 0 && float64(u.Delay) >= limitBoundShare*float64(p.Span) && onSpan[u.Site] &&
			(best < 0 || u.Delay > out[best].Delay) {
			best = len(out)
		}
		out = append(out, l)
	}
	if best >= 0 {
		out[best].Bounds = true
	}
	return out
}

// BoundingLimit returns the limit that holds the parallelism down, or nil:
// of the limits whose spawn site is on the critical path, the one whose
// slot waits moved its spawner's path the most, if that is at least a
// quarter of the span (limitBoundShare). A slot wait is time the spawner
// spends not spawning: on the span when its path is, and not work, so it
// is what the limit adds to the span.
func BoundingLimit(p *spanprofile.Profile) *LimitSummary {
	for _, l := range Limits(p) {
		if l.Bounds {
			return &l
		}
	}
	return nil
}

// grainAdvice says how to coarsen the grain, by the shape of the code
// around the spawn site that spawns the most: the analyzer's Site.Loop.
// Moving the parallelism to an outer loop is the cure only where there is
// one (Cilkview's stencil); a flat loop that spawns per iteration needs its
// iterations chunked, as spanvet's finegrain check advises, and recursion
// a base case that calls instead of spawning.
func grainAdvice(p *spanprofile.Profile) string {
	var top *spanprofile.SiteMeasurement
	sites := p.BySite()
	for i := range sites {
		m := &sites[i]
		if m.Index >= 0 && m.Site.Kind == spanprofile.KindSpawn && (top == nil || m.OnWork.Local.Count > top.OnWork.Local.Count) {
			top = m
		}
	}
	if top == nil {
		return "coarsen the parallel grain"
	}
	at := sitePlace(top.Site)
	switch top.Site.Loop {
	case spanprofile.LoopNested:
		return "coarsen the parallel grain: the spawns at " + at + " are in an inner loop; parallelize an outer loop instead"
	case spanprofile.LoopFlat:
		return "coarsen the parallel grain: the loop at " + at + " spawns once per iteration; give each goroutine a chunk of iterations, e.g. parlib.For(lo, hi, grain, body)"
	case spanprofile.LoopParlib:
		return "coarsen the parallel grain: give the parallel loop at " + at + " a larger grain (its last argument before the body), or parallelize an outer loop"
	case spanprofile.LoopNone:
		return "coarsen the parallel grain: stop spawning at " + at + " below a larger problem size (call instead of spawn for small subproblems)"
	}
	return "coarsen the parallel grain (parallelize an outer loop rather than an inner one)"
}

// maxLeftOut caps how many left-out calls the text and HTML reports name,
// and maxLeftOutJSON the JSON report: a program whose every helper is left
// out needs the rule (docs/rewriting.md), not a list.
const (
	maxLeftOut     = 5
	maxLeftOutJSON = 20
)

// LeftOutSummary is a call left out of the profile that may carry work.
type LeftOutSummary struct {
	Site   string `json:"site"` // file:line relative to the module root
	Column int    `json:"column,omitempty"`
	Func   string `json:"func"` // the callee
	Caller string `json:"caller"`
	Why    string `json:"why"`
}

// leftOut returns the first n left-out calls, and how many more there are.
func leftOut(p *spanprofile.Profile, n int) ([]LeftOutSummary, int) {
	var out []LeftOutSummary
	for i, c := range p.LeftOut {
		if i == n {
			return out, len(p.LeftOut) - n
		}
		out = append(out, LeftOutSummary{Site: siteName(spanprofile.Site{File: c.File, Line: c.Line}), Column: c.Column, Func: c.Func, Caller: c.Caller, Why: c.Why})
	}
	return out, 0
}

// leftOutLine says in a sentence which calls that may carry work the
// profile left out, whose time their callers' sites hold; "" if none.
func leftOutLine(p *spanprofile.Profile) string {
	calls, more := leftOut(p, maxLeftOut)
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s that may carry work, charged to the sites that call them: ", plural(len(p.LeftOut), "call"))
	for i, c := range calls {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s (%s)", c.Site, c.Func, c.Why)
	}
	if more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}
