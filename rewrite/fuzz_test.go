package rewrite

import (
	"bytes"
	"errors"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// fuzzImports are the packages the fuzzed programs may import, with the
// runtime that rewritten code imports.
var fuzzImports = []string{
	"context", "errors", "fmt", "os", "runtime", "sort", "strings", "sync", "sync/atomic", "time",
	"golang.org/x/sync/errgroup", "github.com/spanprof/spanprof/parlib", shadowPath,
}

// exportData maps the import paths of fuzzImports and their dependencies
// to their export data files, compiled once by the go command.
var exportData = sync.OnceValues(func() (map[string]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, fuzzImports...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	files := make(map[string]string)
	for l := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(l), "="); ok && file != "" {
			files[path] = file
		}
	}
	return files, nil
})

// newImporter returns an importer that reads the export data of
// fuzzImports.
func newImporter(t testing.TB, fset *token.FileSet) types.Importer {
	files, err := exportData()
	if err != nil {
		t.Fatal(err)
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := files[path]
		if !ok {
			return nil, errors.New("not available in the fuzz test: " + path)
		}
		return os.Open(f)
	})
}

// typeCheck type-checks files as one package and returns it with its
// information, or the first error.
func typeCheck(t testing.TB, fset *token.FileSet, files []*ast.File) (*types.Package, *types.Info, error) {
	return typeCheckConf(t, fset, files, false)
}

func typeCheckConf(t testing.TB, fset *token.FileSet, files []*ast.File, fakeC bool) (*types.Package, *types.Info, error) {
	info := &types.Info{
		Types:        make(map[ast.Expr]types.TypeAndValue),
		Defs:         make(map[*ast.Ident]types.Object),
		Uses:         make(map[*ast.Ident]types.Object),
		Implicits:    make(map[ast.Node]types.Object),
		Selections:   make(map[*ast.SelectorExpr]*types.Selection),
		Scopes:       make(map[ast.Node]*types.Scope),
		Instances:    make(map[*ast.Ident]types.Instance),
		FileVersions: make(map[*ast.File]string),
	}
	var first error
	conf := types.Config{Importer: newImporter(t, fset), FakeImportC: fakeC, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	pkg, _ := conf.Check("example.com/fuzz", fset, files, info)
	return pkg, info, first
}

// rewriteSource rewrites the program src, a file main.go of a module
// example.com/fuzz in dir, in place mode, with nothing known about inlining.
// ok is false when src does not type-check or the rewriter refuses it.
func rewriteSource(t testing.TB, dir string, src []byte) (res *Result, ok bool) {
	t.Helper()
	res, err := rewriteFiles(t, dir, map[string]string{"main.go": string(src)}, false)
	var refusal *Refusal
	if errors.As(err, &refusal) || errors.Is(err, errTypes) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("rewriting:\n%s\n%v", src, err)
	}
	return res, true
}

var errTypes = errors.New("the input does not type-check")

// rewriteFiles rewrites the package of files (name → source) in dir, which
// must type-check (with import "C" allowed when fakeC).
func rewriteFiles(t testing.TB, dir string, files map[string]string, fakeC bool) (*Result, error) {
	t.Helper()
	return rewriteFilesParsed(t, dir, files, fakeC, slices.Sorted(maps.Keys(files)))
}

