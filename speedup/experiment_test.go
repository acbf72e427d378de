package speedup

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// experiment returns an Experiment of testdata/idle whose instrumented
// build fails, and the progress lines and warnings it will record.
func experiment(t *testing.T, args ...string) (*Experiment, *[]string, *[]error) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	var progress []string
	var warnings []error
	dir := t.TempDir()
	return &Experiment{
		Pkg: "./testdata/idle", Name: "speedup/testdata/idle", Args: args,
		Procs: []int{1, 2}, Runs: 1,
		Dir:         dir,
		Instrument:  func(string) error { return errors.New("not instrumented here") },
		ProfileFile: filepath.Join(dir, "profile.pb.gz"),
		Progress:    func(msg string) { progress = append(progress, msg) },
		Warn:        func(err error) { warnings = append(warnings, err) },
	}, &progress, &warnings
}

func TestExperimentWithoutInstrumentation(t *testing.T) {
	t.Parallel()
	e, progress, warnings := experiment(t, "-spin", "20ms")
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 || res.Points[0].Procs != 1 || res.Points[1].Procs != 2 {
		t.Errorf("points %+v, want one at P=1 and one at P=2", res.Points)
	}
	if res.Input.Elision != 0 || res.Input.Profile != nil || res.Input.Serial != res.Input.One {
		t.Errorf("input %+v: want no elision, no profile and T_s = T_1", res.Input)
	}
	for _, want := range []string{"building speedup/testdata/idle", "P=1 run 1/1", "P=2 run 1/1", "no serial elision and no bounds: not instrumented here"} {
		if !slices.Contains(*progress, want) {
			t.Errorf("progress %q, want %q in it", *progress, want)
		}
	}
	if len(*warnings) > 0 {
		t.Errorf("warnings %v, want none", *warnings)
	}
}

func TestExperimentErrors(t *testing.T) {
	t.Parallel()
	e, _, _ := experiment(t, "-no-such-flag")
	_, err := e.Run()
	var run *RunError
	if !errors.As(err, &run) || !strings.Contains(string(run.Stderr), "-no-such-flag") ||
		err.Error() != "speedup/testdata/idle failed at P=1 (run 1/1): exit status 2" {
		t.Errorf("a program that fails: error %v (%T), want a *RunError with its standard error", err, err)
	}

	e, _, _ = experiment(t)
	e.Pkg = "./testdata/no-such-package"
	_, err = e.Run()
	var build *BuildError
	if !errors.As(err, &build) || !strings.Contains(err.Error(), "no-such-package") {
		t.Errorf("a package that does not build: error %v (%T), want a *BuildError naming it", err, err)
	}
}
