package examples_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spanprof/spanprof/bench/suite"
	"github.com/spanprof/spanprof/spanprofile"
)

// TestSuite runs every ready example of suite.txt, the benchmark suite, on
// its small input three ways: as written, its -serial baseline, and profiled
// by spanprof run. Each must pass its own check (exit 0), and the profiled
// program must print what the program as written prints: profiling in serial
// mode runs the same computation, every spawn inline. The profile must parse
// and hold some work. `make bench` times the same programs on their default
// inputs; this test keeps it from finding a broken one after minutes of runs.
func TestSuite(t *testing.T) {
	examples, err := suite.ParseFile("suite.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		t.Run(e.Name, func(t *testing.T) {
			if e.Pending {
				t.Skipf("suite.txt:%d: its small input is still %s", e.Line, suite.Pending)
			}
			// As the acceptance tests do: each case builds an example
			// twice, which -short is for leaving out.
			if testing.Short() {
				t.Skip("builds and profiles an example")
			}
			t.Parallel() // separate directories; spanprofBin is only read
			dir := t.TempDir()
			bin := filepath.Join(dir, e.Name)
			if runtime.GOOS == "windows" {
				bin += ".exe"
			}
			if out, err := exec.Command("go", "build", "-o", bin, "./"+e.Name).CombinedOutput(); err != nil {
				t.Fatalf("go build ./%s: %v\n%s", e.Name, err, out)
			}
			want := runExample(t, bin, e.Args...)
			if len(bytes.TrimSpace(want)) == 0 {
				t.Errorf("%s %v printed nothing", e.Name, e.Args)
			}
			runExample(t, bin, append([]string{"-serial"}, e.Args...)...)

			prof := filepath.Join(dir, "profile.pb.gz")
			args := append([]string{"run", "-o", prof, "./" + e.Name, "--"}, e.Args...)
			cmd := exec.Command(spanprofBin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr // the summary; the program's output is on stdout
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("spanprof %v: %v\n%s", args, err, stderr.Bytes())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("profiled, %s printed %q; as written it printed %q", e.Name, got, want)
			}
			p, err := spanprofile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if p.Work <= 0 {
				t.Errorf("profile of %s: work %d, want some", e.Name, p.Work)
			}
		})
	}
}

// runExample runs an example's binary and returns its standard output,
// failing the test if it exits with a status other than 0 (its self-check).
func runExample(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, stderr.Bytes())
	}
	return out
}
