package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGeomean(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 4}, 2},
		{[]float64{2, 2, 2}, 2},
		{[]float64{0.5, 2}, 1},
		{[]float64{1, 1, 1, 8}, math.Pow(8, 0.25)},
	} {
		if got := geomean(tc.xs); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("geomean(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if got := geomean(nil); !math.IsNaN(got) {
		t.Errorf("geomean(nil) = %v, want NaN", got)
	}
}

// mkRound builds a round from wall times in milliseconds, with CPU time
// equal to wall time but for the traced run, which takes half its wall
// time on the CPU. plainParMs is the plain program's run at -parprocs.
func mkRound(plainMs, elisionMs, profiledMs, tracedMs, parallelMs, plainParMs float64) round {
	var rd round
	for v, ms := range []float64{plainMs, elisionMs, profiledMs, tracedMs, parallelMs, plainParMs} {
		d := time.Duration(ms * float64(time.Millisecond))
		rd[v] = sample{wall: d, cpu: d, maxRSS: int64(v+1) << 20}
	}
	rd[traced].cpu /= 2
	rd[profiled].shadow = 4096
	rd[traced].trace = 1000
	return rd
}

func TestSummarizeTakesTheMedianOfEachRoundsRatio(t *testing.T) {
	// Profiled over plain per round: 3, 1, 1.2, so the median ratio is
	// 1.2; the ratio of the median times would be 3 / 2 = 1.5.
	rounds := []round{
		mkRound(1000, 900, 3000, 1100, 750, 500),
		mkRound(10000, 9000, 10000, 11000, 7500, 5000),
		mkRound(2000, 1800, 2400, 2200, 1500, 1000),
	}
	r := summarize("quicksort", 1, rounds)
	if r.time[wallClock][plain] != 2*time.Second || r.time[wallClock][profiled] != 3*time.Second {
		t.Errorf("median wall times plain %v, profiled %v; want 2s, 3s", r.time[wallClock][plain], r.time[wallClock][profiled])
	}
	if got := r.time[cpuClock][traced]; got != 1100*time.Millisecond {
		t.Errorf("median CPU time of the traced runs %v, want 1.1s", got)
	}
	if got := r.time[wallClock][plainPar]; got != time.Second {
		t.Errorf("median wall time of the plain runs at -parprocs %v, want 1s", got)
	}
	// profiled/plain, profiled/elision, elision/plain, traced/plain,
	// parallel/plain (over the plain runs at -parprocs)
	want := [numClocks][]float64{
		wallClock: {1.2, 1.2 / 0.9, 0.9, 1.1, 1.5},
		cpuClock:  {1.2, 1.2 / 0.9, 0.9, 0.55, 1.5},
	}
	for c := range numClocks {
		for i, q := range ratios {
			if got := r.ratio[c][i]; math.Abs(got-want[c][i]) > 1e-9 {
				t.Errorf("%s on %s time = %v, want %v", q.name, c, got, want[c][i])
			}
		}
	}
	if r.shadow != 4096 || r.trace != 1000 || r.maxRSS[profiled] != 3<<20 || r.runs != 3 {
		t.Errorf("shadow %d, trace %d, profiled RSS %d, runs %d; want 4096, 1000, %d, 3", r.shadow, r.trace, r.maxRSS[profiled], r.runs, 3<<20)
	}
}

