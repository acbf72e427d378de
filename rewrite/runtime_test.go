package rewrite

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/spanprof/spanprof/rewrite/internal/runtimemod"
)

// TestRuntimeModUpToDate checks that runtime.mod and runtime.sum are what
// mkruntime computes now (run "go generate" at the repository root when
// the runtime's requirements change).
func TestRuntimeModUpToDate(t *testing.T) {
	needGo(t)
	mod, sum, err := runtimemod.Generate(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"runtime.mod": mod, "runtime.sum": sum} {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run go generate at the repository root:\n%s", name, Diff(name, got, "want", want))
		}
	}
}

// TestRuntimeSource checks that the embedded runtime holds every file of
// every package of this module that the runtime imports, and that what
// Runtime writes builds as a module of its own, offline.
func TestRuntimeSource(t *testing.T) {
	needGo(t)
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if and .Module .Module.Main}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .SFiles}} {{.}}{{end}}{{end}}"}, runtimemod.Packages...)...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	files, err := runtimeFiles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rel, err := filepath.Rel(moduleRoot(t), fields[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields[1:] {
			n++
			if files[filepath.ToSlash(filepath.Join(rel, f))] == nil {
				t.Errorf("the embedded runtime lacks %s (add its directory to the go:embed line of spanprof.go)", filepath.Join(rel, f))
			}
		}
	}
	if n == 0 {
		t.Fatal("go list found no runtime files")
	}

	dir, err := Runtime()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Runtime()
	if err != nil || again != dir {
		t.Fatalf("Runtime() = %q, %v the second time, want %q", again, err, dir)
	}
	build := exec.Command("go", append([]string{"build"}, runtimemod.Packages...)...)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the runtime in %s does not build: %v\n%s", dir, err, out)
	}
}

// TestRequireRuntime checks the edits of a module's go.mod: the runtime
// required and replaced, its requirements added as indirect ones or
// raised, the go line raised to the runtime's, and nothing lowered.
func TestRequireRuntime(t *testing.T) {
	files, err := runtimeFiles()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := modfile.Parse("runtime.mod", files["go.mod"], nil)
	if err != nil {
		t.Fatal(err)
	}
	gomod := []byte("module example.com/m\n\ngo 1.21\n\nrequire golang.org/x/sys v0.99.0\n")
	mod, sum, err := requireRuntime(gomod, []byte("example.com/x v1.0.0 h1:abc=\n"), "/cache/rt")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", mod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Go.Version != rt.Go.Version {
		t.Errorf("go %s, want the runtime's %s", f.Go.Version, rt.Go.Version)
	}
	versions := make(map[string]string)
	for _, r := range f.Require {
		versions[r.Mod.Path] = r.Mod.Version
	}
	if versions[SpanprofModule] != RuntimeVersion {
		t.Errorf("spanprof required at %q, want %s", versions[SpanprofModule], RuntimeVersion)
	}
	if versions["golang.org/x/sys"] != "v0.99.0" {
		t.Errorf("golang.org/x/sys at %s, want v0.99.0 kept", versions["golang.org/x/sys"])
	}
	for _, r := range rt.Require {
		if versions[r.Mod.Path] == "" {
			t.Errorf("%s is not required", r.Mod.Path)
		}
	}
	if len(f.Replace) != 1 || f.Replace[0].Old.Path != SpanprofModule || f.Replace[0].New.Path != "/cache/rt" {
		t.Errorf("replace: %v", f.Replace)
	}
	if !bytes.HasPrefix(sum, []byte("example.com/x v1.0.0 h1:abc=\n")) || !bytes.Contains(sum, files["go.sum"][:bytes.IndexByte(files["go.sum"], '\n')+1]) {
		t.Errorf("go.sum:\n%s", sum)
	}
	// A second time changes nothing.
	mod2, sum2, err := requireRuntime(mod, sum, "/cache/rt")
	if err != nil || !bytes.Equal(mod2, mod) || !bytes.Equal(sum2, sum) {
		t.Errorf("requiring the runtime twice changes go.mod or go.sum (%v):\n%s", err, Diff("once", mod, "twice", mod2))
	}
}
