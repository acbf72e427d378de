package speedup

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// recorded is a table of made-up but consistent measurements: a program
// whose baseline takes 0.64 s, 0.80 s on one processor and 0.70 s as its
// serial elision, and whose idle time and work grow with P.
var recorded = Input{
	Serial:  0.64,
	One:     0.80,
	Elision: 0.70,
	Runs: []Measurement{
		{Procs: 1, Time: 0.80, Idle: 0, Others: 0.02, Wait: 0.004},
		{Procs: 2, Time: 0.45, Idle: 0.06, Others: math.NaN(), Wait: 0.01},
		{Procs: 4, Time: 0.26, Idle: 0.16, Others: 0.052, Wait: 0.031},
		{Procs: 8, Time: 0.17, Idle: 0.32, Others: 0.04, Wait: 0.3},
	},
	// Parallelism 5, burdened span 150.
	Profile: &spanprofile.Profile{Work: 1000, Span: 200, BurdenedSpan: 150},
}

// near reports whether got is want to 9 significant digits.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

func TestFactorIdentities(t *testing.T) {
	t.Parallel()
	points, err := Factor(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != len(recorded.Runs) {
		t.Fatalf("got %d points for %d measurements", len(points), len(recorded.Runs))
	}
	for i, pt := range points {
		m := recorded.Runs[i]
		P := float64(m.Procs)
		for _, c := range []struct {
			fact      string
			got, want float64
		}{
			{"Fact 2.1: P·T_P = W_P + I_P", P * pt.Time, pt.Work + pt.Idle},
			{"Fact 2.2: F_P = W_P − T_1", pt.Inflation, pt.Work - recorded.One},
			{"Fact 2.3: F_P = P·T_P − I_P − T_1", pt.Inflation, P*m.Time - m.Idle - recorded.One},
			{"Fact 2.4: T_P = (T_1 + I_P + F_P)/P", pt.Time, (recorded.One + pt.Idle + pt.Inflation) / P},
			{"Fact 2.5: T_s/T_P = P·T_s/(T_1 + I_P + F_P)", pt.Actual, P * recorded.Serial / (recorded.One + pt.Idle + pt.Inflation)},
			{"inflation-specific = P·T_s/(T_1 + F_P)", pt.InflationSpecific, P * recorded.Serial / (recorded.One + pt.Inflation)},
			{"T_P is the measured one", pt.Time, m.Time},
			{"I_P is the measured one", pt.Idle, m.Idle},
		} {
			if !near(c.got, c.want) {
				t.Errorf("P=%d: %s: %g ≠ %g", m.Procs, c.fact, c.got, c.want)
			}
		}
		// Each factor only takes speedup away, in the paper's order.
		if pt.IdleSpecific > pt.Maximal || pt.InflationSpecific > pt.Maximal || pt.Actual > pt.IdleSpecific || pt.Actual > pt.InflationSpecific {
			t.Errorf("P=%d: curves out of order: maximal %g, idle-specific %g, inflation-specific %g, actual %g",
				m.Procs, pt.Maximal, pt.IdleSpecific, pt.InflationSpecific, pt.Actual)
		}
	}
}

func TestFactorCurves(t *testing.T) {
	t.Parallel()
	points, err := Factor(recorded)
	if err != nil {
		t.Fatal(err)
	}
	// Each value worked out by hand from its formula.
	want := []Point{{
		Procs: 1, Serial: 0.64, One: 0.80, Time: 0.80, Idle: 0,
		Work: 0.80, Inflation: 0, // 1·0.80 − 0; 0.80 − 0.80
		Linear: 1, Elision: 0.64 / 0.70, Maximal: 0.8, // 1·0.64/0.80
		IdleSpecific:      0.8, // 0.64/(0.80 + 0)
		InflationSpecific: 0.8, // 0.64/0.80
		Actual:            0.8, // 0.64/0.80
		Upper:             0.8, // min(1, 5)·0.8
		Lower:             1000.0 / (1000 + 1.7*150) * 0.8,
	}, {
		Procs: 2, Serial: 0.64, One: 0.80, Time: 0.45, Idle: 0.06,
		Work: 0.84, Inflation: 0.04, // 2·0.45 − 0.06; 0.84 − 0.80
		Linear: 2, Elision: 1.28 / 0.70, Maximal: 1.6, // 2·0.64/0.80
		IdleSpecific:      1.28 / 0.86, // 2·0.64/(0.80 + 0.06)
		InflationSpecific: 1.28 / 0.84, // 2·0.64/(2·0.45 − 0.06)
		Actual:            0.64 / 0.45,
		Upper:             1.6, // min(2, 5)·0.8
		Lower:             1000.0 / (500 + 1.7*150) * 0.8,
	}, {
		Procs: 4, Serial: 0.64, One: 0.80, Time: 0.26, Idle: 0.16,
		Work: 0.88, Inflation: 0.08,
		Linear: 4, Elision: 2.56 / 0.70, Maximal: 3.2,
		IdleSpecific:      2.56 / 0.96,
		InflationSpecific: 2.56 / 0.88,
		Actual:            0.64 / 0.26,
		Upper:             3.2, // min(4, 5)·0.8
		Lower:             1000.0 / (250 + 1.7*150) * 0.8,
	}, {
		Procs: 8, Serial: 0.64, One: 0.80, Time: 0.17, Idle: 0.32,
		Work: 1.04, Inflation: 0.24,
		Linear: 8, Elision: 5.12 / 0.70, Maximal: 6.4,
		IdleSpecific:      5.12 / 1.12,
		InflationSpecific: 5.12 / 1.04,
		Actual:            0.64 / 0.17,
		Upper:             4, // min(8, 5)·0.8: the parallelism caps it
		Lower:             1000.0 / (125 + 1.7*150) * 0.8,
	}}
	for i, got := range points {
		w := want[i]
		if got.Procs != w.Procs {
			t.Errorf("point %d: P=%d, want %d", i, got.Procs, w.Procs)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"t_s", got.Serial, w.Serial}, {"t_1", got.One, w.One}, {"t_p", got.Time, w.Time},
			{"idle", got.Idle, w.Idle}, {"work_p", got.Work, w.Work}, {"inflation", got.Inflation, w.Inflation},
			{"linear", got.Linear, w.Linear}, {"elision", got.Elision, w.Elision}, {"maximal", got.Maximal, w.Maximal},
			{"idle_specific", got.IdleSpecific, w.IdleSpecific}, {"inflation_specific", got.InflationSpecific, w.InflationSpecific},
			{"actual", got.Actual, w.Actual}, {"upper_bound", got.Upper, w.Upper}, {"lower_bound", got.Lower, w.Lower},
		} {
			if !near(c.got, c.want) {
				t.Errorf("P=%d: %s = %.12g, want %.12g", w.Procs, c.name, c.got, c.want)
			}
		}
	}
}

