package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/bench/suite"
)

// The overlay must add runtime/trace to a main package that knows nothing of
// it, start tracing only when the variable names a file, and leave the
// package's directory as it was.
func TestTraceOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	pkg := t.TempDir()
	files := map[string]string{
		"go.mod": "module tracecheck\n\ngo 1.26\n",
		// It imports runtime/trace itself only to report whether
		// tracing is on; the overlay's file has its own imports.
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime/trace\"\n)\n\nfunc main() { fmt.Println(trace.IsEnabled()) }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scratch := t.TempDir()
	overlay, err := writeOverlay(scratch, pkg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(scratch, "traced")
	if err := goCommand(pkg, "go", "build", "-overlay", overlay, "-o", bin, "."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pkg, traceFileName)); !os.IsNotExist(err) {
		t.Errorf("the overlay's file exists in the package's directory: %v", err)
	}
	traceOut := filepath.Join(scratch, "trace.out")
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"", "false"},
		{traceEnv + "=" + traceOut, "true"},
	} {
		cmd := exec.Command(bin)
		cmd.Env = append(baseEnv(os.Environ()), tc.env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v", tc.env, bin, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("with %q in the environment, trace.IsEnabled() = %s, want %s", tc.env, got, tc.want)
		}
	}
	if _, err := os.Stat(traceOut); err != nil {
		t.Errorf("no trace file: %v", err)
	}
}

func TestChoose(t *testing.T) {
	list := []suite.Example{
		{Name: "quicksort", Args: []string{"-n", "10"}},
		{Name: "fft", Pending: true},
		{Name: "fib", Args: []string{"-n", "20"}},
		{Name: "matmul", Args: []string{"-n", "64"}},
	}
	names := func(es []suite.Example) []string {
		var s []string
		for _, e := range es {
			s = append(s, e.Name)
		}
		return s
	}
	for _, tc := range []struct {
		only    string
		want    []string
		wantErr string
	}{
		{"", []string{"quicksort", "fib", "matmul"}, ""},
		{"matmul,quicksort", []string{"quicksort", "matmul"}, ""}, // the list's order
		{"fib,heat", nil, `-only: "heat" is not in examples/suite.txt`},
		{"fft", nil, "-only: fft is not ready (its line in examples/suite.txt says TODO)"},
	} {
		got, err := choose(list, tc.only)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("choose(%q) error = %v, want %s", tc.only, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(names(got), tc.want) {
			t.Errorf("choose(%q) = %v, %v; want %v", tc.only, names(got), err, tc.want)
		}
	}
}

func TestBaseEnv(t *testing.T) {
	got := baseEnv([]string{"HOME=/h", "GOMAXPROCS=8", "SPANPROF_OUT=x", "SPANPROF_MODE=parallel", "GOGC=200", "MY_GOMAXPROCS=3"})
	if want := []string{"HOME=/h", "GOGC=200", "MY_GOMAXPROCS=3"}; !slices.Equal(got, want) {
		t.Errorf("baseEnv = %v, want %v", got, want)
	}
}

func TestLastLines(t *testing.T) {
	if got := string(lastLines([]byte("a\nb\nc\nd\n"), 2)); got != "...\nc\nd" {
		t.Errorf("lastLines(4 lines, 2) = %q", got)
	}
	if got := string(lastLines([]byte("one line\n"), 2)); got != "one line" {
		t.Errorf("lastLines(1 line, 2) = %q", got)
	}
}
