package rewrite

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	spanprof "github.com/spanprof/spanprof"
)

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
		case strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".s") || strings.HasSuffix(name, ".pgo"):
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
	parent := spanprofDir()
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

// RuntimeDir is where `spanprof rewrite -w` copies the runtime, relative to
// the module root: a module of its own, which the go.work that -w writes
// at the module root uses by that relative path, so that the rewritten tree
// builds with the plain go command on any machine and nothing in it names
// this one.
const RuntimeDir = BackupDir + "/runtime"

// modGo returns the go line of a go.mod (1.16 when it has none, as the go
// command assumes).
func modGo(f *modfile.File) string {
	if f.Go == nil {
		return "1.16"
	}
	return f.Go.Version
}

// workspace returns the go.work that builds the module with go.mod gomod,
// in directory modDir, against the runtime module in rtDir: base (a go.work
// of the user's, or nil) with both modules used.
//
// The runtime is not required from the module's own go.mod: the go command
// insists that a module's go line be at least its dependencies', so that
// would raise it to the runtime's, and with it the language the module's
// code is compiled as (before go 1.22 a for loop's variable is shared by
// its iterations) and its GODEBUG defaults. In a workspace every module is
// compiled with the go line of its own go.mod; only the workspace's must be
// as high as the runtime's, and a godebug default line keeps the GODEBUG
// defaults that the module's (or the user's workspace's) go line gives.
func workspace(gomod []byte, modDir, rtDir string, base []byte) ([]byte, error) {
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	files, err := runtimeFiles()
	if err != nil {
		return nil, err
	}
	rt, err := modfile.ParseLax("runtime.mod", files["go.mod"], nil)
	if err != nil {
		return nil, err
	}
	w, err := modfile.ParseWork("go.work", base, nil)
	if err != nil {
		return nil, err
	}
	old := modGo(mf)
	if base != nil && w.Go != nil {
		old = w.Go.Version
	}
	if base == nil {
		// The module's own godebug and toolchain lines, which a
		// workspace ignores in go.mod.
		for _, g := range mf.Godebug {
			if err := w.AddGodebug(g.Key, g.Value); err != nil {
				return nil, err
			}
		}
	}
	goVersion := old
	if version.Compare("go"+rt.Go.Version, "go"+goVersion) > 0 {
		goVersion = rt.Go.Version
	}
	if base == nil || goVersion != old {
		if err := w.AddGoStmt(goVersion); err != nil {
			return nil, err
		}
	}
	if goVersion != old && !slices.ContainsFunc(w.Godebug, func(g *modfile.Godebug) bool { return g.Key == "default" }) {
		if err := w.AddGodebug("default", "go"+old); err != nil {
			return nil, err
		}
	}
	if base == nil && mf.Toolchain != nil && version.Compare(mf.Toolchain.Name, "go"+goVersion) > 0 {
		if err := w.AddToolchainStmt(mf.Toolchain.Name); err != nil {
			return nil, err
		}
	}
	for _, dir := range []string{modDir, rtDir} {
		if !slices.ContainsFunc(w.Use, func(u *modfile.Use) bool { return filepath.Clean(u.Path) == filepath.Clean(dir) }) {
			if err := w.AddUse(dir, ""); err != nil {
				return nil, err
			}
		}
	}
	w.Cleanup()
	return modfile.Format(w.Syntax), nil
}

// WorkEnv returns env for a go command that builds in the workspace work
// (a go.work file, or "off"): GOWORK set, and -mod=mod taken out of
// GOFLAGS, which a workspace refuses (its go.mod files are never updated).
func WorkEnv(env []string, work string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok && work != "off" {
			kv = "GOFLAGS=" + strings.Join(slices.DeleteFunc(strings.Fields(v), func(f string) bool {
				return strings.HasPrefix(f, "-mod=") || strings.HasPrefix(f, "--mod=")
			}), " ")
		}
		if !strings.HasPrefix(kv, "GOWORK=") {
			out = append(out, kv)
		}
	}
	return append(out, "GOWORK="+work)
}

