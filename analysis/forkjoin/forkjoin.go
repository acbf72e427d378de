package forkjoin

import (
	"cmp"
	_ "embed"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

// Analyzer computes a package's fork/join structure. Its result is a
// *Result; it reports no diagnostics.
var Analyzer = &analysis.Analyzer{
	Name:       "forkjoin",
	Doc:        analyzerdoc.MustExtract(doc, "forkjoin"),
	URL:        "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/forkjoin",
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

func run(pass *analysis.Pass) (any, error) {
	c := &collector{
		fset: pass.Fset,
		info: pass.TypesInfo,
		pkg:  pass.Pkg,
		res: &Result{
			funcs:   make(map[ast.Node]*Func),
			objects: make(map[string]*JoinObject),
			byObj:   make(map[*types.Func]*Func),
			litVar:  make(map[*types.Var]*ast.FuncLit),
			calls:   make(map[*ast.CallExpr]*Call),
			files:   pass.Files,
			fset:    pass.Fset,
			info:    pass.TypesInfo,
			pkg:     pass.Pkg,
		},
		alias:     make(map[*types.Var]ast.Expr),
		goCall:    make(map[*ast.CallExpr]bool),
		deferStmt: make(map[*ast.CallExpr]*ast.DeferStmt),
		taskVar:   make(map[*ast.CallExpr]ast.Expr),
	}
	c.collectFuncs(pass.Files)
	c.collectVars(pass.Files)
	for _, f := range c.res.Funcs {
		c.walk(f)
	}
	for _, s := range c.res.Spawns {
		c.finishSpawn(s)
	}
	c.semaphores()
	c.loops()
	c.outside()
	c.elide()
	module := ""
	if pass.Module != nil {
		module = pass.Module.Path
	}
	c.serial(module)
	c.startedBy(pass.Files)
	// Source order: by file name, then offset (ComparePos).
	byPos := func(a, b token.Pos) int { return ComparePos(pass.Fset, a, b) }
	slices.SortStableFunc(c.res.Spawns, func(a, b *Spawn) int { return byPos(a.Pos, b.Pos) })
	slices.SortStableFunc(c.res.Signals, func(a, b *Signal) int { return byPos(a.Pos, b.Pos) })
	slices.SortStableFunc(c.res.Waits, func(a, b *Wait) int { return byPos(a.Pos, b.Pos) })
	slices.SortStableFunc(c.res.Calls, func(a, b *Call) int { return byPos(a.Node.Pos(), b.Node.Pos()) })
	return c.res, nil
}

// ComparePos orders positions of fset in source order: by file name, then
// offset. The token.Pos values alone are not: the bases of files in a
// FileSet follow the order a loader parsed them in, which go/packages does
// in parallel, so comparing them would order sites (and the rewriter's
// output) differently from load to load. A position with no file comes
// first.
func ComparePos(fset *token.FileSet, a, b token.Pos) int {
	fa, fb := fset.File(a), fset.File(b)
	if fa == fb {
		return cmp.Compare(a, b)
	}
	switch {
	case fa == nil:
		return -1
	case fb == nil:
		return 1
	}
	if c := strings.Compare(fa.Name(), fb.Name()); c != 0 {
		return c
	}
	if c := cmp.Compare(fa.Offset(a), fb.Offset(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b) // two files of one name: any fixed order
}

// A collector builds a Result.
type collector struct {
	fset *token.FileSet
	info *types.Info
	pkg  *types.Package
	res  *Result

	alias  map[*types.Var]ast.Expr // pointer variables assigned once: what they point to
	goCall map[*ast.CallExpr]bool  // calls of go statements
	// deferStmt maps the call of each defer statement to the statement.
	deferStmt map[*ast.CallExpr]*ast.DeferStmt
	// taskVar maps a parlib.Spawn call to the variable its Task is stored in.
	taskVar map[*ast.CallExpr]ast.Expr
	facts   map[*Func]*funcFacts
	sums    map[*Func]*summary
}

// collectFuncs creates a Func for every declaration with a body and every
// literal, in source order, and names them as the compiler does.
func (c *collector) collectFuncs(files []*ast.File) {
	prefix := c.pkg.Path()
	if c.pkg.Name() == "main" {
		prefix = "main"
	}
	children := make(map[*Func]int) // literals numbered so far, per enclosing function
	initLits := 0                   // literals in package-level initializers
	for _, file := range files {
		var stack []*Func // enclosing functions
		ast.PreorderStack(file, nil, func(n ast.Node, nodes []ast.Node) bool {
			// Pop functions the walk has left.
			for len(stack) > 0 && !slices.Contains(nodes, stack[len(stack)-1].Node) {
				stack = stack[:len(stack)-1]
			}
			var f *Func
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body == nil {
					return false
				}
				obj, _ := c.info.Defs[n.Name].(*types.Func)
				f = &Func{Node: n, Obj: obj, Type: n.Type, Body: n.Body, Name: prefix + "." + declName(n)}
				if obj != nil {
					c.res.byObj[obj] = f
					f.sig = obj.Signature()
					f.Params = paramsOf(f.sig)
				}
			case *ast.FuncLit:
				f = &Func{Node: n, Type: n.Type, Body: n.Body}
				if sig, ok := c.info.TypeOf(n).(*types.Signature); ok {
					f.sig = sig
					f.Params = paramsOf(sig)
				}
				if len(stack) == 0 {
					initLits++
					f.Name = prefix + ".init.func" + itoa(initLits)
				} else {
					outer := stack[len(stack)-1]
					f.Outer = outer
					outer.Literals = append(outer.Literals, f)
					children[outer]++
					if outer.Outer == nil && outer.Obj != nil {
						f.Name = outer.Name + ".func" + itoa(children[outer])
					} else {
						f.Name = outer.Name + "." + itoa(children[outer])
					}
				}
			default:
				return true
			}
			c.res.Funcs = append(c.res.Funcs, f)
			c.res.funcs[n] = f
			stack = append(stack, f)
			return true
		})
	}
}

// declName returns a declared function's name as the compiler spells it
// after the package: "f", "T.m", "(*T).m", "f[...]", "(*T[...]).m".
func declName(d *ast.FuncDecl) string {
	name := d.Name.Name
	if d.Type.TypeParams != nil {
		name += "[...]"
	}
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return name
	}
	t := d.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, s.X
	}
	var tname string
	switch t := t.(type) {
	case *ast.Ident:
		tname = t.Name
	case *ast.IndexExpr:
		tname = types.ExprString(t.X) + "[...]"
	case *ast.IndexListExpr:
		tname = types.ExprString(t.X) + "[...]"
	default:
		tname = types.ExprString(t)
	}
	if ptr {
		return "(*" + tname + ")." + name
	}
	return tname + "." + name
}

