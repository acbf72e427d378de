package forkjoin

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
)

// maxPath bounds the selections of an access path. Recursive functions that
// pass p.next to themselves would otherwise grow paths without end while
// summaries are propagated; a longer path is cut and made inexact.
const maxPath = 6

// A ref is an access path: a root variable and selections from it, or an
// anchor (a call or an unnamed expression) when there is no variable.
type ref struct {
	root   types.Object
	anchor token.Pos // the call or expression, when root is nil
	call   bool      // the anchor is a call that creates the object (parlib.Do/For/Spawn)
	path   []string
	exact  bool
}

// with returns r extended by the selections sel.
func (r ref) with(sel ...string) ref {
	r.path = append(slices.Clip(r.path), sel...)
	for _, s := range sel {
		if s == "[]" {
			r.exact = false
		}
	}
	if len(r.path) > maxPath {
		r.path = r.path[:maxPath:maxPath]
		r.exact = false
	}
	return r
}

// key returns r's identity within the package (see JoinObject.Key).
func (r ref) key(fset *token.FileSet) string {
	var b strings.Builder
	switch {
	case r.root == nil && r.call:
		fmt.Fprintf(&b, "call@%s", shortPos(fset, r.anchor))
	case r.root == nil:
		fmt.Fprintf(&b, "?@%s", shortPos(fset, r.anchor))
	case isPackageLevel(r.root):
		fmt.Fprintf(&b, "%s.%s", r.root.Pkg().Path(), r.root.Name())
	default:
		fmt.Fprintf(&b, "%s@%s", r.root.Name(), shortPos(fset, r.root.Pos()))
	}
	for _, p := range r.path {
		if p != "[]" {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// shortPos formats pos as "file.go:line:col", with the file's base name:
// files of one package share a directory.
func shortPos(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column)
}

// shortLine formats pos as "file.go:line", for messages.
func shortLine(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

func isPackageLevel(obj types.Object) bool {
	return obj.Pkg() != nil && obj.Parent() == obj.Pkg().Scope()
}

// name returns the access path as source would write it.
func (r ref) name() string {
	if r.root == nil {
		return "an unnamed join object"
	}
	var b strings.Builder
	b.WriteString(r.root.Name())
	for _, p := range r.path {
		if p != "[]" {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// ref resolves e to an access path. It fails for expressions that do not
// denote a variable, a field of one, an element of one or a call.
func (c *collector) ref(e ast.Expr) (ref, bool) { return c.refDepth(e, 0) }

func (c *collector) refDepth(e ast.Expr, depth int) (ref, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := c.info.ObjectOf(e).(*types.Var)
		if !ok || v.IsField() {
			return ref{}, false
		}
		if a, ok := c.alias[v]; ok && depth < 8 {
			if r, ok := c.refDepth(a, depth+1); ok {
				return r, true
			}
		}
		return ref{root: v, exact: true}, true
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return c.refDepth(e.X, depth)
		}
	case *ast.StarExpr:
		return c.refDepth(e.X, depth)
	case *ast.SelectorExpr:
		sel := c.info.Selections[e]
		if sel == nil { // a qualified identifier: pkg.Var
			if v, ok := c.info.Uses[e.Sel].(*types.Var); ok {
				return ref{root: v, exact: true}, true
			}
			return ref{}, false
		}
		if sel.Kind() != types.FieldVal {
			return ref{}, false
		}
		r, ok := c.refDepth(e.X, depth)
		if !ok {
			return ref{}, false
		}
		idx := sel.Index()
		return r.with(append(embeddedPath(sel.Recv(), idx[:len(idx)-1]), e.Sel.Name)...), true
	case *ast.IndexExpr:
		if tv, ok := c.info.Types[e.X]; ok && tv.IsValue() {
			if _, isSig := tv.Type.Underlying().(*types.Signature); !isSig {
				r, ok := c.refDepth(e.X, depth)
				if !ok {
					return ref{}, false
				}
				return r.with("[]"), true
			}
		}
	case *ast.CallExpr:
		if c.createsObject(e) {
			return ref{anchor: e.Pos(), call: true, exact: true}, true
		}
		return ref{anchor: e.Pos()}, true
	}
	return ref{}, false
}

// refOrAnon resolves e, or names it by its position when it cannot be
// resolved; such an object is inexact and matches nothing else.
func (c *collector) refOrAnon(e ast.Expr) ref {
	if r, ok := c.ref(e); ok {
		return r
	}
	return ref{anchor: e.Pos()}
}

// receiverRef resolves the receiver of a method selected by sel (a method
// value or a method call's function), following promotion through embedded
// fields: t.Wait() on a struct that embeds sync.WaitGroup names t.WaitGroup.
func (c *collector) receiverRef(fun *ast.SelectorExpr) (ref, bool) {
	sel := c.info.Selections[fun]
	r, ok := c.ref(fun.X)
	if !ok || sel == nil {
		return r, ok
	}
	idx := sel.Index()
	return r.with(embeddedPath(sel.Recv(), idx[:len(idx)-1])...), true
}

// embeddedPath returns the names of the embedded fields that index selects,
// starting from type t.
func embeddedPath(t types.Type, index []int) []string {
	var names []string
	for _, i := range index {
		st, ok := deref(t).Underlying().(*types.Struct)
		if !ok || i >= st.NumFields() {
			break
		}
		f := st.Field(i)
		names = append(names, f.Name())
		t = f.Type()
	}
	return names
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// object returns the registered join object for r, creating it.
func (c *collector) object(r ref, kind ObjectKind, e ast.Expr) *JoinObject {
	key := r.key(c.fset)
	if j, ok := c.res.objects[key]; ok {
		return j
	}
	j := c.res.newObject(r, key, kind, e)
	c.res.objects[key] = j
	c.res.Objects = append(c.res.Objects, j)
	return j
}

// objectTyped is object for an expression that may be nil, with its type.
func (c *collector) objectTyped(r ref, kind ObjectKind, e ast.Expr, t types.Type) *JoinObject {
	j := c.object(r, kind, e)
	if j.Type == nil {
		j.Type = t
	}
	return j
}

func (res *Result) newObject(r ref, key string, kind ObjectKind, e ast.Expr) *JoinObject {
	j := &JoinObject{Key: key, Kind: kind, Root: r.root, Path: r.path, Exact: r.exact, Expr: e, ref: r}
	if e != nil {
		if tv, ok := res.info.Types[e]; ok && tv.Type != nil {
			j.Type = deref(tv.Type)
		}
	}
	return j
}

// lookup returns the registered join object for r, or a new unregistered
// one: it never modifies res, which analyzers may share.
func (res *Result) lookup(r ref, kind ObjectKind, e ast.Expr, t types.Type) *JoinObject {
	key := r.key(res.fset)
	if j, ok := res.objects[key]; ok {
		return j
	}
	return &JoinObject{Key: key, Kind: kind, Root: r.root, Path: r.path, Exact: r.exact, Expr: e, Type: t, ref: r}
}

// rebase translates r, named inside callee, into the terms of a caller that
// bound callee's parameters to bind. A path rooted at a parameter the caller
// does not bind, or at a variable declared in callee, becomes an anonymous
// reference that matches nothing. It reports false when r is rooted
// elsewhere (a captured or package-level variable) and so is the same in
// both.
func (res *Result) rebase(r ref, bind map[types.Object]ref, callee *Func) (ref, bool) {
	if r.root == nil || callee == nil {
		return r, false
	}
	if b, ok := bind[r.root]; ok {
		return b.with(r.path...), true
	}
	if v, ok := r.root.(*types.Var); ok && slices.Contains(callee.Params, v) {
		// A parameter the caller does not bind (parlib passes the loop
		// index; a variadic tail): it names nothing the caller knows.
		return ref{anchor: r.root.Pos()}, true
	}
	if callee.Body.Pos() <= r.root.Pos() && r.root.Pos() < callee.Body.End() {
		// A variable declared in the callee is a new one at each call,
		// even when the caller is the same function (recursion): it is
		// never an object the caller already has.
		return ref{anchor: r.root.Pos()}, true
	}
	return r, false
}
