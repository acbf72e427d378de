package forkjoin

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The indexes of a Result: the package's functions by object, node and
// call, and the resolution of a function value to the function the package
// declares for it. Everything that consumes a Result resolves callees here,
// so that the analyzer, the vet checks and the rewriter agree on what a
// call calls.

// FuncOf returns the declaration of fn (or of its generic origin) in the
// package, or nil when the package does not declare it with a body.
func (r *Result) FuncOf(fn *types.Func) *Func {
	if fn == nil {
		return nil
	}
	return r.byObj[fn.Origin()]
}

// Callee returns the package's function that the function value e denotes:
// a literal, a function or method named directly (also as a method value
// or method expression, or instantiated), or a local variable assigned
// exactly one literal; nil when its code is not visible here.
func (r *Result) Callee(e ast.Expr) *Func {
	f, _, _ := r.funcOf(e)
	return f
}

// CallOf returns the static call of one of the package's functions that
// call is (see Result.Calls), or nil.
func (r *Result) CallOf(call *ast.CallExpr) *Call { return r.calls[call] }

// funcOf returns the package's declaration of the function that e denotes
// (a literal, a function, a method value or expression, a variable holding
// one literal), and for a method value the receiver expression.
func (r *Result) funcOf(e ast.Expr) (f *Func, recv ast.Expr, methodExpr bool) {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.IndexExpr: // an instantiation f[T]
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.FuncLit:
		return r.funcs[e], nil, false
	case *ast.Ident:
		switch obj := r.info.Uses[e].(type) {
		case *types.Func:
			return r.byObj[obj.Origin()], nil, false
		case *types.Var:
			if lit := r.litVar[obj]; lit != nil {
				return r.funcs[lit], nil, false
			}
		}
	case *ast.SelectorExpr:
		sel := r.info.Selections[e]
		if sel == nil {
			if fn, ok := r.info.Uses[e.Sel].(*types.Func); ok {
				return r.byObj[fn.Origin()], nil, false
			}
			if v, ok := r.info.Uses[e.Sel].(*types.Var); ok && r.litVar[v] != nil {
				return r.funcs[r.litVar[v]], nil, false
			}
			return nil, nil, false
		}
		fn, ok := sel.Obj().(*types.Func)
		if !ok {
			return nil, nil, false
		}
		switch sel.Kind() {
		case types.MethodVal:
			return r.byObj[fn.Origin()], e, false
		case types.MethodExpr:
			return r.byObj[fn.Origin()], nil, true
		}
	}
	return nil, nil, false
}

// uninstantiated returns fun without parentheses and without the type
// arguments of a generic function's instantiation.
func uninstantiated(fun ast.Expr) ast.Expr {
	fun = ast.Unparen(fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		return ast.Unparen(x.X)
	case *ast.IndexListExpr:
		return ast.Unparen(x.X)
	}
	return fun
}

// namedFunc returns the function or method that fun names directly (a
// name, a qualified name, a method value or expression, instantiated or
// not), or nil: a field or variable of function type, a literal, a call.
func namedFunc(info *types.Info, fun ast.Expr) *types.Func {
	switch e := uninstantiated(fun).(type) {
	case *ast.Ident:
		fn, _ := info.Uses[e].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel := info.Selections[e]; sel != nil {
			fn, _ := sel.Obj().(*types.Func) // nil for a field
			return fn
		}
		fn, _ := info.Uses[e.Sel].(*types.Func)
		return fn
	}
	return nil
}

// CalleeName names the function that fun denotes, as the compiler would:
// "p.F", "p.(*T).M", "p.(*T[...]).M" with p the package path, or the
// expression itself when it is not a function or method named directly.
// It is the name of a spawned or called function whose code the package
// does not declare.
func (r *Result) CalleeName(fun ast.Expr) string {
	fun = uninstantiated(fun)
	fn := namedFunc(r.info, fun)
	if fn == nil || fn.Pkg() == nil {
		return types.ExprString(fun)
	}
	name := fn.Name()
	if recv := fn.Signature().Recv(); recv != nil {
		t := recv.Type()
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		tname := types.TypeString(t, func(*types.Package) string { return "" })
		if i := strings.IndexByte(tname, '['); i >= 0 {
			tname = tname[:i] + "[...]"
		}
		if ptr {
			tname = "(*" + tname + ")"
		}
		name = tname + "." + name
	}
	return fn.Pkg().Path() + "." + name
}

// Enclosing returns the innermost function of the package whose syntax
// holds pos, or nil (a package-level initializer, another file).
func (r *Result) Enclosing(pos token.Pos) *Func {
	var in *Func
	for _, f := range r.Funcs {
		if f.Node.Pos() <= pos && pos < f.Node.End() && (in == nil || f.Node.Pos() > in.Node.Pos()) {
			in = f
		}
	}
	return in
}

// File returns the file of the package that holds pos, or nil.
func (r *Result) File(pos token.Pos) *ast.File {
	for _, f := range r.files {
		if f.FileStart <= pos && pos < f.FileEnd {
			return f
		}
	}
	return nil
}
