package rewrite

import (
	"go/ast"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dave/dst"
	"golang.org/x/tools/go/types/typeutil"
)

// Tests hold the engine in turn (the runtime's hold.go): the testing
// package runs each test, subtest and benchmark on a goroutine of its own,
// and only the goroutine that runs the current one may drive the engine.
// The runtime learns which one from the places where the testing package
// hands over, which the rewriter marks:
//
//	func TestX(t *testing.T) { ... }   func TestX(t *testing.T) { defer _spanprof_shadow.EndTest(_spanprof_shadow.BeginTest()); ... }
//	t.Run(name, f)   (b.Run too)      _spanprof_shadow.TestRun(S, t.Run, name, f)
//	t.Parallel()                      _spanprof_shadow.TestParallel(t.Parallel)
//
// BeginTest goes first in every test, benchmark and fuzz function of the
// named packages' test files. TestRun and TestParallel replace the calls in
// every instrumented package, so that a subtest started from a helper (in
// a test file or not) is profiled as a call at its t.Run site. A fuzz
// target's f.Fuzz, given a function literal, is a call at its site too,
// and the literal holds the engine for each input of the seed corpus:
//
//	f.Fuzz(func(t *testing.T, b []byte) { ... })
//	_spanprof_shadow.TestFuzz(S, f.Fuzz, func(t *testing.T, b []byte) { defer _spanprof_shadow.EndTest(_spanprof_shadow.BeginTest()); ... })

// testKinds are the prefixes of test functions and the type each takes.
var testKinds = map[string]string{"Test": "T", "Benchmark": "B", "Fuzz": "F"}

// isTestFunc reports whether fd is a function that go test runs: TestX,
// BenchmarkX or FuzzX, as the testing package names them, taking one
// *testing.T, *testing.B or *testing.F and returning nothing.
func (pl *planner) isTestFunc(fd *ast.FuncDecl) bool {
	if fd.Recv != nil || fd.Body == nil || fd.Type.TypeParams != nil || fd.Type.Results != nil {
		return false
	}
	for prefix, typ := range testKinds {
		rest, ok := strings.CutPrefix(fd.Name.Name, prefix)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && unicode.IsLower(r) {
			return false
		}
		obj, _ := pl.info.Defs[fd.Name].(*types.Func)
		if obj == nil || obj.Signature().Params().Len() != 1 {
			return false
		}
		return isTestingType(obj.Signature().Params().At(0).Type(), typ)
	}
	return false
}

// isTestingType reports whether t is *testing.name.
func isTestingType(t types.Type, name string) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing" && n.Obj().Name() == name
}

// planTests plans the hand-overs of the engine between tests.
func (pl *planner) planTests() {
	for _, fr := range pl.files {
		if fr.table != tablePkg && pl.prog.cfg.Tests && pl.u.named {
			for _, d := range fr.ast.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && pl.isTestFunc(fd) {
					pl.edits[fd] = holdEngine()
				}
			}
		}
		ast.Inspect(fr.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
			if !ok || pl.info.Selections[sel] == nil || pl.info.Selections[sel].Kind() != types.MethodVal {
				return true
			}
			fn, ok := typeutil.Callee(pl.info, call).(*types.Func)
			if !ok {
				return true
			}
			switch fn.FullName() {
			case "(*testing.T).Run", "(*testing.B).Run":
				if len(call.Args) != 2 || call.Ellipsis.IsValid() {
					return true
				}
				pl.planRun(fr, call)
			case "(*testing.F).Fuzz":
				if lit, ok := ast.Unparen(call.Args[0]).(*ast.FuncLit); ok && len(call.Args) == 1 {
					pl.planFuzz(fr, call, lit)
				}
			case "(*testing.T).Parallel":
				pl.edits[call] = helperCall{helper: rt(rtTestParallel), fun: true}
			}
			return true
		})
	}
}

// planFuzz makes f.Fuzz(func(t *testing.T, ...) {...}) a call at a site of
// its own, whose inputs (the seed corpus, each on a goroutine of the
// testing package's) hold the engine in turn, as subtests do.
func (pl *planner) planFuzz(fr *fileRewriter, call *ast.CallExpr, lit *ast.FuncLit) {
	name := pl.res.CalleeName(call.Fun)
	if f := pl.res.Func(lit); f != nil {
		name = f.Name
	}
	caller := ""
	if f := pl.res.Enclosing(call.Pos()); f != nil {
		caller = f.Name
	}
	site := pl.addSite(fr, call.Pos(), name, caller, "call")
	pl.edits[lit] = holdEngine()
	pl.edits[call] = helperCall{helper: rt(rtTestFuzz), site: site, fun: true}
}

// planRun makes t.Run(name, f) a call of the subtest at a site of its own.
func (pl *planner) planRun(fr *fileRewriter, call *ast.CallExpr) {
	name := pl.res.CalleeName(call.Fun)
	switch f := ast.Unparen(call.Args[1]).(type) {
	case *ast.FuncLit:
		if lit := pl.res.Func(f); lit != nil {
			name = lit.Name
		}
	case *ast.Ident, *ast.SelectorExpr:
		if fn, ok := typeutil.Callee(pl.info, &ast.CallExpr{Fun: f}).(*types.Func); ok && fn.Pkg() != nil {
			name = pl.res.CalleeName(f)
		}
	}
	caller := ""
	if f := pl.res.Enclosing(call.Pos()); f != nil {
		caller = f.Name
	}
	site := pl.addSite(fr, call.Pos(), name, caller, "call")
	pl.edits[call] = helperCall{helper: rt(rtTestRun), site: site, fun: true}
}

// holdEngine is the prologue of a test, benchmark, fuzz function or fuzz
// target: defer EndTest(BeginTest()).
func holdEngine() prologue {
	hold := &dst.DeferStmt{Call: rtCall(rtEndTest, rtCall(rtBeginTest))}
	hold.Decs.Before = dst.NewLine
	return prologue{[]dst.Stmt{hold}}
}
