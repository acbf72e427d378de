package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/perf"
)

// refused checks a command that must fail before anything is loaded: exit
// status 2, nothing on stdout, one line on stderr containing every string
// of want.
func refused(t *testing.T, args []string, code int, stdout, stderr string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	ok := code == exitUsage && stdout == "" && len(lines) == 1 && strings.HasPrefix(lines[0], "spanprof: ")
	for _, w := range want {
		ok = ok && strings.Contains(lines[0], w)
	}
	if !ok {
		t.Errorf("spanprof %s: status %d, stdout %q, stderr %q; want status 2 and one line on stderr with %q",
			strings.Join(args, " "), code, stdout, stderr, want)
	}
}

// nothingBuilt runs f and checks that it neither loaded nor rewrote a
// package (instrumented was not called) nor made a temporary directory
// (TMPDIR stays empty: no spanprof-build-*).
func nothingBuilt(t *testing.T, f func()) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	before := instrumentedCalls.Load()
	f()
	if n := instrumentedCalls.Load() - before; n != 0 {
		t.Errorf("instrumented was called %d times, want 0: the command loaded the program before refusing", n)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the command left %v in TMPDIR, want nothing", names)
	}
}

// failingOpener makes every measure fail to open, as a counter fails on a
// machine without one, and counts the calls.
func failingOpener(t *testing.T) *int {
	t.Helper()
	calls := 0
	old := openMeasure
	openMeasure = func(name string) (perf.Measure, error) {
		calls++
		return nil, &perf.OpenError{Measure: name, Cause: "injected by the test (ENOENT)", Fallback: "use -measure clock", Err: errors.New("injected")}
	}
	t.Cleanup(func() { openMeasure = old })
	return &calls
}

// TestFailFastMeasure makes every measure fail to open through the test
// hook, so that it runs on any machine: run, test and build refuse with
// perf's one-line message and status 2 before loading the program, and
// leave a profile already at -o as it was.
func TestFailFastMeasure(t *testing.T) {
	calls := failingOpener(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "old.pb.gz")
	if err := os.WriteFile(out, []byte("an earlier profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := perf.Names()[len(perf.Names())-1]
	for _, args := range [][]string{
		{"run", "-measure", m, "-o", out, dir},
		{"test", "-measure", m, "-o", out, dir},
		{"build", "-measure", m, "-o", filepath.Join(dir, "bin"), dir},
	} {
		*calls = 0
		nothingBuilt(t, func() {
			code, stdout, stderr := spanprof(args...)
			refused(t, args, code, stdout, stderr, "perf: cannot open "+m+" counter: injected by the test", "use -measure clock")
		})
		if *calls != 1 {
			t.Errorf("spanprof %s opened the measure %d times, want 1", strings.Join(args, " "), *calls)
		}
	}
	// Without -measure, run and test probe $SPANPROF_MEASURE, then the
	// default; build, whose binary opens its measure where it runs, does
	// not probe the default.
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"", "the default measure " + perf.Default() + ": perf: cannot open"},
		{m, "SPANPROF_MEASURE=" + m + ": perf: cannot open " + m},
	} {
		nothingBuilt(t, func() {
			t.Setenv("SPANPROF_MEASURE", tc.env)
			args := []string{"run", "-o", out, dir}
			code, stdout, stderr := spanprof(args...)
			refused(t, args, code, stdout, stderr, tc.want)
		})
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "an earlier profile" {
		t.Errorf("the profile at -o was touched: %q, %v", data, err)
	}
	// -mode elision opens no measure: nothing to probe.
	*calls = 0
	if err := preflight(&profFlags{mode: "elision", measure: m}, filepath.Join(dir, "no", "such", "x.pb.gz")); err != nil || *calls != 0 {
		t.Errorf("-mode elision: the checks refused (%v) or probed the measure (%d): want neither", err, *calls)
	}
}

// unwritableDir returns a directory in which no file can be created, even
// by root, or "" if there is none on this machine.
func unwritableDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	candidates := []string{dir}
	if runtime.GOOS == "linux" {
		candidates = append(candidates, "/sys") // sysfs takes no new file, from root either
	}
	for _, d := range candidates {
		f, err := os.CreateTemp(d, "probe-")
		if err != nil {
			return d
		}
		f.Close()
		os.Remove(f.Name())
	}
	return ""
}

// TestFailFastOut gives -o values where no file can be written: run, test
// and build refuse before loading the program, naming the problem.
func TestFailFastOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such")
	type outCase struct {
		out  string
		want string
	}
	cases := []outCase{
		{filepath.Join(missing, "x.pb.gz"), "directory " + missing + " does not exist"},
		{dir, "-o " + dir + " is a directory"},
		{filepath.Join(file, "x.pb.gz"), file + " is not a directory"},
	}
	if ro := unwritableDir(t); ro != "" {
		cases = append(cases, outCase{filepath.Join(ro, "x.pb.gz"), "cannot create a file in " + ro})
	} else {
		t.Log("no unwritable directory here: that case is left out")
	}
	for _, cmd := range []string{"run", "test", "build"} {
		for _, tc := range cases {
			if cmd == "build" && tc.out == dir {
				continue // go build writes into a directory -o: allowed
			}
			args := []string{cmd, "-measure", perf.Clock, "-o", tc.out, dir}
			nothingBuilt(t, func() {
				code, stdout, stderr := spanprof(args...)
				refused(t, args, code, stdout, stderr, tc.want)
			})
		}
	}
	// No probe file is left behind where the check succeeded.
	code, _, _ := spanprof("build", "-o", dir, filepath.Join(dir, "no-such-package"))
	if entries, _ := os.ReadDir(dir); code != exitUsage || len(entries) != 1 {
		t.Errorf("build -o DIR of a missing package: status %d, %d files in DIR; want 2 and only the test's own", code, len(entries))
	}
}