// paramsOf lists the variables a call of sig binds: receiver, then
// parameters.
func paramsOf(sig *types.Signature) []*types.Var {
	var ps []*types.Var
	if r := sig.Recv(); r != nil {
		ps = append(ps, r)
	}
	for p := range sig.Params().Variables() {
		ps = append(ps, p)
	}
	return ps
}

// collectVars finds the local pointer variables that alias a join object and
// the function variables that hold one literal: both must be assigned
// exactly once and never have their address taken.
func (c *collector) collectVars(files []*ast.File) {
	init := make(map[*types.Var]ast.Expr) // value at declaration
	assigned := make(map[*types.Var]int)  // assignments after declaration
	last := make(map[*types.Var]ast.Expr) // value of the last such assignment
	unstable := make(map[*types.Var]bool) // address taken, or assigned in a way we do not follow
	defined := make(map[*types.Var]bool)  // declared by a statement we saw
	use := func(id *ast.Ident) *types.Var {
		v, _ := c.info.Uses[id].(*types.Var)
		return v
	}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					id, ok := ast.Unparen(lhs).(*ast.Ident)
					if !ok {
						continue
					}
					var rhs ast.Expr
					if len(n.Lhs) == len(n.Rhs) {
						rhs = n.Rhs[i]
					}
					if v, ok := c.info.Defs[id].(*types.Var); ok && v != nil {
						defined[v] = true
						if rhs != nil {
							init[v] = rhs
						}
					} else if v := use(id); v != nil {
						assigned[v]++
						last[v] = rhs
						if n.Tok != token.ASSIGN && n.Tok != token.DEFINE {
							unstable[v] = true // x += ...
						}
					}
				}
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if v, ok := c.info.Defs[id].(*types.Var); ok {
						defined[v] = true
						if len(n.Values) == len(n.Names) {
							init[v] = n.Values[i]
						}
					}
				}
			case *ast.IncDecStmt:
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					if v := use(id); v != nil {
						unstable[v] = true
					}
				}
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					for _, e := range []ast.Expr{n.Key, n.Value} {
						if id, ok := e.(*ast.Ident); ok {
							if v := use(id); v != nil {
								unstable[v] = true
							}
						}
					}
				}
			case *ast.UnaryExpr:
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND {
					if v := use(id); v != nil {
						unstable[v] = true
					}
				}
			}
			return true
		})
	}
	for v := range defined {
		if unstable[v] || (isPackageLevel(v) && v.Exported()) {
			continue
		}
		value := init[v]
		switch {
		case value != nil && assigned[v] == 0:
		case value == nil && assigned[v] == 1:
			value = last[v]
		default:
			continue
		}
		if value == nil {
			continue
		}
		value = ast.Unparen(value)
		if lit, ok := value.(*ast.FuncLit); ok {
			c.res.litVar[v] = lit
			continue
		}
		if _, ok := v.Type().Underlying().(*types.Pointer); !ok {
			continue // a copy of a struct is another object
		}
		switch value.(type) {
		case *ast.UnaryExpr, *ast.Ident, *ast.SelectorExpr, *ast.StarExpr:
			c.alias[v] = value
		}
	}
}

// bindCall binds callee's parameters to a call's operands: recvSel is the
// method value's selector (nil for other calls), args the arguments.
func (c *collector) bindCall(callee *Func, recvSel *ast.SelectorExpr, args []ast.Expr, variadicCall bool) (map[types.Object]ref, []ast.Expr) {
	if callee == nil {
		return nil, nil
	}
	params := callee.Params
	var operands []ast.Expr
	bind := make(map[types.Object]ref)
	if recvSel != nil && callee.Obj != nil && callee.Obj.Signature().Recv() != nil {
		operands = append(operands, recvSel.X)
		if r, ok := c.receiverRef(recvSel); ok && len(params) > 0 {
			bind[params[0]] = r
		}
		params = params[1:]
	}
	operands = append(operands, args...)
	sig := callee.sig
	for i, a := range args {
		if i >= len(params) {
			break
		}
		if sig != nil && sig.Variadic() && i == len(params)-1 && !variadicCall {
			break // several operands make the variadic parameter's slice
		}
		if r, ok := c.ref(a); ok {
			bind[params[i]] = r
		}
	}
	return bind, operands
}

func itoa(i int) string { return constant.MakeInt64(int64(i)).String() }
