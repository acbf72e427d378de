package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/spanvet"
)

// tool is the vet tool built once for the tests that run it.
var tool string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "spanvet")
	if err != nil {
		panic(err)
	}
	tool = filepath.Join(dir, "spanvet")
	out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput()
	code := 2
	if err != nil {
		os.Stderr.Write(out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// mistakes copies testdata/mistakes, a module with one instance of each
// diagnostic, to a temporary directory (the -fix test rewrites it).
func mistakes(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "mistakes.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mistakes", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), errb.String(), code
}

// want is the diagnostic each analyzer reports on testdata/mistakes.
var want = map[string]string{
	"missingdone": "mistakes.go:26:5: goroutine spawned at mistakes.go:23 returns here without calling wg.Done()",
	"waitcycle":   "mistakes.go:49:2: c.Walk spawned onto wg at mistakes.go:47 waits on wg",
	"finegrain":   "mistakes.go:56:3: wg.Go per loop iteration for a tiny body",
	"emptywait":   "mistakes.go:75:2: wg.Wait waits for nothing",
}

func TestGoVet(t *testing.T) {
	t.Parallel()
	dir := mistakes(t)
	_, stderr, code := run(t, dir, "go", "vet", "-vettool="+tool, "./...")
	if code == 0 {
		t.Errorf("go vet exited 0, want failure; stderr:\n%s", stderr)
	}
	for name, msg := range want {
		if !strings.Contains(stderr, msg) {
			t.Errorf("go vet output lacks %s's %q:\n%s", name, msg, stderr)
		}
	}
	diags := 0
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(line, "mistakes.go:") && !strings.HasPrefix(line, "#") {
			diags++
		}
	}
	if diags != len(want) {
		t.Errorf("go vet reported %d diagnostics, want %d:\n%s", diags, len(want), stderr)
	}

	// One analyzer can be turned off, as with any vet tool.
	_, stderr, _ = run(t, dir, "go", "vet", "-vettool="+tool, "-finegrain=false", "./...")
	if strings.Contains(stderr, want["finegrain"]) || !strings.Contains(stderr, want["missingdone"]) {
		t.Errorf("with -finegrain=false, output:\n%s", stderr)
	}
}

func TestStandaloneJSON(t *testing.T) {
	t.Parallel()
	dir := mistakes(t)
	stdout, stderr, code := run(t, dir, tool, "-json", "./...")
	if code != 0 {
		t.Fatalf("spanvet -json exited %d: %s", code, stderr)
	}
	type diag struct {
		Posn    string `json:"posn"`
		Message string `json:"message"`
	}
	var out map[string]map[string][]diag
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("decoding %q: %v", stdout, err)
	}
	byAnalyzer := out["example.com/mistakes"]
	var names []string
	for name, ds := range byAnalyzer {
		names = append(names, name)
		if len(ds) != 1 {
			t.Errorf("%s: %d diagnostics, want 1: %v", name, len(ds), ds)
			continue
		}
		got := filepath.Base(ds[0].Posn) + ": " + ds[0].Message
		if !strings.HasPrefix(got, want[name]) {
			t.Errorf("%s: got %q, want prefix %q", name, got, want[name])
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"emptywait", "finegrain", "missingdone", "waitcycle"}) {
		t.Errorf("analyzers reporting = %v", names)
	}
}

func TestStandaloneFix(t *testing.T) {
	t.Parallel()
	dir := mistakes(t)
	if _, stderr, code := run(t, dir, tool, "-fix", "./..."); code != 0 && code != 3 {
		t.Fatalf("spanvet -fix exited %d: %s", code, stderr)
	}
	src, err := os.ReadFile(filepath.Join(dir, "mistakes.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "go func() {\n\t\t\tdefer wg.Done()\n\t\t\tn, err := fetch(u)") {
		t.Errorf("missingdone's fix was not applied:\n%s", src)
	}
	// The fixed module still builds, and missingdone is quiet on it.
	if _, stderr, code := run(t, dir, "go", "build", "./..."); code != 0 {
		t.Fatalf("fixed module does not build: %s", stderr)
	}
	_, stderr, _ := run(t, dir, tool, "./...")
	if strings.Contains(stderr, "without calling wg.Done") || !strings.Contains(stderr, "waits for nothing") {
		t.Errorf("after -fix, output:\n%s", stderr)
	}
}

// TestGoFix applies the fixes through go fix, as a -fixtool.
func TestGoFix(t *testing.T) {
	t.Parallel()
	dir := mistakes(t)
	if _, stderr, code := run(t, dir, "go", "fix", "-fixtool="+tool, "./..."); code != 0 {
		t.Fatalf("go fix exited %d: %s", code, stderr)
	}
	src, err := os.ReadFile(filepath.Join(dir, "mistakes.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "go func() {\n\t\t\tdefer wg.Done()\n") {
		t.Errorf("go fix did not apply missingdone's fix:\n%s", src)
	}
}

// TestNoFalsePositivesSync runs the analyzers over golang.org/x/sync, tests
// included, from the module cache: idiomatic fork/join code that must
// produce no diagnostic.
func TestNoFalsePositivesSync(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: "..", Tests: true}
	pkgs, err := packages.Load(cfg, "golang.org/x/sync/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 4 {
		t.Fatalf("loaded %d packages of golang.org/x/sync, want at least 4", len(pkgs))
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
	})
	analyzers := append([]*analysis.Analyzer{forkjoin.Analyzer}, spanvet.Analyzers()...)
	g, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Justified diagnostics, by "file:line: message" prefix; none so far.
	justified := map[string]string{}
	spawns := 0
	for act := range g.All() {
		if act.Err != nil {
			t.Errorf("%s: %v", act, act.Err)
			continue
		}
		if act.Analyzer == forkjoin.Analyzer && slices.Contains(g.Roots, act) {
			spawns += len(act.Result.(*forkjoin.Result).Spawns)
		}
		if !slices.Contains(g.Roots, act) {
			continue
		}
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			key := filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line) + ": " + d.Message
			if why, ok := justified[key]; ok {
				t.Logf("justified: %s (%s)", key, why)
				continue
			}
			t.Errorf("%s: %s: %s", act.Analyzer.Name, p, d.Message)
		}
	}
	if spawns < 20 {
		t.Errorf("forkjoin found %d spawns in golang.org/x/sync, want at least 20: is it recognising them?", spawns)
	}
}

// TestNoFalsePositivesExamples runs the built tool through go vet over this
// repository's examples, the fork/join programs the profiler is shown on.
func TestNoFalsePositivesExamples(t *testing.T) {
	t.Parallel()
	matches, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.go"))
	if len(matches) == 0 {
		t.Skip("no examples yet")
	}
	stdout, stderr, code := run(t, "..", "go", "vet", "-vettool="+tool, "./examples/...")
	if code != 0 || strings.TrimSpace(stdout+stderr) != "" {
		t.Errorf("go vet -vettool over ./examples/... exited %d:\n%s%s", code, stdout, stderr)
	}
}
