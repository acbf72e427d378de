package speedup

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// A /proc/stat of this 2-CPU VM, cut to the lines that matter.
const procStat = `cpu  49063 0 23987 116008 223 0 204 0 0 0
cpu0 23857 0 11911 58791 38 0 88 0 0 0
cpu1 25206 0 12075 57217 185 0 116 0 0 0
intr 5123786 0 9 0 0 0 0 0 0 0 0
ctxt 9436220
btime 1767301952
`

func TestParseStat(t *testing.T) {
	t.Parallel()
	got, err := ParseStat([]byte(procStat))
	if err != nil {
		t.Fatal(err)
	}
	// busy = user + nice + system + irq + softirq; total adds idle, iowait
	// and steal; in ticks of 1/100 s.
	want := CPUTimes{Busy: 732.54, Steal: 0, Total: 732.54 + 1160.08 + 2.23}
	if !near(got.Busy, want.Busy) || got.Steal != 0 || !near(got.Total, want.Total) {
		t.Errorf("ParseStat = %+v, want %+v", got, want)
	}
	// A kernel without guest fields, with steal.
	got, err = ParseStat([]byte("cpu 100 0 50 800 0 0 0 50\n"))
	if err != nil || !near(got.Busy, 1.5) || !near(got.Steal, 0.5) || !near(got.Total, 10) {
		t.Errorf("ParseStat of 8 fields = %+v, %v; want busy 1.5, steal 0.5, total 10", got, err)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 x 4 5 6 7 8\n"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

func TestOthersDuring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		before, after   CPUTimes
		own             float64
		others, machine float64
	}{
		// Measured on a 2-CPU VM (docs/benchmarks.md): quicksort at P=2, 0.57 s of CPU in
		// 0.59 s, beside one busy loop: the machine's 1.17 s were all busy.
		{"one busy loop", CPUTimes{Busy: 100, Total: 300}, CPUTimes{Busy: 101.16, Total: 301.17}, 0.570, 0.590, 1.17},
		// The hypervisor's steal is other machines' load.
		{"steal", CPUTimes{Busy: 10, Steal: 1, Total: 50}, CPUTimes{Busy: 10.5, Steal: 1.3, Total: 51}, 0.45, 0.35, 1},
		// Ticks against the exact rusage: a little below 0 is 0.
		{"quiet", CPUTimes{Busy: 10, Total: 50}, CPUTimes{Busy: 10.50, Total: 51}, 0.52, 0, 1},
	} {
		others, machine := OthersDuring(tc.after.Sub(tc.before), tc.own)
		if !near(others, tc.others) || !near(machine, tc.machine) {
			t.Errorf("%s: others %g s of %g s, want %g of %g", tc.name, others, machine, tc.others, tc.machine)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	const cpus = 2
	type run struct {
		procs int
		s     Sample
	}
	for _, tc := range []struct {
		name   string
		runs   []run
		busy   bool
		want   []string // in the warning
		others float64  // OthersShare; NaN when not measured
		wait   float64  // WaitShare
	}{
		{
			// A quiet machine: others took 2% (this process's polling,
			// kernel threads), the program waited 1%.
			name: "quiet",
			runs: []run{
				{1, Sample{Wall: 1, CPU: 0.99, Delay: 0.01, Others: 0.04, Machine: 2}},
				{2, Sample{Wall: 0.6, CPU: 1.18, Delay: 0.01, Others: 0.02, Machine: 1.2}},
			},
			others: 0.06 / 3.2, wait: 0.02 / 2.19,
		},
		{
			// quicksort -n 3000000 with two busy loops beside it on this
			// VM (docs/benchmarks.md): at P=1 1.98 s wall, 0.63 s CPU, 1.42 s wait;
			// at P=2 2.60 s, 0.70 s, 4.31 s; others 3.34 s and 4.50 s.
			name: "two busy loops",
			runs: []run{
				{1, Sample{Wall: 1.979, CPU: 0.631, Delay: 1.419, Others: 3.339, Machine: 3.97}},
				{2, Sample{Wall: 2.596, CPU: 0.697, Delay: 4.311, Others: 4.503, Machine: 5.20}},
			},
			busy:   true,
			want:   []string{"other processes took 86% of its CPU time", "the program waited for a CPU 81% of the time it wanted one"},
			others: 7.842 / 9.17, wait: 5.730 / 7.058,
		},
		{
			// Others just under the line, but the program waited: busy.
			name: "wait only",
			runs: []run{
				{2, Sample{Wall: 1, CPU: 1.5, Delay: 0.3, Others: 0.18, Machine: 2}},
			},
			busy:   true,
			want:   []string{"other processes took 9%", "waited for a CPU 17%"},
			others: 0.09, wait: 0.3 / 1.8,
		},
		{
			// P above the CPUs: the program's threads wait for each
			// other; that wait is not other processes' doing.
			name: "oversubscribed",
			runs: []run{
				{1, Sample{Wall: 1, CPU: 1, Delay: 0.01, Others: 0.02, Machine: 2}},
				{4, Sample{Wall: 0.6, CPU: 1.2, Delay: 1.1, Others: 0.01, Machine: 1.2}},
			},
			others: 0.03 / 3.2, wait: 0.01 / 1.01,
		},
		{
			// Steal named when it is a material part of the machine.
			name: "steal",
			runs: []run{
				{2, Sample{Wall: 1, CPU: 1.4, Delay: 0.05, Others: 0.5, Steal: 0.4, Machine: 2}},
			},
			busy:   true,
			want:   []string{"other processes took 25% of its CPU time during the runs (the hypervisor's steal 20%)"},
			others: 0.25, wait: 0.05 / 1.45,
		},
		{
			// No /proc/stat: the wait alone decides.
			name: "no /proc/stat",
			runs: []run{
				{2, Sample{Wall: 1, CPU: 1, Delay: 0.5}},
			},
			busy:   true,
			want:   []string{"busy machine: the program waited for a CPU 33%"},
			others: math.NaN(), wait: 0.5 / 1.5,
		},
	} {
		var l Load
		for _, r := range tc.runs {
			l.Add(r.s, r.procs, cpus)
		}
		if got := l.OthersShare(); !(math.IsNaN(got) && math.IsNaN(tc.others)) && !near(got, tc.others) {
			t.Errorf("%s: OthersShare %g, want %g", tc.name, got, tc.others)
		}
		if got := l.WaitShare(); !near(got, tc.wait) {
			t.Errorf("%s: WaitShare %g, want %g", tc.name, got, tc.wait)
		}
		w := l.Warning()
		if l.Busy() != tc.busy || (w != "") != tc.busy {
			t.Errorf("%s: Busy %v, warning %q; want busy %v", tc.name, l.Busy(), w, tc.busy)
			continue
		}
		if !tc.busy {
			continue
		}
		for _, s := range append(tc.want, "busy machine: ", "T_P, idle and inflation include that load", "re-measure on a quiet machine") {
			if !strings.Contains(w, s) {
				t.Errorf("%s: warning %q lacks %q", tc.name, w, s)
			}
		}
		if strings.Contains(w, "\n") || strings.Contains(strings.ToLower(w), "work inflation") {
			t.Errorf("%s: warning %q: want one line that does not call the load work inflation", tc.name, w)
		}
	}
}

// TestLoadColumns checks that the load measured at each P reaches the
// table: "-" where others was not measured.
func TestLoadColumns(t *testing.T) {
	t.Parallel()
	points, err := Factor(recorded)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range recorded.Runs {
		if p := points[i]; !(p.Others == m.Others || math.IsNaN(p.Others) && math.IsNaN(m.Others)) || p.Wait != m.Wait {
			t.Errorf("P=%d: others %g, wait %g; want the measurement's %g and %g", m.Procs, p.Others, p.Wait, m.Others, m.Wait)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, points); err != nil {
		t.Fatal(err)
	}
	row := strings.Fields(strings.Split(buf.String(), "\n")[2]) // P=2
	if got := strings.Join(row[len(row)-2:], " "); got != "- 0.010" {
		t.Errorf("P=2's others and wait %q, want \"- 0.010\"", got)
	}
}
