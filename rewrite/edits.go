package rewrite

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"

	"github.com/dave/dst"
	"github.com/dave/dst/dstutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// rt is the qualified name of a runtime function: _spanprof_shadow.name.
func rt(name string) dst.Expr {
	return &dst.SelectorExpr{X: dst.NewIdent(shadowAlias), Sel: dst.NewIdent(name)}
}

// rtCall is a call of a runtime function.
func rtCall(name string, args ...dst.Expr) *dst.CallExpr {
	return &dst.CallExpr{Fun: rt(name), Args: args}
}

// receiver returns a pointer to the join object that call (a method call on
// it, as a method value or a method expression) operates on, and the
// call's other arguments. The object is addressable or a pointer, since its
// methods have pointer receivers.
func (ur *unitRewriter) receiver(orig *ast.CallExpr, call *dst.CallExpr) (dst.Expr, []dst.Expr) {
	osel := ast.Unparen(orig.Fun).(*ast.SelectorExpr)
	sel := ur.info.Selections[osel]
	if sel.Kind() == types.MethodExpr {
		return call.Args[0], call.Args[1:]
	}
	x := unparen(call.Fun).(*dst.SelectorExpr).X
	t := sel.Recv()
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		st := derefType(t).Underlying().(*types.Struct)
		f := st.Field(i)
		x = &dst.SelectorExpr{X: x, Sel: dst.NewIdent(f.Name())}
		t = f.Type()
	}
	if _, ok := t.Underlying().(*types.Pointer); ok {
		return x, call.Args
	}
	if u, ok := x.(*dst.StarExpr); ok {
		return u.X, call.Args // &*p is p
	}
	return &dst.UnaryExpr{Op: token.AND, X: x}, call.Args
}

func derefType(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func unparen(e dst.Expr) dst.Expr {
	for {
		p, ok := e.(*dst.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// replaceExpr replaces the cursor's node with n, which takes over its
// decorations (line breaks and comments around it).
func replaceExpr(c *dstutil.Cursor, n dst.Node) {
	old := c.Node()
	*n.Decorations() = *old.Decorations()
	*old.Decorations() = dst.NodeDecs{}
	c.Replace(n)
}

// rewriteGo turns a go statement into a call of shadow.Go with a closure
// that makes the statement's call. The go statement evaluates the function
// value and the arguments before it spawns; so does the rewrite, into
// temporaries in a block of their own, except for what has no effects and
// no value that could change: constants, nil, function literals and names
// of functions.
func (ur *unitRewriter) rewriteGo(c *dstutil.Cursor, s *forkjoin.Spawn, site dst.Expr) {
	g := c.Node().(*dst.GoStmt)
	call := g.Call
	var (
		names []dst.Expr
		vals  []dst.Expr
	)
	temp := func(name string, v dst.Expr) dst.Expr {
		names = append(names, dst.NewIdent(name))
		vals = append(vals, v)
		return dst.NewIdent(name)
	}
	fun := call.Fun
	if lit, ok := unparen(fun).(*dst.FuncLit); ok && len(call.Args) == 0 && (lit.Type.Results == nil || len(lit.Type.Results.List) == 0) {
		// go func() {...}(): the literal is the child.
		replaceStmt(c, g, &dst.ExprStmt{X: rtCall(rtGo, site, unparen(fun))})
		return
	}
	if !ur.stable(s.Call.Fun) {
		fun = temp(namePrefix+"F", fun)
	}
	args := make([]dst.Expr, len(call.Args))
	for i, a := range call.Args {
		if ur.stable(s.Call.Args[i]) {
			args[i] = a
		} else {
			args[i] = temp(namePrefix+"A"+strconv.Itoa(i), a)
		}
	}
	inner := &dst.CallExpr{Fun: fun, Args: args, Ellipsis: call.Ellipsis}
	closure := &dst.FuncLit{
		Type: &dst.FuncType{Func: true, Params: &dst.FieldList{}},
		Body: &dst.BlockStmt{List: []dst.Stmt{&dst.ExprStmt{X: inner}}},
	}
	spawn := &dst.ExprStmt{X: rtCall(rtGo, site, closure)}
	if len(names) == 0 {
		replaceStmt(c, g, spawn)
		return
	}
	assign := &dst.AssignStmt{Lhs: names, Tok: token.DEFINE, Rhs: vals}
	assign.Decs.Before = dst.NewLine
	spawn.Decs.Before = dst.NewLine
	spawn.Decs.After = dst.NewLine
	replaceStmt(c, g, &dst.BlockStmt{List: []dst.Stmt{assign, spawn}})
}

// stable reports whether evaluating e later, inside the spawned closure,
// gives what evaluating it at the go statement gives: constants, nil,
// function literals, and the names of functions, builtins and types.
func (ur *unitRewriter) stable(e ast.Expr) bool {
	e = ast.Unparen(e)
	tv := ur.info.Types[e]
	if tv.Value != nil || tv.IsNil() || tv.IsBuiltin() || tv.IsType() {
		return true
	}
	if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return true // an untyped comparison: keep its type as the call gives it
	}
	switch x := e.(type) {
	case *ast.FuncLit:
		return true
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		_, ok := ur.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if ur.info.Selections[x] != nil {
			return false // a method value binds its receiver now
		}
		_, ok := ur.info.Uses[x.Sel].(*types.Func)
		return ok
	}
	return false
}

// replaceStmt replaces statement old (the cursor's node) with n, which
// takes over its line breaks and comments.
func replaceStmt(c *dstutil.Cursor, old dst.Stmt, n dst.Stmt) {
	decs := old.Decorations()
	nd := n.Decorations()
	nd.Before, nd.After = decs.Before, decs.After
	nd.Start = append(nd.Start, decs.Start...)
	nd.End = append(nd.End, decs.End...)
	if g, ok := old.(*dst.GoStmt); ok {
		nd.End = append(nd.End, g.Decs.Go...)
	}
	*decs = dst.NodeDecs{}
	c.Replace(n)
}
