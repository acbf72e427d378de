package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
)

var cmdReport = &command{
	name:  "report",
	usage: "spanprof report [-format text|csv|json|html] [-sort KEY] [-top N] [-wide] [-source-url URL] FILE",
	short: "print a span profile: summary, speedup estimate, sites",
	run:   runReport,
}

func init() {
	// The sort keys are documented where they are defined.
	var keys strings.Builder
	for _, k := range report.SortKeys {
		fmt.Fprintf(&keys, "\t%-20s %s\n", k.Name, k.Doc)
	}
	cmdReport.long = `Report prints the span profile FILE, written by "spanprof run" or
"spanprof test" (a gzipped pprof protobuf; "go tool pprof FILE" reads it too).

The text format opens with a verdict: the parallelism, what bounds it and
the site holding most of the span. Then come Cilkview's parallelism profile
(work, span, burdened span, parallelism, burdened parallelism, spawns,
syncs, average strand, the instrumentation overhead that was subtracted),
the speedup estimate on 2 to 64 processors and on this machine's, and the
table of sites, in 100 columns: for each spawn site and call of an
instrumented function, its own time on the critical path as a share of the
span, its own time in all invocations as a share of the work, the
parallelism of its invocations (T1/T∞) and how many there were. With
-wide the table has Cilkprof's columns instead: the work (T1) and span
(T∞) of its invocations on work (all of them) and on span (those on the
critical path), and its local work and span on span (excluding the sites
it invokes). The row "main", of kind root, is the program's own code
outside every site. Sites that never ran are not listed.

The csv format has one row per site with every value; json follows a fixed
schema, to which fields may be added but in which none changes (the
spanprof repository's docs/json-report.md); html is a self-contained page
(nothing fetched, a small script to sort its table) that opens with the
verdict and the key numbers, draws the critical path as an icicle chart of
the calling contexts and the speedup bounds as a chart, and links each site
to its source line.

The flags are:

	-format format
		text (the default), csv, json or html.
	-sort key
		the order of the sites, largest first unless said otherwise:
` + indent(keys.String(), "\t") + `	-top n
		show only the first n sites (0, the default: all). The root row is
		always shown.
	-wide
		the text format's table of sites with every time, not the shares
		(150 columns or more).
	-source-url url
		the prefix of the html format's links to the sites' source lines,
		to which each site's file (relative to the module root) and
		#L<line> are appended, as in https://github.com/ORG/REPO/blob/main/.
		The default is the file:// URL of the current directory, which
		suits a report made in the profiled module's root.

Exit status: 0 on success, 2 on a usage error or a FILE that cannot be read.
`
}

// indent prefixes every line of s with prefix.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

func runReport(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	format := fs.String("format", "text", "write the report as `format`: "+strings.Join(report.Formats, ", "))
	sortKey := fs.String("sort", report.DefaultSort, "sort the sites by `key`: "+strings.Join(report.SortKeyNames(), ", "))
	top := fs.Int("top", 0, "show only the first `n` sites (0: all)")
	wide := fs.Bool("wide", false, "the text format's table of sites with every time")
	sourceURL := fs.String("source-url", "", "the prefix of the html format's links to source lines (default: the file:// URL of the current directory)")
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	usage := func(format string, args ...any) int {
		return finish(stdout, stderr, usageError(c, format, args...))
	}
	if fs.NArg() != 1 {
		return usage("report takes one FILE, got %d arguments", fs.NArg())
	}
	if !slices.Contains(report.Formats, *format) {
		return usage("unknown -format %q (valid: %s)", *format, strings.Join(report.Formats, ", "))
	}
	if !slices.Contains(report.SortKeyNames(), *sortKey) {
		return usage("unknown -sort key %q (valid: %s)", *sortKey, strings.Join(report.SortKeyNames(), ", "))
	}
	if *top < 0 {
		return usage("-top %d: want 0 (all) or more", *top)
	}

	if *sourceURL == "" {
		*sourceURL = dirURL()
	}

	p, err := spanprofile.ReadFile(fs.Arg(0))
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	// Render first so that a failure leaves no half report on stdout.
	var buf bytes.Buffer
	if err := report.Write(&buf, *format, p, report.Options{Sort: *sortKey, Top: *top, Wide: *wide, SourceURL: *sourceURL}); err != nil {
		errorf(stderr, "report %s: %v", fs.Arg(0), err)
		return exitUsage
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		errorf(stderr, "writing the report: %v", err)
		return exitUsage
	}
	return exitOK
}

// dirURL returns the file:// URL of the current directory, with a final
// slash, or "" (links relative to the page) when it is unknown.
func dirURL() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	dir = filepath.ToSlash(dir)
	if !strings.HasPrefix(dir, "/") {
		dir = "/" + dir // C:/src: file:///C:/src
	}
	return (&url.URL{Scheme: "file", Path: strings.TrimSuffix(dir, "/") + "/"}).String()
}