// rewrittenWorkspace returns the go.work that `spanprof rewrite -w` wrote
// for the module containing dir, or "off" if there is none: the rewritten
// packages of such a module build only in it.
func rewrittenWorkspace(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			work := filepath.Join(d, "go.work")
			if _, err := os.Stat(filepath.Join(d, filepath.FromSlash(RuntimeDir), "go.mod")); err != nil {
				return "off"
			}
			if _, err := os.Stat(work); err != nil {
				return "off"
			}
			return work
		}
		if filepath.Dir(d) == d {
			return "off"
		}
	}
}

// userWorkspace returns the go.work that the go command would use in the
// module at root, or nil if it is in none: the one at root, or one above it
// (GOWORK unset), whose use and replace paths are then rewritten relative
// to root, so that a go.work written at root keeps the user's workspace.
func userWorkspace(root string) (data []byte, atRoot bool, err error) {
	name := filepath.Join(root, "go.work")
	if data, err := os.ReadFile(name); err == nil {
		return data, true, nil
	} else if !os.IsNotExist(err) {
		return nil, false, err
	}
	if os.Getenv("GOWORK") != "" {
		return nil, false, nil // off, or a file the user names: left alone
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		parent := filepath.Join(d, "go.work")
		src, err := os.ReadFile(parent)
		if err == nil {
			w, err := modfile.ParseWork(parent, src, nil)
			if err != nil {
				return nil, false, err
			}
			rebase := func(p string) string {
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				if rel, err := filepath.Rel(root, p); err == nil {
					if rel == "." || strings.HasPrefix(rel, "..") {
						return filepath.ToSlash(rel)
					}
					return "./" + filepath.ToSlash(rel)
				}
				return p
			}
			uses := make([]*modfile.Use, len(w.Use))
			for i, u := range w.Use {
				uses[i] = &modfile.Use{Path: rebase(u.Path), ModulePath: u.ModulePath}
			}
			w.SetUse(uses)
			for _, r := range w.Replace {
				if r.New.Version == "" && (modfile.IsDirectoryPath(r.New.Path) || filepath.IsAbs(r.New.Path)) {
					if err := w.AddReplace(r.Old.Path, r.Old.Version, rebase(r.New.Path), ""); err != nil {
						return nil, false, err
					}
				}
			}
			w.Cleanup()
			return modfile.Format(w.Syntax), false, nil
		} else if !os.IsNotExist(err) {
			return nil, false, err
		}
		if filepath.Dir(d) == d {
			return nil, false, nil
		}
	}
}

// WriteRuntime copies the runtime into RuntimeDir in the module at root,
// where the go.work that WithRuntime adds uses it, replacing an older copy.
func WriteRuntime(root string) error {
	files, err := runtimeFiles()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, filepath.FromSlash(RuntimeDir))
	if same(dir, files) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".runtime-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for n, data := range files {
		name := filepath.Join(tmp, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return fmt.Errorf("copying the spanprof runtime: %w", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("copying the spanprof runtime: %w", err)
	}
	return nil
}

// same reports whether dir holds exactly files.
func same(dir string, files map[string][]byte) bool {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(data, files[filepath.ToSlash(rel)]) {
			return fs.ErrInvalid
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}

// A Build is a temporary directory with what the go command needs to build
// rewritten code without touching the module: the rewritten and added files,
// an -overlay file naming them, and, unless the module is spanprof itself,
// a go.work that uses the module and the runtime (see workspace).
type Build struct {
	Dir     string // the temporary directory; the caller removes it
	Overlay string
	Work    string // the go.work; "" when the module is spanprof itself
	// PGO is the runtime's CPU profile (shadow/engine.pgo), which the
	// build compiles the runtime's packages with, as a copy named by its
	// content (EnginePGO); "" for none.
	PGO string
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
		b.PGO, err = EnginePGO(prog.Module.Dir)
		return b, err
	}
	rtDir, err := Runtime()
	if err != nil {
		return b, err
	}
	if b.PGO, err = EnginePGO(rtDir); err != nil {
		return b, err
	}
	gomod, err := os.ReadFile(prog.Module.GoMod)
	if err != nil {
		return b, err
	}
	work, err := workspace(gomod, prog.Module.Dir, rtDir, nil)
	if err != nil {
		return b, fmt.Errorf("%s: %w", prog.Module.GoMod, err)
	}
	b.Work = filepath.Join(dir, "go.work")
	if err := os.WriteFile(b.Work, work, 0o644); err != nil {
		return b, err
	}
	return b, nil
}

