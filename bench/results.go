package main

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spanprof/spanprof/speedup"
)

// A ratio is a column of the table: one variant's time over another's.
type ratio struct {
	name     string // in the table
	csv      string // CSV column, before the clock's suffix
	num, den variant
}

// ratios are the table's ratio columns. profiled/plain is Figure 11's
// overhead; profiled/elision is the cost of the measurements alone, with the
// goroutines already gone; elision/plain what removing the goroutines alone
// does; traced/plain the cost of the profiler a Go programmer already has;
// parallel/plain the overhead of parallel mode, over the plain program at
// the same GOMAXPROCS (-parprocs), as TaskProf reports its overhead.
var ratios = []ratio{
	{"profiled/plain", "profiled_plain", profiled, plain},
	{"profiled/elision", "profiled_elision", profiled, elision},
	{"elision/plain", "elision_plain", elision, plain},
	{"traced/plain", "traced_plain", traced, plain},
	{"parallel/plain", "parallel_plain", parallel, plainPar},
}

// shown are the variants whose times the table shows: the plain runs at
// -parprocs are only the denominator of parallel/plain (the CSV has them).
var shown = []variant{plain, elision, profiled, traced, parallel}

// A clock is what a time is measured on.
type clock int

const (
	wallClock clock = iota // from start to exit, as the driver sees it
	cpuClock               // user + system time of the process
	numClocks
)

var clockNames = [numClocks]string{"wall", "cpu"}

func (c clock) String() string { return clockNames[c] }

// parseClock returns the clock named s.
func parseClock(s string) (clock, error) {
	for c := range numClocks {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("-time %q: want wall or cpu", s)
}

// A result is what the runs of one example measured.
type result struct {
	name   string
	runs   int
	procs  int
	time   [numClocks][numVariants]time.Duration // median per variant
	ratio  [numClocks][]float64                  // per ratios: median of the rounds' ratios
	maxRSS [numVariants]int64                    // median per variant
	shadow int64                                 // median of the profiled runs' ShadowBytes
	trace  int64                                 // median size of the execution traces
	stress bool                                  // a stress case: out of the summary rows
}

// ordinary returns the results that are not stress cases, and the stress
// cases: the summary rows are over the first (over all, if all are stress).
func ordinary(rs []result) (plain, stress []result) {
	for _, r := range rs {
		if r.stress {
			stress = append(stress, r)
		} else {
			plain = append(plain, r)
		}
	}
	if len(plain) == 0 {
		return stress, nil
	}
	return plain, stress
}

// summarize reduces the rounds of one example to medians. A ratio is the
// median of the ratios within each round, not the ratio of the medians: the
// two runs of a round ran next to each other, under the same load.
func summarize(name string, procs int, rounds []round) result {
	r := result{name: name, runs: len(rounds), procs: procs}
	column := func(f func(rd round) float64) float64 {
		xs := make([]float64, len(rounds))
		for i, rd := range rounds {
			xs[i] = f(rd)
		}
		return speedup.Median(xs)
	}
	for c := range numClocks {
		for v := range numVariants {
			r.time[c][v] = time.Duration(column(func(rd round) float64 { return float64(rd[v].on(c)) }))
		}
		for _, q := range ratios {
			r.ratio[c] = append(r.ratio[c], column(func(rd round) float64 {
				return float64(rd[q.num].on(c)) / float64(rd[q.den].on(c))
			}))
		}
	}
	for v := range numVariants {
		r.maxRSS[v] = int64(column(func(rd round) float64 { return float64(rd[v].maxRSS) }))
	}
	r.shadow = int64(column(func(rd round) float64 { return float64(rd[profiled].shadow) }))
	r.trace = int64(column(func(rd round) float64 { return float64(rd[traced].trace) }))
	return r
}

// geomean returns the geometric mean of xs, the mean Figure 11 reports for
// ratios (an arithmetic mean would let one slow benchmark outweigh the
// rest), or NaN for none.
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var logs float64
	for _, x := range xs {
		logs += math.Log(x)
	}
	return math.Exp(logs / float64(len(xs)))
}

