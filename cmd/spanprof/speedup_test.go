package main

import (
	"encoding/csv"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/speedup"
)

func TestSpeedupHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := spanprof("help", "speedup")
	if code != exitOK || !strings.HasPrefix(stdout, "usage: spanprof speedup [flags] [PKG] [-- ARGS...]") {
		t.Fatalf("spanprof help speedup: status %d, stdout %q", code, stdout)
	}
	var want []string
	for _, flag := range []string{"procs", "runs", "baseline-args", "baseline", "o", "burden"} {
		want = append(want, "\t-"+flag+" ")
	}
	want = append(want, speedup.Columns...)
	want = append(want, "linear", "elision", "maximal", "idle-specific", "inflation-specific", "actual",
		"speedup.csv", "speedup.svg", "speedup.png", "profile.pb.gz", "Exit status")
	for _, s := range want {
		if !strings.Contains(stdout, s) {
			t.Errorf("spanprof help speedup does not document %q", s)
		}
	}
	// -h lists the same flags.
	code, stdout, _ = spanprof("speedup", "-h")
	if code != exitOK || !strings.Contains(stdout, "-baseline-args args") || !strings.Contains(stdout, "-procs list") {
		t.Errorf("spanprof speedup -h: status %d, stdout %q", code, stdout)
	}
}

