package regionend

import (
	_ "embed"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

// regionPath is the region API's import path.
const regionPath = "github.com/spanprof/spanprof/region"

// Analyzer is the regionend analyzer. It uses nothing of forkjoin's but
// requires it, as every spanvet analyzer does (drivers run it once for
// them all).
var Analyzer = &analysis.Analyzer{
	Name:     "regionend",
	Doc:      analyzerdoc.MustExtract(doc, "regionend"),
	URL:      "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/regionend",
	Requires: []*analysis.Analyzer{forkjoin.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	if !imports(pass.Pkg) {
		return nil, nil
	}
	for _, f := range pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil {
					check(pass, n.Body)
				}
			case *ast.FuncLit:
				check(pass, n.Body)
			}
			return true
		})
	}
	return nil, nil
}

func imports(p *types.Package) bool {
	for _, i := range p.Imports() {
		if i.Path() == regionPath {
			return true
		}
	}
	return false
}

// check reports the Begins of one function's own body (not those of the
// function literals in it, checked on their own) that it does not end.
func check(pass *analysis.Pass, body *ast.BlockStmt) {
	parent := make(map[ast.Node]ast.Node)
	var begins []*ast.CallExpr
	ended := make(map[types.Object]bool) // variables whose End the function calls
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if len(stack) > 0 {
			parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		if call, ok := n.(*ast.CallExpr); ok {
			switch regionFunc(pass, call) {
			case "Begin":
				begins = append(begins, call)
			case "End":
				if id, ok := ast.Unparen(call.Fun.(*ast.SelectorExpr).X).(*ast.Ident); ok {
					ended[pass.TypesInfo.Uses[id]] = true
				}
			}
		}
		return true
	})
	up := func(n ast.Node) ast.Node {
		p := parent[n]
		for {
			if _, ok := p.(*ast.ParenExpr); !ok {
				return p
			}
			p = parent[p]
		}
	}
	for _, b := range begins {
		switch p := up(b).(type) {
		case *ast.SelectorExpr:
			if call, ok := up(p).(*ast.CallExpr); ok && regionFunc(pass, call) == "End" {
				continue // region.Begin(name).End()
			}
		case *ast.AssignStmt:
			if v := assigned(pass, p.Lhs, p.Rhs, b); v != nil && ended[v] {
				continue
			}
		case *ast.ValueSpec:
			var lhs []ast.Expr
			for _, n := range p.Names {
				lhs = append(lhs, n)
			}
			if v := assigned(pass, lhs, p.Values, b); v != nil && ended[v] {
				continue
			}
		}
		pass.Reportf(b.Pos(), "region.Begin without End in the same function: the region stays open past its end; defer region.Begin(name).End(), or end the Region it returns here")
	}
}

// assigned returns the variable that an assignment of rhs to lhs gives
// the value of b, or nil.
func assigned(pass *analysis.Pass, lhs, rhs []ast.Expr, b *ast.CallExpr) types.Object {
	if len(lhs) != len(rhs) {
		return nil
	}
	for i, r := range rhs {
		if ast.Unparen(r) != b {
			continue
		}
		id, ok := lhs[i].(*ast.Ident)
		if !ok || id.Name == "_" {
			return nil
		}
		if obj := pass.TypesInfo.Defs[id]; obj != nil {
			return obj
		}
		return pass.TypesInfo.Uses[id]
	}
	return nil
}

// regionFunc says which of the region API's functions call calls: "Begin",
// "End" (a Region's method) or "".
func regionFunc(pass *analysis.Pass, call *ast.CallExpr) string {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	fn, ok := pass.TypesInfo.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != regionPath {
		return ""
	}
	recv := fn.Type().(*types.Signature).Recv() != nil
	switch {
	case !recv && fn.Name() == "Begin":
		return "Begin"
	case recv && fn.Name() == "End":
		return "End"
	}
	return ""
}