// twoResults are a cheap and a costly benchmark, listed costly first.
func twoResults() []result {
	fib := summarize("fib", 1, []round{mkRound(1000, 100, 4000, 3000, 2400, 600)})
	fib.shadow = 3 << 20
	mm := summarize("matmul", 1, []round{mkRound(2000, 2000, 2200, 2100, 1100, 1000)})
	return []result{fib, mm}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := writeTable(&b, twoResults(), wallClock); err != nil {
		t.Fatal(err)
	}
	// Sorted by profiled/plain as Figure 11 is; the geometric mean of 1.1
	// and 4 is 2.10, of 1 and 0.1 (elision/plain) 0.32, of 1.1 and 4
	// (parallel/plain, over the plain runs at -parprocs) 2.10.
	want := `| benchmark      |  plain | elision | profiled | traced | parallel | profiled/plain | profiled/elision | elision/plain | traced/plain | parallel/plain | shadow memory | RSS plain | RSS profiled |
|----------------|-------:|--------:|---------:|-------:|---------:|---------------:|-----------------:|--------------:|-------------:|---------------:|--------------:|----------:|-------------:|
| matmul         | 2.00 s |  2.00 s |   2.20 s | 2.10 s |   1.10 s |          1.10× |            1.10× |         1.00× |        1.05× |          1.10× |       4.0 KiB |   1.0 MiB |      3.0 MiB |
| fib            | 1.00 s |  0.10 s |   4.00 s | 3.00 s |   2.40 s |          4.00× |           40.00× |         0.10× |        3.00× |          4.00× |       3.0 MiB |   1.0 MiB |      3.0 MiB |
| geometric mean |        |         |          |        |          |          2.10× |            6.63× |         0.32× |        1.77× |          2.10× |               |           |              |
| maximum        |        |         |          |        |          |          4.00× |           40.00× |         1.00× |        3.00× |          4.00× |       3.0 MiB |   1.0 MiB |      3.0 MiB |
`
	if got := b.String(); got != want {
		t.Errorf("writeTable wrote\n%s\nwant\n%s", got, want)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := writeCSV(&b, twoResults(), wallClock); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&b).ReadAll() // also checks every row has the header's width
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range records[1:] {
		names = append(names, r[0])
	}
	if want := []string{"matmul", "fib", "geomean", "max"}; !slices.Equal(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	cell := func(row int, column string) string {
		i := slices.Index(records[0], column)
		if i < 0 {
			t.Fatalf("no column %s in %v", column, records[0])
		}
		return records[row][i]
	}
	for _, c := range []struct {
		row          int
		column, want string
	}{
		{1, "plain_wall_ns", "2000000000"},
		{2, "profiled_cpu_ns", "4000000000"},
		{2, "traced_cpu_ns", "1500000000"},
		{2, "profiled_plain_wall", "4.0000"},
		{2, "profiled_elision_cpu", "40.0000"},
		{2, "traced_plain_wall", "3.0000"},
		{2, "traced_plain_cpu", "1.5000"},
		{2, "shadow_bytes", "3145728"},
		{2, "parallel_wall_ns", "2400000000"},
		{2, "plainpar_cpu_ns", "600000000"},
		{2, "parallel_plain_cpu", "4.0000"},
		{3, "parallel_plain_wall", "2.0976"},
		{4, "parallel_plain_wall", "4.0000"},
		{2, "trace_bytes", "1000"},
		{2, "traced_maxrss_bytes", "4194304"},
		{3, "profiled_plain_wall", "2.0976"},
		{3, "traced_plain_cpu", "0.8874"}, // √(1.5 × 0.525)
		{3, "plain_wall_ns", ""},
		{3, "shadow_bytes", ""},
		{4, "profiled_elision_wall", "40.0000"},
		{4, "shadow_bytes", "3145728"},
		{4, "runs", ""},
	} {
		if got := cell(c.row, c.column); got != c.want {
			t.Errorf("row %s, %s = %q, want %q", records[c.row][0], c.column, got, c.want)
		}
	}
}

func TestWriteNoResults(t *testing.T) {
	var table, csvOut bytes.Buffer
	if err := writeTable(&table, nil, wallClock); err != nil || table.Len() != 0 {
		t.Errorf("writeTable(nil) wrote %q, %v; want nothing", table.String(), err)
	}
	if err := writeCSV(&csvOut, nil, wallClock); err != nil || strings.Count(csvOut.String(), "\n") != 1 {
		t.Errorf("writeCSV(nil) wrote %q, %v; want the header alone", csvOut.String(), err)
	}
}

func TestBytesize(t *testing.T) {
	for n, want := range map[int64]string{
		0:             "-",
		512:           "512 B",
		1536:          "1.5 KiB",
		80 << 20:      "80.0 MiB",
		3<<30 + 1<<29: "3.50 GiB",
	} {
		if got := bytesize(n); got != want {
			t.Errorf("bytesize(%d) = %q, want %q", n, got, want)
		}
	}
}

// On CPU time the table shows the traced runs' CPU time, and sorts by the
// profiled/plain ratio on CPU time.
func TestWriteTableCPU(t *testing.T) {
	rs := twoResults()
	// On the CPU, fib's profiled run costs as much as the plain one, so it
	// comes before matmul, the other way round from the wall clock.
	rs[0] = summarize("fib", 1, []round{mkRound(1000, 100, 4000, 3000, 2400, 600)})
	for v := range numVariants {
		rs[0].time[cpuClock][v] = time.Second
	}
	rs[0].ratio[cpuClock] = []float64{1, 1, 1, 1, 1}
	var b bytes.Buffer
	if err := writeTable(&b, rs, cpuClock); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[2], "| fib ") || !strings.HasPrefix(lines[3], "| matmul ") {
		t.Errorf("rows not sorted by profiled/plain on CPU time:\n%s", b.String())
	}
	// matmul: traced 2.1 s of wall time, 1.05 s on the CPU.
	if !strings.Contains(lines[3], "| 1.05 s |") || strings.Contains(lines[3], "2.10 s") {
		t.Errorf("matmul's row shows wall times, want CPU times: %s", lines[3])
	}
}