// rewriteFilesParsed is rewriteFiles with the files parsed in the order
// parseOrder gives (their names), which sets their bases in the file set,
// as a parallel loader's order does; the package lists them sorted, as the
// go command does.
func rewriteFilesParsed(t testing.TB, dir string, files map[string]string, fakeC bool, parseOrder []string) (*Result, error) {
	t.Helper()
	fset := token.NewFileSet()
	parsed := make(map[string]*ast.File)
	for _, n := range parseOrder {
		name := filepath.Join(dir, n)
		if err := os.WriteFile(name, []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, files[n], parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, errTypes
		}
		parsed[n] = f
	}
	var syntax []*ast.File
	var names []string
	for _, n := range slices.Sorted(maps.Keys(files)) {
		syntax = append(syntax, parsed[n])
		names = append(names, filepath.Join(dir, n))
	}
	tpkg, info, err := typeCheckConf(t, fset, syntax, fakeC)
	if err != nil {
		return nil, errTypes
	}
	pkg := &packages.Package{
		ID: "example.com/fuzz", PkgPath: "example.com/fuzz", Name: syntax[0].Name.Name, Dir: dir,
		Fset: fset, Syntax: syntax, Types: tpkg, TypesInfo: info,
		TypesSizes: types.SizesFor("gc", "amd64"), GoFiles: names,
	}
	prog := &Program{
		cfg:     Config{Dir: dir, Mode: InPlace},
		Module:  Module{Path: "example.com/fuzz", Dir: dir, GoMod: filepath.Join(dir, "go.mod")},
		units:   []*unit{{pkg: pkg, named: true}},
		workDir: dir,
	}
	return prog.Rewrite()
}

// checkRewrite checks the rewrite of src, which type-checks: the rewritten
// files type-check, are gofmt-clean, and Write then Undo restores the
// original byte for byte.
func checkRewrite(t testing.TB, src []byte) {
	t.Helper()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	res, ok := rewriteSource(t, dir, src)
	if !ok {
		return
	}
	if err := os.Chmod(main, 0o640); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range res.Files {
		if formatted, err := format.Source(f.New); err != nil || !bytes.Equal(formatted, f.New) {
			t.Errorf("%s is not gofmt-clean (%v):\n%s", filepath.Base(f.Path), err, f.New)
		}
		af, err := parser.ParseFile(fset, f.Path, f.New, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", filepath.Base(f.Path), err, f.New)
		}
		files = append(files, af)
	}
	if len(files) > 0 {
		if _, _, err := typeCheck(t, fset, files); err != nil {
			var b strings.Builder
			for _, f := range res.Files {
				b.Write(f.New)
			}
			t.Fatalf("the rewritten program does not type-check: %v\ninput:\n%s\noutput:\n%s", err, src, b.String())
		}
	}
	if err := Write(dir, res.Files); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(dir, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("undo gives\n%s\nwant\n%s", got, src)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("after undo the directory holds %v, want only main.go", names)
	}
	if info, err := os.Stat(main); err != nil || info.Mode().Perm() != 0o640 {
		t.Fatalf("after undo main.go has mode %v (%v), want 0640", info.Mode(), err)
	}
}

// fuzzSeeds are small fork/join programs, besides the golden cases.
var fuzzSeeds = []string{
	`package main

import "sync"

func main() {
	var wg sync.WaitGroup
	n := 0
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(k int) { defer wg.Done(); n += k }(i)
	}
	wg.Wait()
	println(n)
}
`,
	`package main

import (
	"context"
	"golang.org/x/sync/errgroup"
)

func work(ctx context.Context, i int) (int, error) { return i * i, ctx.Err() }

func main() {
	g, ctx := errgroup.WithContext(context.Background())
	out := make([]int, 4)
	for i := range out {
		g.Go(func() error {
			v, err := work(ctx, i)
			out[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
}
`,
	`package main

import "github.com/spanprof/spanprof/parlib"

func fib(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	parlib.Do(func() { a = fib(n - 1) }, func() { b = fib(n - 2) })
	return a + b
}

func main() { println(fib(10)) }
`,
}

// FuzzRewrite mutates fork/join programs: whenever the input type-checks,
// the rewritten program type-checks and is gofmt-clean, and undoing the
// rewrite restores the input.
func FuzzRewrite(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, c := range goldenCases(f) {
		src, err := os.ReadFile(filepath.Join("testdata", c, "main.go"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	if _, err := exec.LookPath("go"); err != nil {
		f.Skip("no go command:", err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkRewrite(t, src)
	})
}