// byOverhead returns the results sorted by increasing profiled/plain on
// clock c, as Figure 11 orders its benchmarks.
func byOverhead(rs []result, c clock) []result {
	return slices.SortedStableFunc(slices.Values(rs), func(a, b result) int {
		return cmp.Or(cmp.Compare(a.ratio[c][0], b.ratio[c][0]), strings.Compare(a.name, b.name))
	})
}

// summary holds the geometric-mean and maximum rows of the table.
type summary struct {
	geomean, max        [numClocks][]float64 // per ratios
	maxShadow, maxTrace int64
	maxRSS              [numVariants]int64
}

// summarizeAll returns the geometric-mean and maximum rows of rs, which
// must not be empty.
func summarizeAll(rs []result) summary {
	var s summary
	for c := range numClocks {
		for i := range ratios {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, r.ratio[c][i])
			}
			s.geomean[c] = append(s.geomean[c], geomean(xs))
			s.max[c] = append(s.max[c], slices.Max(xs))
		}
	}
	for _, r := range rs {
		s.maxShadow, s.maxTrace = max(s.maxShadow, r.shadow), max(s.maxTrace, r.trace)
		for v := range numVariants {
			s.maxRSS[v] = max(s.maxRSS[v], r.maxRSS[v])
		}
	}
	return s
}