func TestParseClock(t *testing.T) {
	for s, want := range map[string]clock{"wall": wallClock, "cpu": cpuClock} {
		if c, err := parseClock(s); err != nil || c != want {
			t.Errorf("parseClock(%q) = %v, %v; want %v", s, c, err, want)
		}
	}
	if _, err := parseClock("user"); err == nil {
		t.Error("parseClock(\"user\") succeeded")
	}
}

// The parallel-mode program and the plain run it is compared with run at
// -parprocs, the rest at -procs.
func TestProcsOf(t *testing.T) {
	r := &runner{procs: 1, parProcs: 4}
	for v := range numVariants {
		want := 1
		if v == parallel || v == plainPar {
			want = 4
		}
		if got := r.procsOf(v); got != want {
			t.Errorf("%s runs with GOMAXPROCS=%d, want %d", v, got, want)
		}
	}
}

// A stress case is shown below the summary rows and is not part of them:
// its ratio, far above the others, moves neither the geometric mean nor the
// maximum.
func TestStressRow(t *testing.T) {
	rs := twoResults()
	deep := summarize("deepchain", 1, []round{mkRound(1000, 5000, 10000, 1500, 2500, 1000)})
	deep.stress = true
	rs = append(rs, deep)
	var b bytes.Buffer
	if err := writeTable(&b, rs, wallClock); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "| deepchain (stress) ") || !strings.Contains(last, "10.00×") || !strings.Contains(last, "2.50×") {
		t.Errorf("last row %q, want the stress case with its 10.00× profiled/plain and 2.50× parallel/plain", last)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "| geometric mean") && !strings.Contains(l, "2.10×") ||
			strings.HasPrefix(l, "| maximum") && !strings.Contains(l, "4.00×") {
			t.Errorf("summary row counts the stress case: %s", l)
		}
	}
	b.Reset()
	if err := writeCSV(&b, rs, wallClock); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range records[1:] {
		names = append(names, r[0])
	}
	if want := []string{"matmul", "fib", "geomean", "max", "deepchain (stress)"}; !slices.Equal(names, want) {
		t.Errorf("CSV rows %v, want %v", names, want)
	}
}

// TestParallelFive: under the table, parallel/plain's geometric mean over
// the five programs of the parallel-overhead experiment, from their rows
// alone; nothing when one of them did not run.
func TestParallelFive(t *testing.T) {
	var rs []result
	// parallel/plain 1, 2, 4, 1, 2 on the five, and 100 on an example
	// that is not one of them: the mean is 2^(4/5).
	for i, name := range append(slices.Clone(parallelFive), "stencil") {
		par := []float64{1000, 2000, 4000, 1000, 2000, 100000}[i]
		rs = append(rs, summarize(name, 1, []round{mkRound(1000, 900, 1000, 1100, par, 1000)}))
	}
	var b bytes.Buffer
	if err := writeParallelFive(&b, rs, cpuClock); err != nil {
		t.Fatal(err)
	}
	want := "\nparallel/plain over quicksort, fib, matmul, cilksort, nqueens (geometric mean): " + times(math.Pow(2, 0.8)) + "\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := writeParallelFive(&b, slices.Delete(rs, 1, 2), cpuClock); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 {
		t.Errorf("without fib: got %q, want nothing", b.String())
	}
}
