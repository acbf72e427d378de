package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	spanprof "github.com/spanprof/spanprof"
)

// RuntimeVersion is the version by which a rewritten module requires the
// runtime; a replace directive supplies its source.
const RuntimeVersion = "v0.0.0-00010101000000-000000000000"

// runtimeFiles returns the runtime's files as they go on disk: the
// packages' non-test Go and assembly files, and go.mod and go.sum.
func runtimeFiles() (map[string][]byte, error) {
	src := spanprof.RuntimeSource()
	files := make(map[string][]byte)
	err := fs.WalkDir(src, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, name)
		if err != nil {
			return err
		}
		switch {
		case name == "rewrite/runtime.mod":
			files["go.mod"] = data
		case name == "rewrite/runtime.sum":
			files["go.sum"] = data
		case strings.HasSuffix(name, "_test.go"):
		case strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".s"):
			files[name] = data
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if files["go.mod"] == nil || files["go.sum"] == nil {
		return nil, fmt.Errorf("the embedded runtime lacks its go.mod or go.sum")
	}
	return files, nil
}

// Runtime writes the runtime's source, the module that rewritten code
// requires, into the user's cache directory (once for each version of it)
// and returns that directory.
func Runtime() (string, error) {
	files, err := runtimeFiles()
	if err != nil {
		return "", err
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "spanprof")
	dir := filepath.Join(parent, "runtime-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("writing the spanprof runtime: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "tmp-")
	if err != nil {
		return "", fmt.Errorf("writing the spanprof runtime: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		name := filepath.Join(tmp, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(name, files[n], 0o444); err != nil {
			return "", fmt.Errorf("writing the spanprof runtime: %w", err)
		}
	}
	// Another process may have won the race; its copy is the same.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr != nil {
			return "", fmt.Errorf("writing the spanprof runtime: %w", err)
		}
	}
	return dir, nil
}

// requireRuntime returns the go.mod and go.sum of module m with the runtime
// required and replaced by runtimeDir, and the runtime's go.sum lines
// added. A module that requires spanprof already (for parlib) keeps its
// requirement, replaced all the same.
func requireRuntime(gomod, gosum []byte, runtimeDir string) ([]byte, []byte, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, nil, err
	}
	files, err := runtimeFiles()
	if err != nil {
		return nil, nil, err
	}
	rt, err := modfile.Parse("runtime.mod", files["go.mod"], nil)
	if err != nil {
		return nil, nil, err
	}
	// What the go command would add to go.mod in -mod=mod: a go line as
	// high as the runtime's, and its requirements, indirect.
	if f.Go == nil || version.Compare("go"+f.Go.Version, "go"+rt.Go.Version) < 0 {
		if err := f.AddGoStmt(rt.Go.Version); err != nil {
			return nil, nil, err
		}
	}
	for _, r := range rt.Require {
		i := slices.IndexFunc(f.Require, func(q *modfile.Require) bool { return q.Mod.Path == r.Mod.Path })
		switch {
		case i < 0:
			f.AddNewRequire(r.Mod.Path, r.Mod.Version, true)
		case semver.Compare(f.Require[i].Mod.Version, r.Mod.Version) < 0:
			if err := f.AddRequire(r.Mod.Path, r.Mod.Version); err != nil {
				return nil, nil, err
			}
		}
	}
	required := false
	for _, r := range f.Require {
		required = required || r.Mod.Path == SpanprofModule
	}
	if !required {
		if err := f.AddRequire(SpanprofModule, RuntimeVersion); err != nil {
			return nil, nil, err
		}
	}
	if err := f.AddReplace(SpanprofModule, "", runtimeDir, ""); err != nil {
		return nil, nil, err
	}
	f.Cleanup()
	mod, err := f.Format()
	if err != nil {
		return nil, nil, err
	}
	sum := append([]byte(nil), gosum...)
	if len(sum) > 0 && sum[len(sum)-1] != '\n' {
		sum = append(sum, '\n')
	}
	have := make(map[string]bool)
	for l := range bytes.Lines(gosum) {
		have[strings.TrimSpace(string(l))] = true
	}
	for l := range bytes.Lines(files["go.sum"]) {
		if s := strings.TrimSpace(string(l)); s != "" && !have[s] {
			sum = append(sum, s+"\n"...)
		}
	}
	return mod, sum, nil
}

// A Build is a temporary directory with what the go command needs to build
// rewritten code without touching the module: the rewritten and added files,
// an -overlay file naming them, and, unless the module is spanprof itself,
// a go.mod and go.sum for -modfile that require the runtime.
type Build struct {
	Dir     string // the temporary directory; the caller removes it
	Overlay string
	ModFile string // "" when the module is spanprof itself
}

// NewBuild writes res's files into a new temporary directory for a build
// of the program.
func NewBuild(prog *Program, res *Result) (*Build, error) {
	dir, err := os.MkdirTemp("", "spanprof-build-")
	if err != nil {
		return nil, err
	}
	b := &Build{Dir: dir}
	replace := make(map[string]string)
	for _, f := range res.Files {
		rel, err := filepath.Rel(prog.Module.Dir, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Join("_outside", filepath.Base(f.Path))
		}
		name := filepath.Join(dir, "src", rel)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return b, err
		}
		if err := os.WriteFile(name, f.New, 0o644); err != nil {
			return b, err
		}
		replace[f.Path] = name
	}
	ov, err := json.MarshalIndent(map[string]any{"Replace": replace}, "", "\t")
	if err != nil {
		return b, err
	}
	b.Overlay = filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(b.Overlay, ov, 0o644); err != nil {
		return b, err
	}
	if prog.Module.Path == SpanprofModule {
		return b, nil
	}
	rtDir, err := Runtime()
	if err != nil {
		return b, err
	}
	gomod, err := os.ReadFile(prog.Module.GoMod)
	if err != nil {
		return b, err
	}
	gosum, err := os.ReadFile(strings.TrimSuffix(prog.Module.GoMod, ".mod") + ".sum")
	if err != nil && !os.IsNotExist(err) {
		return b, err
	}
	mod, sum, err := requireRuntime(gomod, gosum, rtDir)
	if err != nil {
		return b, fmt.Errorf("%s: %w", prog.Module.GoMod, err)
	}
	b.ModFile = filepath.Join(dir, "go.mod")
	if err := os.WriteFile(b.ModFile, mod, 0o644); err != nil {
		return b, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return b, err
	}
	return b, nil
}

// Flags returns the go command's flags for the build: -overlay, and
// -modfile with -mod=mod, which lets the go command complete the
// temporary go.mod from the module cache.
func (b *Build) Flags() []string {
	flags := []string{"-overlay=" + b.Overlay}
	if b.ModFile != "" {
		flags = append(flags, "-modfile="+b.ModFile, "-mod=mod")
	}
	return flags
}