func TestFactorUnmeasured(t *testing.T) {
	t.Parallel()
	in := recorded
	in.Elision, in.Profile = 0, nil
	points, err := Factor(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range points {
		if !math.IsNaN(pt.Elision) || !math.IsNaN(pt.Upper) || !math.IsNaN(pt.Lower) {
			t.Errorf("P=%d: elision %g, bounds %g and %g; want NaN without T_elision and a profile", pt.Procs, pt.Elision, pt.Upper, pt.Lower)
		}
	}
	// An empty profile has no parallelism to bound anything with.
	in.Profile = &spanprofile.Profile{}
	points, err = Factor(in)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(points[0].Upper) {
		t.Errorf("upper bound %g from an empty profile, want NaN", points[0].Upper)
	}
}

func TestFactorErrors(t *testing.T) {
	t.Parallel()
	one := []Measurement{{Procs: 1, Time: 1}}
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Serial: 0, One: 1, Runs: one}, "need positive T_s and T_1"},
		{Input{Serial: 1, One: math.NaN(), Runs: one}, "need positive T_s and T_1"},
		{Input{Serial: 1, One: 1, Elision: -1, Runs: one}, "serial elision time -1 s"},
		{Input{Serial: 1, One: 1}, "no measurements"},
		{Input{Serial: 1, One: 1, Runs: []Measurement{{Procs: 0, Time: 1}}}, "0 processors"},
		{Input{Serial: 1, One: 1, Runs: []Measurement{{Procs: 2, Time: 0}}}, "want T_P > 0"},
		{Input{Serial: 1, One: 1, Runs: []Measurement{{Procs: 2, Time: 1, Idle: -0.5}}}, "want T_P > 0 and I_P ≥ 0"},
		{Input{Serial: 1, One: 1, Runs: []Measurement{{Procs: 2, Time: 1, Idle: 2.5}}}, "exceeds P·T_P"},
	} {
		if _, err := Factor(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Factor(%+v): error %v, want one with %q", tc.in, err, tc.want)
		}
	}
}