// TestFailFastMeasureHere runs spanprof run and test as a user would, with
// a measure that does not open on this machine (a hardware counter in a
// VM, say): status 2, perf's line alone, and under test no "FAIL".
func TestFailFastMeasureHere(t *testing.T) {
	needGo(t)
	t.Parallel()
	var bad string
	for _, name := range perf.Names() {
		if probeMeasure(name) != nil {
			bad = name
			break
		}
	}
	if bad == "" {
		t.Skip("every measure opens on this machine; TestFailFastMeasure covers the refusal with an injected failure")
	}
	dir := module(t, map[string]string{"main.go": burnMain})
	tmp := t.TempDir()
	env := append(slices.Clone(offline), "TMPDIR="+tmp)
	for _, args := range [][]string{
		{"run", "-measure", bad, "."},
		{"test", "-measure", bad, "."},
	} {
		code, stdout, stderr := spanprofIn(t, dir, env, args...)
		refused(t, args, code, stdout, stderr, "perf: cannot open "+bad)
		if strings.Contains(stdout+stderr, "FAIL") {
			t.Errorf("spanprof %s says FAIL", strings.Join(args, " "))
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("%d entries in TMPDIR (%s...): something was built", len(entries), entries[0].Name())
	}
}

// TestRunStartRefused makes the instrumented program refuse to start (a
// bad $SPANPROF_BURDEN, which run passes on): run exits with status 2 and
// the runtime's line last, not 1 with "no profile" and the program's
// failure.
func TestRunStartRefused(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": burnMain})
	code, _, stderr := spanprofIn(t, dir, append(slices.Clone(offline), "SPANPROF_BURDEN=soon"), "run", ".")
	if code != exitUsage || lastLine(stderr) != `spanprof: SPANPROF_BURDEN="soon" is not a duration such as 2us` ||
		strings.Contains(stderr, "no profile") || strings.Contains(stderr, "exit status") {
		t.Errorf("spanprof run with SPANPROF_BURDEN=soon: status %d, stderr\n%s\nwant status 2 and the runtime's line last", code, stderr)
	}
}

func TestStartRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code int
		last string
		want bool
	}{
		{2, "perf: cannot open instructions counter: hardware counters are not supported on this machine (ENOENT); use -measure cpu (the default) or task-clock", true},
		{2, `spanprof: SPANPROF_BURDEN="x" is not a duration such as 2us`, true},
		{2, "spanprof: can't write /x/p.pb.gz: open /x/p.pb.gz: no such file or directory", true},
		{2, "  -n int", false}, // the flag package's usage, after a bad flag
		{2, "goroutine 1 [running]:", false},
		{1, "perf: cannot open cycles counter: ...", false},
		{3, "spanprof: ...", false},
	} {
		if got := startRefused(tc.code, tc.last); got != tc.want {
			t.Errorf("startRefused(%d, %q) = %v, want %v", tc.code, tc.last, got, tc.want)
		}
	}
	var sink bytes.Buffer
	w := &tailWriter{w: &sink}
	w.Write([]byte("first\nsecond line"))
	w.Write([]byte(" continued\n\n"))
	w.Write(bytes.Repeat([]byte("x"), 3*tailMax))
	w.Write([]byte("\nlast\n"))
	if got := w.lastLine(); got != "last" || sink.Len() != len("first\nsecond line continued\n\n")+3*tailMax+len("\nlast\n") {
		t.Errorf("tailWriter: last line %q, %d bytes through; want \"last\" and every byte", got, sink.Len())
	}
}

// TestMeasureHelp checks that the help of run (which test's and build's
// refer to) lists the measures of perf.Names and the defaults perf.Default
// can return, and that the -h of run, test and build names this system's
// default.
func TestMeasureHelp(t *testing.T) {
	t.Parallel()
	_, help, _ := spanprof("help", "run")
	// The help text is the same on every system (doc.go is generated from
	// it), so it names both of perf.Default's answers.
	for _, want := range []string{
		"-measure " + strings.Join(perf.Names(), "|"),
		"(default " + perf.CPU + ", or " + perf.Clock + " where",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("spanprof help run lacks %q", want)
		}
	}
	if d := perf.Default(); d != perf.CPU && d != perf.Clock {
		t.Errorf("perf.Default() = %q; the help of run names cpu, or clock where there is no thread CPU clock", d)
	}
	for _, cmd := range []string{"run", "test", "build"} {
		_, flags, _ := spanprof(cmd, "-h")
		if want := orList(perf.Names()) + " (default " + perf.Default() + "; clock in parallel mode)"; !strings.Contains(strings.Join(strings.Fields(flags), " "), want) {
			t.Errorf("spanprof %s -h lacks %q:\n%s", cmd, want, flags)
		}
	}
	for _, name := range perf.Names() {
		if code, _, stderr := spanprof("run", "-measure", name+"x", "."); code != exitUsage || !strings.Contains(stderr, strings.Join(perf.Names(), ", ")) {
			t.Errorf("run -measure %sx: status %d, stderr %q; want 2 and the list of measures", name, code, stderr)
		}
	}
}