// Flags returns the go command's flags for the build: -overlay, and the
// compiler's -pgoprofile for the runtime's packages (PGOPackages).
//
// Profile-guided optimization inlines the hot calls among the engine's
// functions, beyond the compiler's usual budget: profiled fib and stencil
// took 7% less CPU time (docs/benchmarks.md). The go command's
// own -pgo flag would compile every package with the profile, the
// program's and the standard library's too (a first build of 18 s instead
// of 2 on two cores, and the program's code compiled otherwise than the
// user builds it): -gcflags with a package pattern gives the profile to
// the runtime's packages alone, and nothing else is rebuilt.
func (b *Build) Flags() []string {
	flags := []string{"-overlay=" + b.Overlay}
	if b.PGO == "" {
		return flags
	}
	return append(flags, PGOFlags(b.PGO)...)
}

// PGOFlags returns the go command's flags that compile the runtime's
// packages (PGOPackages) with the CPU profile in file, and nothing else;
// none if file's name cannot be quoted for the go command.
func PGOFlags(file string) []string {
	arg, ok := quoteFlag("-pgoprofile=" + file)
	if !ok {
		return nil
	}
	var flags []string
	for _, pkg := range PGOPackages {
		flags = append(flags, "-gcflags="+pkg+"="+arg)
	}
	return flags
}

// PGOPackages are the packages that a build compiles with the runtime's
// profile: the engine, and the measures whose Read it calls.
var PGOPackages = []string{SpanprofModule + "/shadow", SpanprofModule + "/perf"}

// EnginePGO returns the runtime's profile in the runtime's source at root
// (shadow/engine.pgo), or "" if it has none, as a copy in the user's cache
// directory named by the hash of its content: the name to give PGOFlags.
//
// The go command keys its build cache on the compiler's flags and the
// packages' sources, not on the files a flag names: given the profile by
// its own name, a build after the profile was rewritten in place (make pgo)
// took the runtime compiled with the old one from the cache, and a profile
// of garbage built without an error. A name that changes with the content
// changes the flags, and one that does not change keeps the cache's
// copies.
func EnginePGO(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "shadow", "engine.pgo"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("the runtime's profile: %w", err)
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(spanprofDir(), "pgo")
	name := filepath.Join(dir, hex.EncodeToString(sum[:8])+".pgo")
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return name, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("copying the runtime's profile: %w", err)
	}
	// Written under another name and renamed, so that a build running
	// beside this one never reads half a profile.
	tmp, err := os.CreateTemp(dir, "tmp-*.pgo")
	if err != nil {
		return "", fmt.Errorf("copying the runtime's profile: %w", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("copying the runtime's profile: %w", err)
	}
	return name, nil
}

// quoteFlag quotes arg for a list of flags that the go command splits at
// spaces (the value of -gcflags), where it needs quoting; ok is false if
// it holds both kinds of quote, which cannot be quoted.
func quoteFlag(arg string) (quoted string, ok bool) {
	switch {
	case !strings.ContainsAny(arg, " \t\n\r'\""):
		return arg, true
	case !strings.Contains(arg, "'"):
		return "'" + arg + "'", true
	case !strings.Contains(arg, `"`):
		return `"` + arg + `"`, true
	}
	return "", false
}

// Env returns env for the go command of the build (see WorkEnv).
func (b *Build) Env(env []string) []string {
	return WorkEnv(env, cmp.Or(b.Work, "off"))
}

// spanprofDir is where the embedded runtime and the runtime's profile are
// written, by names that follow their content: spanprof in the user's
// cache directory, or in the temporary directory where there is none.
func spanprofDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "spanprof")
}
