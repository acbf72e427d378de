package report_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

// section returns the part of page from the element with the given id to
// the end of that element (the first closing tag of its name after it).
func section(t *testing.T, page, tag, id string) string {
	t.Helper()
	at := strings.Index(page, ` id="`+id+`"`)
	if at < 0 {
		t.Fatalf("no element with id %q in the page", id)
	}
	start := strings.LastIndex(page[:at], "<"+tag+" ")
	end := strings.Index(page[at:], "</"+tag+">")
	if start < 0 || end < 0 || strings.Contains(page[start:at], ">") {
		t.Fatalf("no <%s id=%q>...</%s> in the page", tag, id, tag)
	}
	return page[start : at+end]
}

// TestHTMLPage checks the structure of the HTML report: the verdict first,
// then the key numbers; the two charts as inline SVG; nothing fetched; one
// link per site to its source line; the shares of the span and the work.
func TestHTMLPage(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	const prefix = "https://git.invalid/org/repo/blob/main/"
	page := string(render(t, "html", p, report.Options{Procs: procs, SourceURL: prefix}))
	body := page[strings.Index(page, "<body>"):]

	// The verdict opens the page, right after the title, and the key
	// numbers follow it.
	verdict := strings.Index(body, `<p class="verdict"`)
	if verdict < 0 || !strings.Contains(body, report.Verdict(p)) {
		t.Fatalf("no verdict %q in the page", report.Verdict(p))
	}
	for _, tag := range []string{"<p", "<table", "<svg", "<h2", `<div class="key"`} {
		if i := strings.Index(body, tag); i >= 0 && i < verdict {
			t.Errorf("%s comes before the verdict", tag)
		}
	}
	key := strings.Index(body, `<div class="key">`)
	if key < verdict {
		t.Errorf("the key numbers come before the verdict")
	}
	for _, label := range []string{"Work", "Span", "Parallelism", "Burdened parallelism"} {
		if !strings.Contains(body[key:], "<span>"+label+"</span>") {
			t.Errorf("no key number %s", label)
		}
	}

	// Self-contained: no resource outside the page.
	for _, bad := range []string{"<link", " src=", "@import", "url(", "http://", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q: it must fetch nothing", bad)
		}
	}
	if n, links := strings.Count(page, "https://"), strings.Count(page, `href="`+prefix); n != links {
		t.Errorf("%d https:// URLs, %d of them links to sources: the page must name nothing else", n, links)
	}

	// The two charts.
	icicle := section(t, page, "svg", "icicle")
	if got := strings.Count(icicle, "<rect"); got < 5 || got != strings.Count(icicle, "<title>") {
		t.Errorf("icicle chart: %d boxes, %d tooltips; want several, each with a tooltip", got, strings.Count(icicle, "<title>"))
	}
	if !strings.Contains(icicle, `<rect x="0" y="0" width="1200"`) || !strings.Contains(icicle, ">main.partition qsort.go:20 45.6%</text>") {
		t.Errorf("icicle chart lacks the root box across the width or the labelled partition box:\n%s", icicle)
	}
	chart := section(t, page, "svg", "speedup-chart")
	if strings.Count(chart, "<polyline") != 3 || strings.Count(chart, "<circle") != 2*(len(procs)+1) {
		t.Errorf("speedup chart: want the lower, upper and linear lines and two points per processor count (1 included):\n%s", chart)
	}
	for _, n := range procs {
		if !strings.Contains(chart, fmt.Sprintf(">%d</text>", n)) {
			t.Errorf("speedup chart: no tick for %d processors", n)
		}
	}

	// One link per executed site, to its file and line; the root row has
	// none.
	table := section(t, page, "table", "site-table")
	links := regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`).FindAllStringSubmatch(table, -1)
	want := map[string]string{}
	for _, m := range p.BySite() {
		if m.Executed() && m.Site.Kind != spanprofile.KindRoot {
			place := m.Site.File + ":" + strconv.Itoa(m.Site.Line)
			if m.Site.Column > 0 {
				place += ":" + strconv.Itoa(m.Site.Column)
			}
			want[place] = prefix + m.Site.File + "#L" + strconv.Itoa(m.Site.Line)
		}
	}
	if len(links) != len(want) {
		t.Errorf("%d links in the site table, want one per executed site (%d)", len(links), len(want))
	}
	for _, l := range links {
		if want[l[2]] != l[1] {
			t.Errorf("site %s links to %q, want %q", l[2], l[1], want[l[2]])
		}
	}

	// Each row's shares: local span on span over the span, local work on
	// work over the work, printed and as the value the column sorts by.
	rows := regexp.MustCompile(`(?s)<tr[^>]*><td class="s">(.*?)</tr>`).FindAllStringSubmatch(table, -1)
	if len(rows) != len(want)+1 {
		t.Fatalf("%d rows in the site table, want %d (the sites and the root)", len(rows), len(want)+1)
	}
	var spanSum float64
	for _, m := range append(p.BySite(), p.Root()) {
		if !m.Executed() || m.Site.Kind == spanprofile.KindRoot && m.Index >= 0 {
			continue
		}
		spanPct := 100 * float64(m.OnSpan.Local.Span) / float64(p.Span)
		workPct := 100 * float64(m.OnWork.Local.Work) / float64(p.Work)
		cells := fmt.Sprintf(`data-v="%s" title="local span on span: %s ns`, strconv.FormatFloat(spanPct, 'g', -1, 64), commas(m.OnSpan.Local.Span))
		cellw := fmt.Sprintf(`data-v="%s" title="local work on work: %s ns`, strconv.FormatFloat(workPct, 'g', -1, 64), commas(m.OnWork.Local.Work))
		found := false
		for _, r := range rows {
			if strings.Contains(r[1], ">"+m.Site.Func+"<") && strings.Contains(r[1], cells) && strings.Contains(r[1], cellw) &&
				strings.Contains(r[1], fmt.Sprintf(">%.1f%%<", spanPct)) && strings.Contains(r[1], fmt.Sprintf(">%.1f%%<", workPct)) {
				found = true
			}
		}
		if !found {
			t.Errorf("no row of %s (%s) with span %.1f%% and work %.1f%%", m.Site.Func, m.Site.File, spanPct, workPct)
		}
		spanSum += spanPct
	}
	if spanSum < 99.99 || spanSum > 100.01 {
		t.Errorf("the sites' shares of the span add up to %.3f%%, want 100%%", spanSum)
	}
	if !strings.Contains(table, `>qsort.go:20</a></td><td class="s">main.partition</td><td>call</td>
<td class="n" data-v="99.93`) || !strings.Contains(table, ">99.9%<") || !strings.Contains(table, ">47.5%<") {
		t.Errorf("the partition's row is not first with 99.9%% of the span and 47.5%% of the work:\n%s", table)
	}
	if !strings.Contains(table, `aria-sort="descending"><button type="button">span %</button>`) {
		t.Errorf("the span column is not marked as the table's order")
	}
}

