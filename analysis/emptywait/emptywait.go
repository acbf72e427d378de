package emptywait

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

var Analyzer = &analysis.Analyzer{
	Name:     "emptywait",
	Doc:      analyzerdoc.MustExtract(doc, "emptywait"),
	URL:      "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/emptywait",
	Requires: []*analysis.Analyzer{forkjoin.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[forkjoin.Analyzer].(*forkjoin.Result)

	// Candidates: variables waited on directly (no field path), that are
	// neither parameters nor results nor exported.
	params := make(map[types.Object]bool)
	for _, f := range res.Funcs {
		for _, p := range f.Params {
			params[p] = true
		}
		if sig, ok := typeOf(pass, f).(*types.Signature); ok {
			for r := range sig.Results().Variables() {
				params[r] = true
			}
		}
	}
	waitRecv := make(map[*ast.Ident]bool) // identifiers that are a wait's receiver
	cands := make(map[types.Object]bool)
	for _, w := range res.Waits {
		j := w.Join
		if w.Recv == nil || !j.Exact || len(j.Path) != 0 || j.Root == nil {
			continue
		}
		v, ok := j.Root.(*types.Var)
		if !ok || params[v] || v.Exported() && isPackageLevel(v) {
			continue
		}
		id := rootIdent(w.Recv)
		if id == nil || pass.TypesInfo.Uses[id] != v {
			continue // reached through an alias: the alias's own uses count
		}
		waitRecv[id] = true
		cands[v] = true
	}
	if len(cands) == 0 {
		return nil, nil
	}

	// A candidate used anywhere but as a wait's receiver might be signalled
	// through that use.
	for id, obj := range pass.TypesInfo.Uses {
		if cands[obj] && !waitRecv[id] {
			delete(cands, obj)
		}
	}
	// A candidate must be declared by a var or := that makes it empty (not,
	// say, a range variable or a type switch's).
	emptyDecl := make(map[types.Object]bool)
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if obj := pass.TypesInfo.Defs[id]; cands[obj] {
						emptyDecl[obj] = len(n.Values) == 0 || len(n.Values) == len(n.Names) && empty(pass.TypesInfo, n.Values[i])
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					id, ok := lhs.(*ast.Ident)
					if !ok || !cands[pass.TypesInfo.Defs[id]] {
						continue
					}
					var value ast.Expr
					if len(n.Rhs) == len(n.Lhs) {
						value = n.Rhs[i]
					} else if len(n.Rhs) == 1 {
						value = n.Rhs[0] // g, ctx := errgroup.WithContext(ctx)
					}
					emptyDecl[pass.TypesInfo.Defs[id]] = value != nil && empty(pass.TypesInfo, value)
				}
			}
			return true
		})
	}

	for _, w := range res.Waits {
		if w.Recv == nil || !cands[w.Join.Root] || !emptyDecl[w.Join.Root] || len(w.Join.Path) != 0 {
			continue
		}
		name := w.Join.Name()
		pass.Report(analysis.Diagnostic{
			Pos: w.Pos,
			End: w.Node.End(),
			Message: fmt.Sprintf("%s waits for nothing: nothing spawns onto or signals %s, so it returns at once (%s)",
				types.ExprString(w.Node.Fun), name, hint(w.Join.Kind, name)),
		})
	}
	return nil, nil
}

// hint says how work is normally counted in an object of kind k.
func hint(k forkjoin.ObjectKind, name string) string {
	switch k {
	case forkjoin.Errgroup:
		return "start the goroutines with " + name + ".Go"
	case forkjoin.ParlibGroup:
		return "start the functions with " + name + ".Spawn"
	}
	return "start the goroutines with " + name + ".Go, or count them with " + name + ".Add and Done"
}

// empty reports whether e makes a join object with nothing in it: a zero
// composite literal, possibly addressed, new(T), or errgroup.WithContext.
func empty(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	switch e := e.(type) {
	case *ast.CompositeLit:
		return len(e.Elts) == 0
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok {
				return b.Name() == "new"
			}
		}
		fn, ok := typeutil.Callee(info, e).(*types.Func)
		return ok && fn.Pkg() != nil && fn.Pkg().Path() == "golang.org/x/sync/errgroup" && fn.Name() == "WithContext"
	}
	return false
}

// rootIdent returns the identifier a receiver expression starts from when
// it is a plain variable, possibly parenthesised, addressed or dereferenced.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.UnaryExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return nil
		}
	}
}

func typeOf(pass *analysis.Pass, f *forkjoin.Func) types.Type {
	if f.Obj != nil {
		return f.Obj.Type()
	}
	return pass.TypesInfo.TypeOf(f.Node.(ast.Expr))
}

func isPackageLevel(v *types.Var) bool {
	return v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}
