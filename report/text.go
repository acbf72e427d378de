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
	e.printf("Span profile: %s mode, %s measure\n\n", orDash(p.Mode), orDash(p.Measure))

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
	} else {
		sites := &table{
			right: []bool{false, false, false, true, true, true, true, true, true, true, true, true},
			group: []groupLabel{{3, 5, " on work "}, {6, 8, " on span "}, {9, 10, " local on span "}},
		}
		sites.add("site", "func", "kind", "T1", "T∞", "T1/T∞", "T1", "T∞", "T1/T∞", "T1", "T∞", "count")
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
				"Local: with the frame the leaf. Count: pieces of strands.\n", unitAbbrev(unit))
		} else {
			e.printf("Times in %s. On work: all invocations of the site; on span: those on the critical path.\n"+
				"T1, T∞: work and span of the top-call-site invocations (not nested in another invocation\n"+
				"of the same site). Local: excluding the instrumented sites they invoke. Count: invocations.\n",
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