// commas formats n with thousands separators, as the report does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestHTMLSourceLinks: without a prefix, links are relative to the page
// (file:// for absolute paths); a prefix without a final slash gets one.
func TestHTMLSourceLinks(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	p.Sites[0].File = "/home/me/src/main.go"
	page := string(render(t, "html", p, report.Options{Procs: procs}))
	for _, link := range []string{`href="qsort.go#L20"`, `href="file:///home/me/src/main.go#L31"`} {
		if !strings.Contains(page, link) {
			t.Errorf("no link %s", link)
		}
	}
	page = string(render(t, "html", spanprofiletest.Profile(), report.Options{Procs: procs, SourceURL: "file:///src/app"}))
	if !strings.Contains(page, `href="file:///src/app/qsort.go#L20"`) || strings.Contains(page, "ZgotmplZ") {
		t.Errorf("no link to file:///src/app/qsort.go#L20")
	}
	// html/template keeps a script out of the links.
	page = string(render(t, "html", spanprofiletest.Profile(), report.Options{Procs: procs, SourceURL: "javascript:alert(1)//"}))
	if strings.Contains(page, `href="javascript:`) {
		t.Errorf("a javascript: prefix made it into a link")
	}
}

// TestHTMLTraceMode: a trace-mode page has the icicle of its frames, the
// functions on the critical path and no burdened parallelism.
func TestHTMLTraceMode(t *testing.T) {
	t.Parallel()
	page := string(render(t, "html", spanprofiletest.Trace(), report.Options{Procs: procs}))
	icicle := section(t, page, "svg", "icicle")
	if !strings.Contains(icicle, ">main.transform main.go:88 99.9%</text>") {
		t.Errorf("the icicle chart lacks main.transform's frame:\n%s", icicle)
	}
	for _, s := range []string{`id="speedup-chart"`, `id="functions"`, "A site is a stack frame", "Goroutines"} {
		if !strings.Contains(page, s) {
			t.Errorf("the trace-mode page lacks %q", s)
		}
	}
	if strings.Contains(page, "Burdened parallelism") {
		t.Errorf("the trace-mode page shows a burdened parallelism")
	}
}