func TestSpeedupUsageErrors(t *testing.T) {
	t.Parallel()
	needGo(t)
	for _, tc := range []struct {
		args []string
		want string // in the first line of stderr
	}{
		{[]string{"-procs", "1,x"}, `-procs 1,x: "x" is not a processor count`},
		{[]string{"-procs", "0"}, `-procs 0: "0" is not a processor count`},
		{[]string{"-procs", "2,,4"}, `"" is not a processor count`},
		{[]string{"-procs", "-1"}, `"-1" is not a processor count`},
		{[]string{"-runs", "0"}, "-runs 0: want 1 or more"},
		{[]string{"-runs", "-2"}, "-runs -2: want 1 or more"},
		{[]string{"-runs", "many"}, `invalid value "many" for flag -runs`},
		{[]string{"-baseline", "true", "-baseline-args", "-serial"}, "give one"},
		{[]string{"-burden", "-1us"}, "-burden -1µs: want a duration of 0 or more"},
		{[]string{"-o", ""}, "-o: want a directory"},
		{[]string{"-frob"}, "flag provided but not defined: -frob"},
		{[]string{"a", "b"}, "speedup takes one package, got 2: a b"},
		{[]string{"-o", t.TempDir(), "../../speedup"}, "is not a main package"},
		{[]string{"-o", t.TempDir(), "./no/such/package"}, "no/such/package"},
		{[]string{"-baseline", "no-such-baseline-program -x", "../../examples/quicksort"}, `-baseline: exec: "no-such-baseline-program": executable file not found`},
	} {
		code, stdout, stderr := spanprof(append([]string{"speedup"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "spanprof: ") || !strings.Contains(firstLine(stderr), tc.want) {
			t.Errorf("spanprof speedup %s: status %d, stdout %q, stderr %q; want status 2 and a first line with %q",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
}

func TestSpeedupProgramFails(t *testing.T) {
	t.Parallel()
	needGo(t)
	for _, tc := range []struct {
		args []string
		want []string // in stderr
	}{
		{
			[]string{"-procs", "1", "-runs", "1", "-o", t.TempDir(), "../../examples/quicksort", "--", "-n", "-5"},
			[]string{"quicksort: -n -5: must not be negative", "spanprof: speedup: examples/quicksort failed at P=1 (run 1/1): exit status 1"},
		},
		{
			[]string{"-procs", "1", "-runs", "1", "-o", t.TempDir(), "-baseline", "false", "../../examples/quicksort"},
			[]string{"spanprof: speedup: the baseline false failed at baseline (run 1/1): exit status 1"},
		},
	} {
		code, stdout, stderr := spanprof(append([]string{"speedup"}, tc.args...)...)
		if code != exitFailed || stdout != "" {
			t.Errorf("spanprof speedup %s: status %d, stdout %q; want status 1 and no table", strings.Join(tc.args, " "), code, stdout)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("spanprof speedup %s: stderr %q, want %q in it", strings.Join(tc.args, " "), stderr, w)
			}
		}
	}
}

func TestSpeedupEndToEnd(t *testing.T) {
	needGo(t)
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"speedup", "-procs", "1,2", "-runs", "1", "-o", dir, "-baseline-args", "-serial", "../../examples/quicksort", "--", "-n", "200000"}
	code, stdout, stderr := spanprof(args...)
	if code != exitOK {
		t.Fatalf("spanprof %s: status %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	for _, s := range []string{"speedup: building examples/quicksort", "speedup: baseline run 1/1", "speedup: P=1 run 1/1", "speedup: P=2 run 1/1"} {
		if !strings.Contains(stderr, s+"\n") {
			t.Errorf("no progress line %q on stderr:\n%s", s, stderr)
		}
	}
	for _, s := range []string{"factored speedup of examples/quicksort -n 200000, 1 run", "T_s ", "the program with -serial", strings.Join(speedup.Columns, " ")} {
		if !strings.Contains(strings.Join(strings.Fields(stdout), " "), s) {
			t.Errorf("stdout has no %q:\n%s", s, stdout)
		}
	}

	// The CSV file: the header, one row per P, and the identities.
	f, err := os.Open(filepath.Join(dir, "speedup.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("speedup.csv does not parse: %v", err)
	}
	if got := strings.Join(recs[0], ","); got != strings.Join(speedup.Columns, ",") {
		t.Errorf("speedup.csv header %s, want %s", got, strings.Join(speedup.Columns, ","))
	}
	if len(recs) != 3 {
		t.Fatalf("speedup.csv has %d rows, want one per P (1, 2)", len(recs)-1)
	}
	col := make(map[string]int)
	for i, c := range recs[0] {
		col[c] = i
	}
	for i, rec := range recs[1:] {
		v := func(name string) float64 {
			x, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				t.Fatalf("row %d: %s = %q: %v", i, name, rec[col[name]], err)
			}
			return x
		}
		if p := v("procs"); p != float64(i+1) {
			t.Errorf("row %d: procs %g, want %d", i, p, i+1)
		}
		P := v("procs")
		for _, c := range []struct {
			what      string
			got, want float64
			tol       float64
		}{
			{"P·T_P = W_P + I_P", P * v("t_p"), v("work_p") + v("idle"), 3e-6},
			{"F_P = W_P − T_1", v("inflation"), v("work_p") - v("t_1"), 2e-6},
			{"linear = P", v("linear"), P, 0},
			{"actual = T_s/T_P", v("actual"), v("t_s") / v("t_p"), 1e-3},
			{"maximal = P·T_s/T_1", v("maximal"), P * v("t_s") / v("t_1"), 1e-3},
		} {
			if math.Abs(c.got-c.want) > c.tol*math.Max(1, math.Abs(c.want)) {
				t.Errorf("P=%g: %s: %g ≠ %g", P, c.what, c.got, c.want)
			}
		}
		if v("t_s") <= 0 || v("t_1") <= 0 || v("t_p") <= 0 || v("idle") < 0 {
			t.Errorf("P=%g: times %v, want positive times and idle ≥ 0", P, rec[1:5])
		}
		if P == 1 && v("t_p") != v("t_1") {
			t.Errorf("T_P at P=1 is %g, T_1 %g: want the same", v("t_p"), v("t_1"))
		}
		// The load of other processes and the program's wait: measured
		// (Linux), in seconds, and no more than the machine had.
		if _, err := os.Stat("/proc/stat"); err == nil {
			if o, w := v("others"), v("wait"); o < 0 || o > float64(runtime.NumCPU())*v("t_p")+0.1 || w < 0 {
				t.Errorf("P=%g: others %g s, wait %g s; want 0 ≤ others ≤ NumCPU·T_P and wait ≥ 0", P, o, w)
			}
		}
		// quicksort instruments, so the profile gives the bounds.
		if up, low := v("upper_bound"), v("lower_bound"); !(low > 0 && low <= up && up <= v("maximal")+1e-3) {
			t.Errorf("P=%g: bounds %g to %g, want 0 < lower ≤ upper ≤ maximal %g", P, low, up, v("maximal"))
		}
	}
	if _, err := spanprofile.ReadFile(filepath.Join(dir, "profile.pb.gz")); err != nil {
		t.Errorf("the span profile: %v", err)
	}
	// Whether this machine was busy is up to the machine; when it was,
	// one line says so, and the load is not called work inflation.
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "busy machine: ") && !strings.Contains(l, "re-measure on a quiet machine") {
			t.Errorf("the busy line does not say to re-measure: %q", l)
		}
	}
	if strings.Contains(stdout, "busy machine: ") && strings.Contains(strings.ToLower(stdout+stderr), "work inflation") {
		t.Errorf("on a busy machine the output calls the load work inflation:\n%s\n%s", stdout, stderr)
	}

	// The PNG decodes, at the documented size.
	pf, err := os.Open(filepath.Join(dir, "speedup.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("speedup.png does not decode: %v", err)
	}
	if w, h := speedup.PNGSize(); img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Errorf("speedup.png is %v, want %dx%d", img.Bounds().Size(), w, h)
	}

	// The SVG is well-formed XML, and names the program.
	sf, err := os.Open(filepath.Join(dir, "speedup.svg"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	d := xml.NewDecoder(sf)
	var text strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("speedup.svg is not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
		}
	}
	if !strings.Contains(text.String(), "Factored speedup of examples/quicksort -n 200000") {
		t.Errorf("speedup.svg has no title naming the program")
	}
}