func TestIdle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		procs          int
		wall, cpu, out float64
	}{
		{1, 1, 1, 0},
		{2, 1, 1, 1},   // one processor busy throughout, one idle
		{4, 0.5, 1, 1}, // half the available 2 processor-seconds
		{2, 1, 0, 2},   // asleep
		{1, 1, 1.2, 0}, // threads without a P: clamped, not negative
	} {
		if got := Idle(tc.procs, tc.wall, tc.cpu); !near(got, tc.out) {
			t.Errorf("Idle(%d, %g, %g) = %g, want %g", tc.procs, tc.wall, tc.cpu, got, tc.out)
		}
		s := Sample{Wall: tc.wall, CPU: tc.cpu}
		if got := s.Idle(tc.procs); !near(got, tc.out) {
			t.Errorf("Sample%+v.Idle(%d) = %g, want %g", s, tc.procs, got, tc.out)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 100}, 1}, // one slow run does not move it
		{[]float64{2, 2, 9, 2, 9}, 2},
	} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %g, want %g", tc.xs, got, tc.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %g, want NaN", got)
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("Median reordered its argument: %v", xs)
	}
}

func TestWriteCSV(t *testing.T) {
	t.Parallel()
	in := recorded
	in.Profile = nil
	points, err := Factor(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, buf.String())
	}
	const header = "procs,t_s,t_1,t_p,idle,work_p,inflation,linear,maximal,idle_specific,inflation_specific,actual,upper_bound,lower_bound,others,wait"
	if got := strings.Join(recs[0], ","); got != header {
		t.Errorf("header %s\nwant   %s", got, header)
	}
	if len(recs) != 1+len(points) {
		t.Fatalf("%d rows for %d points", len(recs)-1, len(points))
	}
	for i, rec := range recs[1:] {
		pt := points[i]
		if rec[0] != strconv.Itoa(pt.Procs) {
			t.Errorf("row %d: procs %q, want %d", i, rec[0], pt.Procs)
		}
		for j, want := range []float64{pt.Serial, pt.One, pt.Time, pt.Idle, pt.Work, pt.Inflation} {
			if got, err := strconv.ParseFloat(rec[1+j], 64); err != nil || math.Abs(got-want) > 5e-7 {
				t.Errorf("row %d: %s = %q, want %g to the microsecond", i, Columns[1+j], rec[1+j], want)
			}
		}
		for j, want := range []float64{pt.Linear, pt.Maximal, pt.IdleSpecific, pt.InflationSpecific, pt.Actual} {
			if got, err := strconv.ParseFloat(rec[7+j], 64); err != nil || math.Abs(got-want) > 5e-5 {
				t.Errorf("row %d: %s = %q, want %g to 4 decimals", i, Columns[7+j], rec[7+j], want)
			}
		}
		if rec[12] != "" || rec[13] != "" {
			t.Errorf("row %d: bounds %q and %q without a profile, want empty fields", i, rec[12], rec[13])
		}
		if want := format(pt.Others, 6, ""); rec[14] != want || rec[15] != format(pt.Wait, 6, "") {
			t.Errorf("row %d: others %q and wait %q, want %q and %g to the microsecond", i, rec[14], rec[15], want, pt.Wait)
		}
	}
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	in := recorded
	in.Profile = nil
	points, err := Factor(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, points); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 1+len(points) {
		t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(points), buf.String())
	}
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != strings.Join(Columns, " ") {
		t.Errorf("header %q, want the columns %q", lines[0], Columns)
	}
	// P=4: T_P 0.260 s, actual speedup 0.64/0.26 = 2.46, no bounds;
	// other processes took 0.052 s and the program waited 0.031 s.
	want := "4 0.640 0.800 0.260 0.160 0.880 0.080 4.00 3.20 2.67 2.91 2.46 - - 0.052 0.031"
	if got := strings.Join(strings.Fields(lines[3]), " "); got != want {
		t.Errorf("row of P=4: %q, want %q", got, want)
	}
	// Aligned: every line as wide as the header.
	for _, l := range lines[1:] {
		if len(strings.TrimRight(l, " ")) != len(strings.TrimRight(lines[0], " ")) {
			t.Errorf("row %q is not aligned with the header %q", l, lines[0])
		}
	}
}

