package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// commas formats n with thousands separators, as Cilkview does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// decimal formats x with prec decimals and thousands separators.
func decimal(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return s // beyond int64: no separators
	}
	out := commas(n)
	if n == 0 && strings.HasPrefix(whole, "-") {
		out = "-0"
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

// ratio formats a/b as a site's parallelism, or "-" when b is 0 (Cilkprof
// prints a dash for 0/0) or above a: invocations whose span exceeds their
// work waited for goroutines spawned before them (a helper that waits on a
// WaitGroup passed in), so their ratio is no parallelism of theirs; it read
// 0.0.
func ratio(a, b int64) string {
	if b == 0 || a < b {
		return "-"
	}
	return decimal(float64(a)/float64(b), 1)
}

// unitAbbrev returns the short form of a unit for the text report.
func unitAbbrev(unit string) string {
	switch unit {
	case "nanoseconds":
		return "ns"
	case "":
		return "units"
	}
	return unit
}

// quantity formats a value in the profile's unit: "1,234 ns (1.23µs)".
func quantity(n int64, unit string) string {
	s := commas(n) + " " + unitAbbrev(unit)
	if unit == "nanoseconds" && (n >= 1000 || n <= -1000) {
		s += " (" + duration(float64(n)) + ")"
	}
	return s
}

// duration formats nanoseconds in the largest unit that keeps a whole part,
// with two decimals.
func duration(ns float64) string {
	abs := max(ns, -ns)
	switch {
	case abs >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'f', 2, 64) + "s"
	case abs >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'f', 2, 64) + "ms"
	case abs >= 1e3:
		return strconv.FormatFloat(ns/1e3, 'f', 2, 64) + "µs"
	}
	return strconv.FormatFloat(ns, 'f', 0, 64) + "ns"
}

// table aligns columns: text columns to the left, numbers to the right.
// text/tabwriter pads every column the same way, which leaves numbers
// ragged or site names right-aligned; a table of this size is simpler to
// align by hand.
type table struct {
	right []bool       // per column: align right
	rows  [][]string   // header rows included
	group []groupLabel // labels centred over a run of columns, above the header
}

// groupLabel names the columns first..last (inclusive).
type groupLabel struct {
	first, last int
	label       string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

const columnGap = "  "

// write writes the table, each line prefixed by indent.
func (t *table) write(w io.Writer, indent string) error {
	width := make([]int, len(t.right))
	for _, row := range t.rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, g := range t.group {
		// Widen the last column of a group whose label is wider than its
		// columns.
		span := len(columnGap) * (g.last - g.first)
		for i := g.first; i <= g.last; i++ {
			span += width[i]
		}
		for n := utf8.RuneCountInString(g.label) - span; n > 0; n-- {
			width[g.last-n%(g.last-g.first+1)]++
		}
	}
	var b strings.Builder
	if len(t.group) > 0 {
		// Column i starts at start[i].
		start := make([]int, len(width)+1)
		for i, wd := range width {
			start[i+1] = start[i] + wd + len(columnGap)
		}
		line := []rune(strings.Repeat(" ", start[len(width)]))
		for _, g := range t.group {
			span := start[g.last+1] - len(columnGap) - start[g.first]
			label := []rune(g.label)
			if n := span - len(label); n > 0 {
				label = []rune(strings.Repeat("-", n/2) + g.label + strings.Repeat("-", n-n/2))
			}
			copy(line[start[g.first]:], label)
		}
		b.WriteString(indent + strings.TrimRight(string(line), " ") + "\n")
	}
	for _, row := range t.rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString(columnGap)
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(indent + strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errWriter remembers the first write error, so that a report is a series
// of prints and one check.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) table(t *table, indent string) {
	if e.err == nil {
		e.err = t.write(e.w, indent)
	}
}