// writeTable writes the results as a Markdown table of times on clock c,
// whose columns line up in a terminal too, sorted as Figure 11 is, with a
// geometric-mean row and a maximum row, and the stress cases below them,
// out of both. It writes nothing for no results.
func writeTable(w io.Writer, rs []result, c clock) error {
	if len(rs) == 0 {
		return nil
	}
	header := []string{"benchmark"}
	for _, v := range shown {
		header = append(header, v.String())
	}
	for _, q := range ratios {
		header = append(header, q.name)
	}
	header = append(header, "shadow memory", "RSS plain", "RSS profiled")
	rs, stress := ordinary(rs)
	var stressRows [][]string
	rows := [][]string{header}
	for _, r := range append(byOverhead(rs, c), byOverhead(stress, c)...) {
		name := r.name
		if r.stress {
			name += " (stress)"
		}
		row := []string{name}
		for _, v := range shown {
			row = append(row, seconds(r.time[c][v]))
		}
		for _, x := range r.ratio[c] {
			row = append(row, times(x))
		}
		row = append(row, bytesize(r.shadow), bytesize(r.maxRSS[plain]), bytesize(r.maxRSS[profiled]))
		if r.stress {
			stressRows = append(stressRows, row)
		} else {
			rows = append(rows, row)
		}
	}
	s := summarizeAll(rs)
	blanks := func(row []string, n int) []string {
		for range n {
			row = append(row, "")
		}
		return row
	}
	gm := blanks([]string{"geometric mean"}, len(shown))
	mx := blanks([]string{"maximum"}, len(shown))
	for i := range ratios {
		gm, mx = append(gm, times(s.geomean[c][i])), append(mx, times(s.max[c][i]))
	}
	rows = append(rows, blanks(gm, 3),
		append(mx, bytesize(s.maxShadow), bytesize(s.maxRSS[plain]), bytesize(s.maxRSS[profiled])))
	rows = append(rows, stressRows...)

	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				fmt.Fprintf(&b, "| %s%s ", cell, pad) // names to the left
			} else {
				fmt.Fprintf(&b, "| %s%s ", pad, cell) // numbers to the right
			}
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	for i, wd := range widths {
		if i == 0 {
			fmt.Fprintf(&b, "|%s", strings.Repeat("-", wd+2))
		} else {
			fmt.Fprintf(&b, "|%s:", strings.Repeat("-", wd+1))
		}
	}
	b.WriteString("|\n")
	for _, row := range rows[1:] {
		line(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parallelFive are the programs whose parallel-mode overhead
// docs/benchmarks.md has followed from version to version, on this VM and
// on 16 cores ("Parallel mode's overhead"), so that a run can be set
// beside those figures.
var parallelFive = []string{"quicksort", "fib", "matmul", "cilksort", "nqueens"}

// writeParallelFive writes, under the table, parallel/plain's geometric
// mean over parallelFive on clock c, or nothing unless all five ran.
func writeParallelFive(w io.Writer, rs []result, c clock) error {
	q := slices.IndexFunc(ratios, func(q ratio) bool { return q.num == parallel })
	var xs []float64
	for _, name := range parallelFive {
		i := slices.IndexFunc(rs, func(r result) bool { return r.name == name })
		if i < 0 {
			return nil
		}
		xs = append(xs, rs[i].ratio[c][q])
	}
	_, err := fmt.Fprintf(w, "\nparallel/plain over %s (geometric mean): %s\n",
		strings.Join(parallelFive, ", "), times(geomean(xs)))
	return err
}

// writeCSV writes the results in the order of the table on clock c, with
// every number in its base unit (nanoseconds, bytes) and the times and
// ratios on both clocks; the geomean and max rows leave empty what they do
// not summarize.
func writeCSV(w io.Writer, rs []result, c clock) error {
	header := []string{"benchmark", "runs", "procs"}
	for k := range numClocks {
		for v := range numVariants {
			header = append(header, v.String()+"_"+k.String()+"_ns")
		}
	}
	for k := range numClocks {
		for _, q := range ratios {
			header = append(header, q.csv+"_"+k.String())
		}
	}
	header = append(header, "shadow_bytes", "trace_bytes")
	for v := range numVariants {
		header = append(header, v.String()+"_maxrss_bytes")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	i64 := func(x int64) string { return strconv.FormatInt(x, 10) }
	f64 := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	rs, stress := ordinary(rs)
	row := func(r result) []string {
		row := []string{r.name, strconv.Itoa(r.runs), strconv.Itoa(r.procs)}
		for k := range numClocks {
			for v := range numVariants {
				row = append(row, i64(int64(r.time[k][v])))
			}
		}
		for k := range numClocks {
			for _, x := range r.ratio[k] {
				row = append(row, f64(x))
			}
		}
		row = append(row, i64(r.shadow), i64(r.trace))
		for v := range numVariants {
			row = append(row, i64(r.maxRSS[v]))
		}
		return row
	}
	for _, r := range byOverhead(rs, c) {
		if err := cw.Write(row(r)); err != nil {
			return err
		}
	}
	if len(rs) > 0 {
		s := summarizeAll(rs)
		gm := make([]string, len(header))
		mx := make([]string, len(header))
		gm[0], mx[0] = "geomean", "max"
		col := 3 + int(numClocks)*int(numVariants)
		for k := range numClocks {
			for i := range ratios {
				gm[col], mx[col] = f64(s.geomean[k][i]), f64(s.max[k][i])
				col++
			}
		}
		mx[col], mx[col+1] = i64(s.maxShadow), i64(s.maxTrace)
		for v := range numVariants {
			mx[col+2+int(v)] = i64(s.maxRSS[v])
		}
		if err := cw.Write(gm); err != nil {
			return err
		}
		if err := cw.Write(mx); err != nil {
			return err
		}
	}
	// Stress cases come after the summary rows they are not part of,
	// named as in the table.
	for _, r := range byOverhead(stress, c) {
		rw := row(r)
		rw[0] += " (stress)"
		if err := cw.Write(rw); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// seconds formats a duration as the table shows times; 0 is a run not
// made.
func seconds(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// times formats a ratio as the table shows ratios; 0 and NaN are ratios of
// a run not made.
func times(x float64) string {
	if x == 0 || math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}

// bytesize formats a byte count in binary units; 0 means not measured.
func bytesize(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
}
