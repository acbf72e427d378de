package report

import (
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spanprof/spanprof/spanprofile"
)

// MinAverageStrand is the average strand, in nanoseconds, instructions or
// cycles, below which the text report warns that spawn overhead matters:
// Cilkview's 500 instructions, and about as many nanoseconds for the clock,
// where a goroutine hand-off costs a few hundred.
const MinAverageStrand = 500

// Text writes the report of p for people: Cilkview's parallelism profile and
// speedup estimate, then a Cilkprof table of the sites.
func Text(w io.Writer, p *spanprofile.Profile, opts Options) error {
	r, err := selectRows(p, opts)
	if err != nil {
		return err
	}
	e := &errWriter{w: w}
	unit := p.Unit
	e.printf("Span profile: %s mode, %s measure\n", orDash(p.Mode), orDash(p.Measure))
	if v := Verdict(p); v != "" {
		e.printf("%s\n", wrap(v, 100, "  "))
	}
	e.printf("\n")

	e.printf("1) Parallelism Profile\n")
	line := func(label, value string) { e.printf("%-22s %s\n", label+":", value) }
	line("Work", quantity(p.Work, unit))
	line("Span", quantity(p.Span, unit))
	if p.Mode == "trace" {
		// No instrumentation: nothing burdened, nothing subtracted.
		line("Parallelism", decimal(p.Parallelism(), 2))
		for _, l := range traceLines(p) {
			line(l[0], l[1])
		}
	} else {
		line("Burdened span", quantity(p.BurdenedSpan, unit))
		line("Parallelism", decimal(p.Parallelism(), 2))
		line("Burdened parallelism", decimal(p.BurdenedParallelism(), 2))
		line("Spawns", commas(p.Spawns))
		line("Syncs", commas(p.Syncs))
		avg := p.AverageStrand()
		line("Average strand", quantity(int64(math.Round(avg)), unit))
		line("Burden", quantity(p.Burden, unit)+" per spawn")
		if p.Overhead == 0 && p.Subtracted == 0 {
			line("Overhead subtracted", "none")
		} else {
			line("Overhead subtracted", quantity(p.Overhead, unit)+" per event, "+quantity(p.Subtracted, unit)+" in all")
		}
	}
	if tl := trustLines(p); len(tl) > 0 {
		e.printf("\nTrust\n")
		for _, l := range tl {
			line(l[0], l[1])
		}
	}
	for _, warning := range Warnings(p) {
		e.printf("Warning: %s.\n", wrap(warning, 78, "  "))
	}
	for _, n := range notProfiledLines(p) {
		e.printf("Not profiled: %s.\n", wrap(n, 78, "  "))
	}
	if l := leftOutLine(p); l != "" {
		e.printf("Not instrumented: %s.\n", wrap(l, 78, "  "))
	}

	e.printf("\n2) Speedup Estimate\n")
	speedup := &table{right: []bool{true, true, true}}
	speedup.add("procs", "lower", "upper")
	for _, b := range p.SpeedupEstimate(opts.procs()) {
		speedup.add(strconv.Itoa(b.Procs), decimal(b.Lower, 2), decimal(b.Upper, 2))
	}
	e.table(speedup, "")

	e.printf("\n3) Sites, sorted by %s\n", r.sort.Name)
	all := r.all()
	if len(all) == 0 {
		e.printf("No site was executed.\n")
	} else if !opts.Wide {
		e.table(shareTable(p, all), "")
		what := "Span %: the site's own time on the critical path, as a share of the span. Work %: its own\n" +
			"time in all its invocations, as a share of the work. T1/T∞: the parallelism of its\n" +
			"invocations (not nested in another invocation of the same site). Calls: invocations.\n"
		if p.Mode == "trace" {
			what = "A site is a stack frame. Span %: the critical path's time with the frame the leaf, as a\n" +
				"share of the span. Work %: all strands' time with the frame the leaf, as a share of the\n" +
				"work. T1/T∞: the time in stacks holding the frame over its part on the critical path.\n" +
				"Calls: pieces of strands.\n"
		}
		e.printf("%sspanprof report -wide FILE shows the times behind every share.\n", what)
	} else {
		sites := &table{
			right: []bool{false, false, false, true, true, true, true, true, true, true, true, true},
			group: []groupLabel{{3, 5, " on work "}, {6, 8, " on span "}, {9, 10, " local on span "}},
		}
		sites.add("site", "func", "kind", "T1", "T∞", "T1/T∞", "T1", "T∞", "T1/T∞", "T1", "T∞", "calls")
		for _, m := range all {
			ow, sp := m.OnWork.TopCallSite, m.OnSpan.TopCallSite
			sites.add(sitePlace(m.Site), m.Site.Func, string(m.Site.Kind),
				commas(ow.Work), commas(ow.Span), ratio(ow.Work, ow.Span),
				commas(sp.Work), commas(sp.Span), ratio(sp.Work, sp.Span),
				commas(m.OnSpan.Local.Work), commas(m.OnSpan.Local.Span),
				commas(m.OnWork.Local.Count))
		}
		e.table(sites, "")
		if p.Mode == "trace" {
			e.printf("Times in %s. A site is a stack frame. On work: all strands; on span: those on the critical\n"+
				"path. T1, T∞: the time in stacks holding the frame, and its part on the critical path.\n"+
				"Local: with the frame the leaf. Calls: pieces of strands.\n", unitAbbrev(unit))
		} else {
			e.printf("Times in %s. On work: all invocations of the site; on span: those on the critical path.\n"+
				"T1, T∞: work and span of the top-call-site invocations (not nested in another invocation\n"+
				"of the same site). Local: excluding the instrumented sites they invoke. Calls: invocations.\n",
				unitAbbrev(unit))
		}
	}
	if n := r.executed - len(r.sites); n > 0 {
		e.printf("%s not shown (-top %d).\n", plural(n, "more executed site"), opts.Top)
	}
	if r.unexecuted > 0 {
		e.printf("%s never executed, not shown.\n", plural(r.unexecuted, "site"))
	}
	if p.Mode == "trace" {
		textTrace(e, p)
	}
	textWhatIf(e, p, opts)
	return e.err
}

