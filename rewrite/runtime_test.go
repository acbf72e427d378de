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

// TestWorkspace checks the go.work that builds a module with the runtime:
// the module's go.mod untouched, its go line kept as its language version,
// the workspace's raised to the runtime's with the module's GODEBUG
// defaults kept, and a user's go.work kept, with the runtime added.
func TestWorkspace(t *testing.T) {
	files, err := runtimeFiles()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := modfile.Parse("runtime.mod", files["go.mod"], nil)
	if err != nil {
		t.Fatal(err)
	}
	gomod := []byte("module example.com/m\n\ngo 1.21\n\ntoolchain go1.99.1\n\ngodebug panicnil=1\n\nrequire golang.org/x/sys v0.99.0\n")
	work, err := workspace(gomod, ".", "./.spanprof/runtime", nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := modfile.ParseWork("go.work", work, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, work)
	}
	if w.Go == nil || w.Go.Version != rt.Go.Version {
		t.Errorf("go.work's go line %v, want the runtime's %s\n%s", w.Go, rt.Go.Version, work)
	}
	godebug := map[string]string{}
	for _, g := range w.Godebug {
		godebug[g.Key] = g.Value
	}
	if godebug["default"] != "go1.21" || godebug["panicnil"] != "1" {
		t.Errorf("godebug %v, want default=go1.21 (the module's defaults) and the module's panicnil=1\n%s", godebug, work)
	}
	if w.Toolchain == nil || w.Toolchain.Name != "go1.99.1" {
		t.Errorf("toolchain %v, want the module's go1.99.1", w.Toolchain)
	}
	var uses []string
	for _, u := range w.Use {
		uses = append(uses, u.Path)
	}
	if strings.Join(uses, " ") != ". ./.spanprof/runtime" {
		t.Errorf("use %v, want the module and the runtime, relative", uses)
	}
	// Again changes nothing.
	if again, err := workspace(gomod, ".", "./.spanprof/runtime", work); err != nil || !bytes.Equal(again, work) {
		t.Errorf("a second time (%v):\n%s", err, Diff("once", work, "twice", again))
	}

	// A module as new as the runtime needs no godebug line.
	newer := []byte("module example.com/m\n\ngo 9.1\n")
	if work, err := workspace(newer, "/m", "/rt", nil); err != nil || bytes.Contains(work, []byte("godebug")) || !bytes.Contains(work, []byte("go 9.1\n")) {
		t.Errorf("go 9.1 module (%v):\n%s", err, work)
	}

	// A user's go.work keeps what it says; its go line's GODEBUG defaults
	// stay.
	user := []byte("go 1.22\n\nuse (\n\t.\n\t../other\n)\n\nreplace example.com/x => ../x\n")
	work, err = workspace(gomod, ".", "./.spanprof/runtime", user)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\t../other\n", "\t./.spanprof/runtime\n", "replace example.com/x => ../x", "godebug default=go1.22", "go " + rt.Go.Version + "\n"} {
		if !bytes.Contains(work, []byte(want)) {
			t.Errorf("the user's go.work with the runtime lacks %q:\n%s", want, work)
		}
	}
}

// TestWorkEnv checks that a workspace build drops -mod from GOFLAGS.
func TestWorkEnv(t *testing.T) {
	env := WorkEnv([]string{"A=1", "GOFLAGS=-mod=mod -tags=x", "GOWORK=/u/go.work"}, "/tmp/b/go.work")
	if strings.Join(env, ";") != "A=1;GOFLAGS=-tags=x;GOWORK=/tmp/b/go.work" {
		t.Errorf("WorkEnv = %q", env)
	}
	env = WorkEnv([]string{"GOFLAGS=-mod=mod"}, "off")
	if strings.Join(env, ";") != "GOFLAGS=-mod=mod;GOWORK=off" {
		t.Errorf("WorkEnv off = %q", env)
	}
}

// TestUserWorkspace: a module in a workspace above it gets, at its root, a
// go.work that keeps that workspace, its paths relative to the module.
func TestUserWorkspace(t *testing.T) {
	t.Setenv("GOWORK", "")
	ws := t.TempDir()
	root := filepath.Join(ws, "a")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "go.work"), []byte("go 1.24\n\nuse (\n\t./a\n\t./b\n)\n\nreplace example.com/x => ./x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, atRoot, err := userWorkspace(root)
	if err != nil || atRoot {
		t.Fatalf("userWorkspace: %v, at root %v", err, atRoot)
	}
	for _, want := range []string{"go 1.24\n", "\t.\n", "\t../b\n", "replace example.com/x => ../x"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the workspace above, seen from the module, lacks %q:\n%s", want, data)
		}
	}
	// One at the root is the one.
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.25\n\nuse .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, atRoot, err := userWorkspace(root); err != nil || !atRoot || string(data) != "go 1.25\n\nuse .\n" {
		t.Errorf("userWorkspace with a go.work at the root: %q, %v, %v", data, atRoot, err)
	}
}
