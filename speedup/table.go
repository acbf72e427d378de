package speedup

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Columns are the columns of the CSV file and of the table, in order:
// processors; T_s, T_1, T_P, I_P, W_P and F_P in seconds; the factored
// speedups; Cilkview's bounds scaled to speedups over T_s; the processor
// time other processes took during a run at P and the time the program
// waited for a CPU, in seconds (last, so that the columns before them stay
// where they were). The elision curve is left out, so that the file's
// columns stay the same whether or not the elision was measured; the plot
// draws it.
var Columns = []string{
	"procs", "t_s", "t_1", "t_p", "idle", "work_p", "inflation",
	"linear", "maximal", "idle_specific", "inflation_specific", "actual",
	"upper_bound", "lower_bound",
	"others", "wait",
}

// values returns the point's values in the order of Columns, after procs:
// the times, the speedups, then the load's times.
func (p Point) values() (times, speedups, load []float64) {
	return []float64{p.Serial, p.One, p.Time, p.Idle, p.Work, p.Inflation},
		[]float64{p.Linear, p.Maximal, p.IdleSpecific, p.InflationSpecific, p.Actual, p.Upper, p.Lower},
		[]float64{p.Others, p.Wait}
}

// format formats v with prec decimals, or as missing for NaN.
func format(v float64, prec int, missing string) string {
	if math.IsNaN(v) {
		return missing
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// WriteCSV writes the points as CSV with a header line of Columns. Times
// have microsecond precision (6 decimals), speedups 4 decimals; a value that
// was not measured (the bounds without a profile, others without
// /proc/stat) is an empty field.
func WriteCSV(w io.Writer, points []Point) error {
	cw := csv.NewWriter(w)
	cw.Write(Columns)
	for _, p := range points {
		rec := []string{strconv.Itoa(p.Procs)}
		times, speedups, load := p.values()
		for _, v := range times {
			rec = append(rec, format(v, 6, ""))
		}
		for _, v := range speedups {
			rec = append(rec, format(v, 4, ""))
		}
		for _, v := range load {
			rec = append(rec, format(v, 6, ""))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the points as an aligned table with the columns of the
// CSV file, times in seconds to the millisecond, speedups to two decimals,
// "-" for a value not measured.
func WriteTable(w io.Writer, points []Point) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, c := range Columns {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for _, p := range points {
		fmt.Fprintf(tw, "%d\t", p.Procs)
		times, speedups, load := p.values()
		for _, v := range times {
			fmt.Fprintf(tw, "%s\t", format(v, 3, "-"))
		}
		for _, v := range speedups {
			fmt.Fprintf(tw, "%s\t", format(v, 2, "-"))
		}
		for _, v := range load {
			fmt.Fprintf(tw, "%s\t", format(v, 3, "-"))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