// wrap breaks text into lines of at most width runes (where words allow),
// indenting every line but the first.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 {
			if n+1+utf8.RuneCountInString(word) > width {
				b.WriteString("\n" + indent)
				n = utf8.RuneCountInString(indent)
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(word)
		n += utf8.RuneCountInString(word)
	}
	return b.String()
}

// plural returns "1 site" or "2 sites".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// reportWidth is the width the default text report fits.
const reportWidth = 100

// shareTable is the site table of the default text report: each site's
// share of the span and of the work, its parallelism and its invocations,
// in at most reportWidth columns. Site and function names that do not fit
// keep their ends (the line, the method), which tell sites apart; the
// function gets at least two fifths of the room the numbers leave.
func shareTable(p *spanprofile.Profile, all []spanprofile.SiteMeasurement) *table {
	t := &table{right: []bool{false, false, false, true, true, true, true}}
	t.add("site", "func", "kind", "span %", "work %", "T1/T∞", "calls")
	for _, m := range all {
		ow := m.OnWork.TopCallSite
		t.add(sitePlace(m.Site), m.Site.Func, string(m.Site.Kind),
			percent(m.OnSpan.Local.Span, p.Span), percent(m.OnWork.Local.Work, p.Work),
			ratio(ow.Work, ow.Span), commas(m.OnWork.Local.Count))
	}
	width := make([]int, len(t.right))
	for _, row := range t.rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	room := reportWidth - len(columnGap)*(len(width)-1)
	for _, w := range width[2:] {
		room -= w
	}
	if width[0]+width[1] > room {
		fn := min(width[1], max(room-width[0], room*2/5))
		site := room - fn
		for _, row := range t.rows[1:] {
			row[0], row[1] = keepEnd(row[0], site), keepEnd(row[1], fn)
		}
	}
	return t
}

// percent formats a as a share of b, with one decimal: "71.7%".
func percent(a, b int64) string {
	if b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}

// keepEnd shortens s to at most n runes by replacing its start with "…".
func keepEnd(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
