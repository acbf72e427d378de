package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/dst"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Names the rewriter injects. Every one starts with _spanprof, which
// rewriting refuses to find in user code, so none can clash.
const (
	shadowPath   = "github.com/spanprof/spanprof/shadow"
	shadowAlias  = "_spanprof_shadow"
	namePrefix   = "_spanprof"
	userTestMain = "_spanprofTestMain"
)

// A Unit is one package to rewrite: its own files, its internal test files
// with them when tests are rewritten, or an external test package.
type unit struct {
	pkg   *Package
	xtest bool // an external test package (p_test)
	named bool // named on the command line: gets a TestMain when tests are rewritten
}

// A plan is what rewriting a unit decides, the plan phase's output and the
// apply phase's input: the edits at nodes of the original syntax, the site
// tables, and what is reported.
type plan struct {
	edits map[ast.Node]nodeEdit // what to do at a node, applied bottom-up
	// enterAfter holds the expressions to wrap as EnterAfter(x, site) once
	// their own edits are done: the start of a call that evaluating them
	// precedes (planCall).
	enterAfter map[ast.Node]dst.Expr
	before     map[ast.Stmt][]dst.Stmt // statements to insert before a statement of a list
	after      map[ast.Stmt][]dst.Stmt // and after it

	tables   [3][]siteInfo
	warnings []string
	stats    Stats
	testMain table // where the user's TestMain is (tableTest or tableXTest); -1 if none
	// leftOut are the calls left out that may carry work, per table:
	// appended to the tables once every site is numbered.
	leftOut [3][]siteInfo
	// spawnRows are the planned spawns' rows (plansem.go).
	spawnRows map[*forkjoin.Spawn]spawnRow
	// fused are the calls that a spawn's site stands for (fuse.go).
	fused map[*ast.CallExpr]bool
	// doneLast are the Done calls that are a spawned child's last action,
	// and glues the call ends that a wait follows directly (glue.go).
	doneLast map[*ast.CallExpr]bool
	glues    []glue
	// spawnGlues are the spawn statements whose child's end may be glued
	// to the call after them (glue.go).
	spawnGlues []ast.Stmt
}

// A planner decides the plan of one unit from its index and forkjoin's
// result.
type planner struct {
	prog *Program
	u    *unit
	fset *token.FileSet
	info *types.Info
	res  *forkjoin.Result
	*index
	*plan
}

// fileRewriter holds one file's syntax in both forms.
type fileRewriter struct {
	ast  *ast.File
	name string // absolute path
	// lineName is the file's name in //line directives.
	lineName string
	table    table
}

// A Refusal is an error that refuses to rewrite: a package that does not
// load, parse, type-check or build, a construct the rewriter cannot handle,
// a file it must not change. Other errors are bugs.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &Refusal{fmt.Sprintf(format, args...)}
}

// rewrite instruments the unit, in phases that pass data: index (the
// files to rewrite and their syntax), analysis (forkjoin), plan (typed
// edits and site tables), then apply and print. It returns the changed
// files and the plan, whose tables, warnings and counts the program
// gathers.
func (u *unit) rewrite(prog *Program) ([]*File, *plan, error) {
	files, warnings, err := selectFiles(prog, u)
	if err != nil {
		return nil, nil, err
	}
	res, err := analyze(u.pkg)
	if err != nil {
		return nil, nil, fmt.Errorf("analyzing %s: %w", u.pkg.ID, err)
	}
	pl := &planner{prog: prog, u: u, fset: u.pkg.Fset, info: u.pkg.TypesInfo, res: res, index: newIndex(u.pkg, files)}
	p := pl.planUnit()
	p.warnings = append(warnings, p.warnings...)
	out, conflicts, err := apply(prog, u.pkg, files, p)
	if err != nil {
		return nil, nil, err
	}
	p.stats.LineConflicts += conflicts
	return out, p, nil
}

// rewritten reports whether the unit is rewritten already: a file of it
// imports the runtime under the rewriter's alias, or its directory holds a
// file that rewriting adds.
func (u *unit) rewritten() bool {
	for _, f := range u.pkg.Syntax {
		for _, imp := range f.Imports {
			if imp.Name != nil && imp.Name.Name == shadowAlias {
				return true
			}
		}
	}
	for _, name := range []string{genFile, genTestFile, genXTestFile} {
		if data, err := os.ReadFile(filepath.Join(u.pkg.Dir, name)); err == nil && bytes.HasPrefix(data, []byte(GeneratedHeader)) {
			return true
		}
	}
	return false
}

// selectFiles decides which files of the package to rewrite: the Go files
// of the package's directory that are neither generated nor cgo files.
func selectFiles(prog *Program, u *unit) ([]*fileRewriter, []string, error) {
	pkg := u.pkg
	fset := pkg.Fset
	var (
		files    []*fileRewriter
		warnings []string
	)
	var errs []error
	for _, f := range pkg.Syntax {
		name := fset.File(f.Pos()).Name()
		if !slices.Contains(pkg.GoFiles, name) || ast.IsGenerated(f) || importsC(f) {
			continue // cgo output, generated or cgo source: left as it is
		}
		if hasLineDirective(f) {
			warnings = append(warnings, fmt.Sprintf("%s: not rewritten: the file has //line directives of its own", prog.relPath(name)))
			continue
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == shadowPath {
				errs = append(errs, refuse("%s: the file imports the spanprof runtime itself (instrumented by hand?)", prog.pos(fset, imp.Pos())))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, namePrefix) {
				errs = append(errs, refuse("%s: unsupported: identifier %s would clash with the names spanprof injects", prog.pos(fset, id.Pos()), id.Name))
			}
			return true
		})
		t := tablePkg
		switch {
		case u.xtest:
			t = tableXTest
		case strings.HasSuffix(name, "_test.go"):
			t = tableTest
		}
		// A //line directive names the file by its path in an overlay,
		// which the go command compiles from elsewhere, and by its base
		// name in a file written for keeps: the compiler and go/scanner
		// read a relative name relative to the file's own directory, and
		// nothing of this machine's paths goes into the user's tree.
		lineName := name
		if prog.cfg.Mode != Overlay {
			lineName = filepath.Base(name)
		}
		fr := &fileRewriter{ast: f, name: name, lineName: lineName, table: t}
		files = append(files, fr)
	}
	return files, warnings, errors.Join(errs...)
}

// pos formats p as file:line:col with the file relative to the working
// directory where that is shorter.
func (p *Program) pos(fset *token.FileSet, pos token.Pos) string {
	q := fset.PositionFor(pos, false)
	return fmt.Sprintf("%s:%d:%d", p.relPath(q.Filename), q.Line, q.Column)
}

// line formats p as file:line.
func (pl *planner) line(p token.Pos) string {
	q := pl.fset.PositionFor(p, false)
	return fmt.Sprintf("%s:%d", pl.prog.relPath(q.Filename), q.Line)
}

func importsC(f *ast.File) bool {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

func hasLineDirective(f *ast.File) bool {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
				return true
			}
		}
	}
	return false
}