// TestHTMLEmpty: a profile without a span has no charts, and says so.
func TestHTMLEmpty(t *testing.T) {
	t.Parallel()
	page := string(render(t, "html", &spanprofile.Profile{}, report.Options{Procs: procs}))
	if strings.Contains(page, "<svg") || !strings.Contains(page, "No span to draw.") || strings.Contains(page, `class="verdict"`) {
		t.Errorf("the page of an empty profile:\n%s", page)
	}
}

// TestHTMLNarrowBoxes: a box of the icicle chart too narrow for a label
// has none, but keeps its tooltip; the labels of wider ones shorten to fit.
func TestHTMLNarrowBoxes(t *testing.T) {
	t.Parallel()
	p := spanprofiletest.Profile()
	// fib from main: 0.5% of the span, 6 of the chart's 1,200 units.
	for i, c := range p.Contexts {
		if len(c.Stack) == 1 && p.Sites[c.Stack[0]].Func == "main.fib" {
			extra := p.Span / 200
			p.Contexts[i].OnSpan.Local.Span += extra
			p.Span += extra
		}
	}
	icicle := section(t, string(render(t, "html", p, report.Options{Procs: procs})), "svg", "icicle")
	box := regexp.MustCompile(`<title>main.fib \(main.go:33, call\)\n[^<]*</title><rect [^>]*width="([0-9.]+)"[^>]*/>(<text)?`).FindStringSubmatch(icicle)
	if box == nil {
		t.Fatalf("no box with a tooltip for main.fib at main.go:33:\n%s", icicle)
	}
	if w, _ := strconv.ParseFloat(box[1], 64); w < 5 || w > 7 || box[2] != "" {
		t.Errorf("main.fib's box: width %s, label %v; want about 6 units wide, no label", box[1], box[2] != "")
	}
	// The first partition, 8.7% of the span (104 units): its function, not
	// its place.
	if !regexp.MustCompile(`<text [^>]*>main.partition( 8\.[0-9]%)?</text>`).MatchString(icicle) {
		t.Errorf("the first partition's box lacks its shortened label:\n%s", icicle)
	}
	// A name too long for the box keeps its end.
	p.Sites[1].Func = "corp/sorting.(*sorter).partition"
	icicle = section(t, string(render(t, "html", p, report.Options{Procs: procs})), "svg", "icicle")
	if !strings.Contains(icicle, ">…er).partition</text>") {
		t.Errorf("the first partition's box lacks the end of its long name:\n%s", icicle)
	}
}
