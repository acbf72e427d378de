package forkjoin

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// Facts about code of other packages that the summaries of elide.go do not
// look into: methods that take a context.Context, which may wait for the
// continuation, and functions that run a function argument on a goroutine
// of their own.

// An OutsideWait is a call of a method of another package's type that
// takes a context.Context, such as semaphore.(*Weighted).Acquire, which
// waits until a release or a cancellation that may come from the
// continuation. The summaries assume that calls outside the package return;
// this fact is the exception that makes a spawn not elidable.
type OutsideWait struct {
	// Call is the method call, in the function that has the fact or in
	// one it calls or declares; nil for a spawn of the method itself.
	Call *ast.CallExpr
	Pos  token.Pos // Call's position, or the spawn's
	// Method names the method as [Result.CalleeName] does.
	Method string
	// Via lists the functions of the package called on the way to Call,
	// outermost first, by Func.Name without its package path's directory.
	Via []string
}

// Describe says why the spawned code may wait for the continuation, with
// line formatting Pos: "calls f, which calls p.(*T).M, which takes a
// context and may wait for the continuation, at a.go:12".
func (o *OutsideWait) Describe(line func(token.Pos) string) string {
	if o.Call == nil {
		return "spawns " + o.Method + ", which takes a context and may wait for the continuation"
	}
	var b strings.Builder
	for _, v := range o.Via {
		b.WriteString("calls " + v + ", which ")
	}
	b.WriteString("calls " + o.Method + ", which takes a context and may wait for the continuation, at " + line(o.Pos))
	return b.String()
}

// outside computes Func.Outside for every function of the package: the
// first OutsideWait found in its own code, else through the functions it
// calls, in order, else in the literals it declares. It is a least
// fixpoint: a function in a cycle of calls waits outside if any function
// of the cycle does.
func (c *collector) outside() {
	for _, f := range c.res.Funcs {
		f.Outside = c.ownOutside(f)
	}
	for changed := true; changed; {
		changed = false
		for _, f := range c.res.Funcs {
			if f.Outside != nil {
				continue
			}
			for _, call := range f.Calls {
				if o := call.Callee.Outside; o != nil {
					via := call.Callee.Name[strings.LastIndex(call.Callee.Name, "/")+1:]
					f.Outside = &OutsideWait{Call: o.Call, Pos: o.Pos, Method: o.Method, Via: append([]string{via}, o.Via...)}
					break
				}
			}
			if f.Outside == nil {
				for _, g := range f.Literals {
					if g.Outside != nil {
						f.Outside = g.Outside
						break
					}
				}
			}
			changed = changed || f.Outside != nil
		}
	}
}

// ownOutside returns the first call in f's own code (not in its literals)
// of a method of another package that takes a context, or nil.
func (c *collector) ownOutside(f *Func) *OutsideWait {
	var o *OutsideWait
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if o != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			fn, ok := typeutil.Callee(c.info, n).(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg() == c.pkg || fn.Pkg().Path() == "context" {
				return true
			}
			if takesContext(fn) {
				o = &OutsideWait{Call: n, Pos: n.Pos(), Method: c.res.CalleeName(n.Fun)}
				return false
			}
		}
		return true
	})
	return o
}

// spawnOutside returns the OutsideWait of a spawn: its function's, or, for
// a spawn of a method of another package that is not visible, the method
// itself when it takes a context.
func (c *collector) spawnOutside(s *Spawn) *OutsideWait {
	if s.Callee != nil {
		return s.Callee.Outside
	}
	if sel, ok := ast.Unparen(s.Fun).(*ast.SelectorExpr); ok {
		if fn, ok := c.info.Uses[sel.Sel].(*types.Func); ok && fn.Pkg() != c.pkg && takesContext(fn) {
			return &OutsideWait{Pos: s.Pos, Method: c.res.CalleeName(s.Fun)}
		}
	}
	return nil
}

// takesContext reports whether fn is a method with a context.Context
// parameter.
func takesContext(fn *types.Func) bool {
	sig := fn.Signature()
	if sig.Recv() == nil {
		return false
	}
	for p := range sig.Params().Variables() {
		if n, ok := p.Type().(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context" {
			return true
		}
	}
	return false
}

// goroutineAPIs are functions of other packages known to run a function
// argument on a goroutine of their own.
var goroutineAPIs = map[string]bool{
	"(*testing.B).RunParallel": true,
	"time.AfterFunc":           true,
	"runtime.SetFinalizer":     true,
}

// A GoroutineAPICall is a call of a function of another package known to
// run a function argument on a goroutine of its own, one the spawns of the
// package do not start: (*testing.B).RunParallel, time.AfterFunc,
// runtime.SetFinalizer.
type GoroutineAPICall struct {
	Call *ast.CallExpr
	API  *types.Func
}

// startedBy computes Func.StartedBy: the functions passed to goroutine APIs
// at their calls (a function literal, or a function of the package named
// there), with the literals they declare; the first such call in source
// order wins.
func (c *collector) startedBy(files []*ast.File) {
	var mark func(f *Func, by *GoroutineAPICall)
	mark = func(f *Func, by *GoroutineAPICall) {
		if f == nil || f.StartedBy != nil {
			return
		}
		f.StartedBy = by
		for _, g := range f.Literals {
			mark(g, by)
		}
	}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := typeutil.Callee(c.info, call).(*types.Func)
			if !ok || !goroutineAPIs[fn.Origin().FullName()] {
				return true
			}
			by := &GoroutineAPICall{Call: call, API: fn}
			for _, a := range call.Args {
				switch x := ast.Unparen(a).(type) {
				case *ast.FuncLit:
					mark(c.res.funcs[x], by)
				case *ast.Ident, *ast.SelectorExpr:
					if fn, ok := typeutil.Callee(c.info, &ast.CallExpr{Fun: x}).(*types.Func); ok {
						mark(c.res.FuncOf(fn), by)
					}
				}
			}
			return true
		})
	}
}
