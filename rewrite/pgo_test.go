package rewrite

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildFlagsPGO: a build with the runtime's profile compiles the
// runtime's packages with it, the profile's name quoted for the go
// command's splitting where it must be.
func TestBuildFlagsPGO(t *testing.T) {
	gc := func(arg string) []string {
		return []string{"-overlay=o.json", "-gcflags=github.com/spanprof/spanprof/shadow=" + arg, "-gcflags=github.com/spanprof/spanprof/perf=" + arg}
	}
	for _, c := range []struct {
		pgo  string
		want []string
	}{
		{"", []string{"-overlay=o.json"}},
		{"/cache/rt/shadow/engine.pgo", gc("-pgoprofile=/cache/rt/shadow/engine.pgo")},
		{"/my cache/engine.pgo", gc("'-pgoprofile=/my cache/engine.pgo'")},
		{"/it's/engine.pgo", gc(`"-pgoprofile=/it's/engine.pgo"`)},
		{`/it's "x"/engine.pgo`, []string{"-overlay=o.json"}},
	} {
		b := &Build{Overlay: "o.json", PGO: c.pgo}
		if got := b.Flags(); !slices.Equal(got, c.want) {
			t.Errorf("PGO %q: flags %q, want %q", c.pgo, got, c.want)
		}
	}
}

// TestEnginePGOFollowsItsContent: the profile the builds name changes its
// name when its content changes and keeps it when not. The go command's
// build cache keys on the flags, not on the file they name: under the
// profile's own name, a profile rewritten in place left the runtime
// compiled with the old one, and a file of garbage built from the cache.
func TestEnginePGOFollowsItsContent(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Unix
	t.Setenv("HOME", cache)           // on Darwin
	t.Setenv("LocalAppData", cache)   // on Windows
	root := t.TempDir()
	if got, err := EnginePGO(root); err != nil || got != "" {
		t.Fatalf("without a profile: %q, %v; want none", got, err)
	}
	src := filepath.Join(root, "shadow", "engine.pgo")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	use := func(content string) string {
		t.Helper()
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		name, err := EnginePGO(root)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(name); err != nil || string(got) != content {
			t.Fatalf("%s holds %q, %v; want %q", name, got, err, content)
		}
		if name == src || !strings.HasPrefix(name, cache) {
			t.Fatalf("EnginePGO named %s, want a copy in the cache %s", name, cache)
		}
		return name
	}
	a := use("profile A")
	b := use("profile B")
	if a == b {
		t.Errorf("two contents got one name, %s: a build would take the runtime compiled with the first from the cache", a)
	}
	if again := use("profile A"); again != a {
		t.Errorf("the same content got %s, then %s: the build cache would miss", a, again)
	}
}

// TestPGOReachesOnlyTheRuntime: the go command compiles the runtime's
// packages with the profile and nothing else, neither the program nor the
// standard library, whose code then compiles as the user builds it (and
// whose build cache holds); the embedded runtime carries the profile.
func TestPGOReachesOnlyTheRuntime(t *testing.T) {
	needGo(t)
	root := moduleRoot(t)
	pgo, err := EnginePGO(root)
	if err != nil {
		t.Fatal(err)
	}
	if pgo == "" {
		t.Fatal("the repository has no shadow/engine.pgo")
	}
	files, err := runtimeFiles()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(pgo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["shadow/engine.pgo"], want) {
		t.Error("the embedded runtime lacks shadow/engine.pgo, or holds another")
	}

	// A main package that imports the runtime, added by the overlay.
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport _ \"github.com/spanprof/spanprof/shadow\"\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	pkgDir := filepath.Join(root, "zz_pgo_test")
	ov, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	b := &Build{Overlay: overlay, PGO: pgo}
	cmd := exec.Command("go", append(append([]string{"build", "-a", "-n"}, b.Flags()...), "-o", os.DevNull, "./zz_pgo_test")...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -n: %v\n%s", err, out)
	}
	compiled := map[string]bool{} // package → compiled with the profile
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if i := slices.Index(fields, "-p"); i >= 0 && i+1 < len(fields) && strings.Contains(line, "/compile ") {
			compiled[fields[i+1]] = strings.Contains(line, "-pgoprofile=")
		}
	}
	for _, pkg := range PGOPackages {
		if on, ok := compiled[pkg]; !ok || !on {
			t.Errorf("%s: compiled %v, with the profile %v; want compiled with it", pkg, ok, on)
		}
	}
	for _, pkg := range []string{"main", "runtime", "fmt", "github.com/spanprof/spanprof/spanprofile"} {
		if on, ok := compiled[pkg]; !ok || on {
			t.Errorf("%s: compiled %v, with the profile %v; want compiled without it", pkg, ok, on)
		}
	}
}