// checkPNG decodes a PNG image and checks its size.
func checkPNG(t *testing.T, r io.Reader) {
	t.Helper()
	img, err := png.Decode(r)
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	w, h := PNGSize()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("PNG of %dx%d pixels, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
}

// checkSVG checks that r is well-formed XML with an svg root element, and
// returns its text.
func checkSVG(t *testing.T, r io.Reader) string {
	t.Helper()
	d := xml.NewDecoder(r)
	root, text := "", ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text += string(tok)
		}
	}
	if root != "svg" {
		t.Errorf("the SVG's root element is %q, want svg", root)
	}
	return text
}

func TestChart(t *testing.T) {
	t.Parallel()
	full, err := Factor(recorded)
	if err != nil {
		t.Fatal(err)
	}
	bare := recorded
	bare.Elision, bare.Profile = 0, nil
	bare.Runs = bare.Runs[:1]
	one, err := Factor(bare)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		points      []Point
		legend, not []string
	}{
		{"full", full, []string{"linear", "elision", "maximal", "idle-specific", "inflation-specific", "actual", "Cilkview bounds (span profile)", "× T_s/T_1"}, nil},
		{"one processor count, no elision or profile", one, []string{"maximal", "actual"}, []string{"elision", "Cilkview"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch := Chart{Title: "Factored speedup of example", Subtitle: "Ts 0.640 s", Points: tc.points}
			var svg, pngBuf bytes.Buffer
			if err := ch.WriteSVG(&svg); err != nil {
				t.Fatal(err)
			}
			text := checkSVG(t, &svg)
			for _, s := range append([]string{"Factored speedup of example", "processors P (GOMAXPROCS)"}, tc.legend...) {
				if !strings.Contains(text, s) {
					t.Errorf("the SVG has no text %q", s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(text, s) {
					t.Errorf("the SVG has text %q, for a curve that was not measured", s)
				}
			}
			if err := ch.WritePNG(&pngBuf); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, &pngBuf)
		})
	}
	// On a busy machine the warning goes under the subtitle, wrapped to
	// the width, and the inflation gap is named for the load too.
	busy := Load{Others: 0.9, Machine: 2, Wait: 0.3, Wanted: 1.3}.Warning()
	ch := Chart{Title: "Factored speedup of example", Subtitle: "Ts 0.640 s", Points: full, Busy: busy}
	var svg, pngBuf bytes.Buffer
	if err := ch.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	text := checkSVG(t, &svg)
	for _, s := range []string{"busy machine: other processes took 45%", "re-measure on a quiet machine", busyNote} {
		if !strings.Contains(text, s) {
			t.Errorf("the SVG of a busy machine has no text %q", s)
		}
	}
	if strings.Contains(text, busy) || strings.Count(text, "maximal to inflation-specific:") != 1 {
		t.Errorf("the busy line is not wrapped, or the note calls the gap inflation alone")
	}
	if err := ch.WritePNG(&pngBuf); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, &pngBuf)

	if err := (Chart{}).WritePNG(io.Discard); err == nil {
		t.Error("a chart with no points was drawn, want an error")
	}
}
