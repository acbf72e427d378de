package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

// spanprof runs the command line args and returns its exit status, standard
// output and standard error.
func spanprof(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// profileFile writes the test profile to a temporary file.
func profileFile(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "spanprof.pb.gz")
	if err := spanprofile.WriteFile(name, spanprofiletest.Profile()); err != nil {
		t.Fatal(err)
	}
	return name
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestUsage(t *testing.T) {
	t.Parallel()
	names := []string{"run", "test", "build", "trace", "report", "rewrite", "speedup", "help"}
	for _, tc := range []struct {
		args       []string
		code       int
		out, error string // substrings of stdout and stderr's first line
	}{
		{nil, exitUsage, "", "spanprof measures"},
		{[]string{"help"}, exitOK, "spanprof help <command>", ""},
		{[]string{"-h"}, exitOK, "The commands are:", ""},
		{[]string{"frob"}, exitUsage, "", `spanprof: unknown command "frob" (commands: ` + strings.Join(names, ", ") + ")"},
		{[]string{"help", "frob"}, exitUsage, "", `spanprof: unknown help topic "frob"`},
		{[]string{"help", "report", "run"}, exitUsage, "", "spanprof: help takes at most one command"},
		{[]string{"help", "report"}, exitOK, "usage: spanprof report [-format text|csv|json|html] [-sort KEY] [-top N] [-wide] [-source-url URL] FILE", ""},
		{[]string{"help", "help"}, exitOK, "usage: spanprof help [COMMAND]", ""},
	} {
		code, stdout, stderr := spanprof(tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(firstLine(stderr), tc.error) {
			t.Errorf("spanprof %s: status %d, stdout %q, stderr %q; want status %d, stdout with %q, stderr with %q",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.out, tc.error)
		}
	}
	// The command list names every command.
	_, stdout, _ := spanprof("help")
	for _, name := range names {
		if !strings.Contains(stdout, "\t"+name+" ") {
			t.Errorf("spanprof help does not list %s:\n%s", name, stdout)
		}
	}
	// Help for report documents every sort key.
	_, stdout, _ = spanprof("help", "report")
	for _, key := range report.SortKeyNames() {
		if !strings.Contains(stdout, "\t\t"+key+" ") {
			t.Errorf("spanprof help report does not document sort key %s", key)
		}
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	file := profileFile(t)
	p := spanprofiletest.Profile()
	for _, tc := range []struct {
		args []string
		opts report.Options
		fmt  string
	}{
		{nil, report.Options{}, "text"},
		{[]string{"-format", "text"}, report.Options{}, "text"},
		{[]string{"-wide", "-sort", "work"}, report.Options{Wide: true, Sort: "work"}, "text"},
		{[]string{"-format=csv", "-top=2"}, report.Options{Top: 2}, "csv"},
		{[]string{"-format", "json", "-sort", "work"}, report.Options{Sort: "work"}, "json"},
		{[]string{"-format", "html", "-sort", "site", "-top", "1"}, report.Options{Sort: "site", Top: 1, SourceURL: dirURL()}, "html"},
		{[]string{"-format", "html", "-source-url", "https://git.invalid/org/repo/blob/main/"}, report.Options{SourceURL: "https://git.invalid/org/repo/blob/main/"}, "html"},
	} {
		if tc.fmt == "html" && !strings.HasPrefix(tc.opts.SourceURL, "file:///") && !strings.HasPrefix(tc.opts.SourceURL, "https:") {
			t.Errorf("the default -source-url %q is not a file:// URL", tc.opts.SourceURL)
		}
		args := append(append([]string{"report"}, tc.args...), file)
		code, stdout, stderr := spanprof(args...)
		var want bytes.Buffer
		if err := report.Write(&want, tc.fmt, p, tc.opts); err != nil {
			t.Fatal(err)
		}
		if code != exitOK || stderr != "" || stdout != want.String() {
			t.Errorf("spanprof %s: status %d, stderr %q; stdout equal to report.Write: %v", strings.Join(args, " "), code, stderr, stdout == want.String())
		}
	}

	// The JSON has the contract's top-level fields.
	_, stdout, _ := spanprof("report", "-format", "json", file)
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("report -format json: %v", err)
	}
	if got["work"] != float64(p.Work) || len(got["sites"].([]any)) != 7 {
		t.Errorf("report -format json: work %v, %d sites; want %d, 7", got["work"], len(got["sites"].([]any)), p.Work)
	}
}

// cpuProfile writes a CPU profile, as runtime/pprof does, to a temporary
// file. Nothing else in this package's tests profiles the CPU.
func cpuProfile(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatal(err)
	}
	pprof.StopCPUProfile()
	name := filepath.Join(t.TempDir(), "cpu.pprof")
	if err := os.WriteFile(name, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestReportErrors(t *testing.T) {
	file := profileFile(t)
	cpu := cpuProfile(t)
	corrupt := filepath.Join(t.TempDir(), "corrupt.pb.gz")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corrupt, data[:len(data)/2], 0o666); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pb.gz")

	for _, tc := range []struct {
		args []string
		want string // stderr's first line starts with it
	}{
		{[]string{}, "spanprof: report takes one FILE, got 0 arguments"},
		{[]string{file, file}, "spanprof: report takes one FILE, got 2 arguments"},
		{[]string{"-format", "xml", file}, `spanprof: unknown -format "xml" (valid: text, csv, json, html)`},
		{[]string{"-sort", "bogus", file}, `spanprof: unknown -sort key "bogus" (valid: ` + strings.Join(report.SortKeyNames(), ", ") + ")"},
		{[]string{"-top", "-1", file}, "spanprof: -top -1: want 0 (all) or more"},
		{[]string{"-top", "x", file}, `spanprof: report: invalid value "x" for flag -top`},
		{[]string{"-bogus", file}, "spanprof: report: flag provided but not defined: -bogus"},
		{[]string{missing}, "spanprof: open " + missing + ": no such file or directory"},
		{[]string{cpu}, "spanprof: " + cpu + " is not a span profile: no spanprof.v1 comment"},
		{[]string{corrupt}, "spanprof: " + corrupt + " is not a span profile: decompressing profile"},
	} {
		code, stdout, stderr := spanprof(append([]string{"report"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(firstLine(stderr), tc.want) {
			t.Errorf("spanprof report %s: status %d, stdout %q, stderr %q; want status 2, no output, stderr starting %q",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}

	code, stdout, stderr := spanprof("report", "-h")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: spanprof report") || !strings.Contains(stdout, "-sort key") {
		t.Errorf("spanprof report -h: status %d, stdout %q, stderr %q; want 0 and the usage with flags", code, stdout, stderr)
	}
}
