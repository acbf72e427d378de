package rewrite

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// goroutineAPIs are functions of other packages known to run a function
// argument on a goroutine of their own.
var goroutineAPIs = map[string]bool{
	"(*testing.B).RunParallel": true,
	"time.AfterFunc":           true,
	"runtime.SetFinalizer":     true,
}

// unprofiled returns the functions of the package whose code may run on a
// goroutine that the runtime does not know, each with why: one that
// goroutineAPIs start (a spawn of the package's own, elidable or not, gets
// a shadow state of its own, and is instrumented). Such a function is left
// alone, and so is everything it calls, spawns or declares, transitively; a
// call of a function value or an interface method there could reach any
// function of the package whose value is taken, or any method of that
// name, so those are left alone too. The runtime ignores events from
// goroutines it does not know, so what another package's goroutines call
// back into is harmless, and not profiled.
func unprofiled(ur *unitRewriter) map[*forkjoin.Func]string {
	res := ur.res
	out := make(map[*forkjoin.Func]string)
	var work []*forkjoin.Func
	taint := func(f *forkjoin.Func, why string) {
		if f == nil {
			return
		}
		if _, ok := out[f]; ok {
			return
		}
		out[f] = why
		work = append(work, f)
	}
	byObj := make(map[*types.Func]*forkjoin.Func)
	children := make(map[*forkjoin.Func][]*forkjoin.Func)
	for _, f := range res.Funcs {
		if f.Obj != nil {
			byObj[f.Obj] = f
		}
		if f.Outer != nil {
			children[f.Outer] = append(children[f.Outer], f)
		}
	}
	var escaping []*forkjoin.Func // computed on first need
	escapingDone := false
	taintEscaping := func(why string) {
		if !escapingDone {
			escaping, escapingDone = ur.escaping(byObj), true
		}
		for _, f := range escaping {
			taint(f, why)
		}
	}
	taintMethods := func(name, why string) {
		for _, f := range res.Funcs {
			if f.Obj != nil && f.Obj.Name() == name && f.Obj.Signature().Recv() != nil {
				taint(f, why)
			}
		}
	}
	// funcsOf taints the functions an expression denotes.
	taintExpr := func(e ast.Expr, why string) {
		switch x := ast.Unparen(e).(type) {
		case *ast.FuncLit:
			taint(res.Func(x), why)
			return
		case *ast.Ident, *ast.SelectorExpr:
			if fn, ok := typeutil.Callee(ur.info, &ast.CallExpr{Fun: x}).(*types.Func); ok {
				if f := byObj[fn.Origin()]; f != nil {
					taint(f, why)
				}
				return
			}
		}
		if _, ok := ur.info.TypeOf(e).(*types.Signature); ok {
			taintEscaping(why)
		}
	}

	for _, file := range ur.u.pkg.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := typeutil.Callee(ur.info, call).(*types.Func)
			if !ok || !goroutineAPIs[fn.Origin().FullName()] {
				return true
			}
			why := fmt.Sprintf("%s at %s runs it on a goroutine of its own", fn.Name(), ur.line(call.Pos()))
			for _, a := range call.Args {
				if _, ok := ur.info.TypeOf(a).(*types.Signature); ok {
					taintExpr(a, why)
				}
			}
			return true
		})
	}

	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		why := out[f]
		for _, c := range children[f] {
			taint(c, why)
		}
		for _, c := range f.Calls {
			taint(c.Callee, why)
		}
		for _, s := range f.Spawns {
			for _, t := range spawnsOf(s) {
				if t.Callee != nil {
					taint(t.Callee, why)
				} else {
					taintExpr(t.Fun, why)
				}
			}
		}
		// Calls of code the analysis cannot see: function values and
		// interface methods.
		ast.Inspect(f.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // a Func of its own, tainted as a child
			case *ast.CallExpr:
				if tv := ur.info.Types[n.Fun]; tv.IsType() || tv.IsBuiltin() {
					return true
				}
				switch fn := typeutil.Callee(ur.info, n).(type) {
				case nil:
					taintEscaping(why)
				case *types.Func:
					if recv := fn.Signature().Recv(); recv != nil && types.IsInterface(recv.Type()) {
						taintMethods(fn.Name(), why)
					}
				case *types.Var:
					taintEscaping(why)
				}
			}
			return true
		})
	}
	return out
}

// escaping returns the functions of the package whose value is taken:
// literals that are not called where they appear nor spawned, and
// functions and methods named other than in a call.
func (ur *unitRewriter) escaping(byObj map[*types.Func]*forkjoin.Func) []*forkjoin.Func {
	spawned := make(map[ast.Node]bool)
	for _, s := range ur.res.Spawns {
		spawned[s.Fun] = true
	}
	seen := make(map[*forkjoin.Func]bool)
	var out []*forkjoin.Func
	add := func(f *forkjoin.Func) {
		if f != nil && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	// called reports whether e (a function name or literal) is the function
	// of a call, possibly instantiated.
	called := func(e ast.Node) bool {
		p := ur.up(e)
		switch x := p.(type) {
		case *ast.IndexExpr:
			if x.X == e {
				e, p = x, ur.up(x)
			}
		case *ast.IndexListExpr:
			if x.X == e {
				e, p = x, ur.up(x)
			}
		}
		call, ok := p.(*ast.CallExpr)
		return ok && ast.Unparen(call.Fun) == e
	}
	for _, f := range ur.res.Funcs {
		if lit, ok := f.Node.(*ast.FuncLit); ok && !called(lit) && !spawned[lit] {
			add(f)
		}
	}
	var ids []*ast.Ident
	for id, obj := range ur.info.Uses {
		if _, ok := obj.(*types.Func); ok {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b *ast.Ident) int { return forkjoin.ComparePos(ur.fset, a.Pos(), b.Pos()) })
	for _, id := range ids {
		fn := ur.info.Uses[id].(*types.Func)
		f := byObj[fn.Origin()]
		if f == nil {
			continue
		}
		var e ast.Node = id
		if sel, ok := ur.parent[id].(*ast.SelectorExpr); ok && sel.Sel == id {
			e = sel
		}
		if !called(e) && !spawned[e] {
			add(f)
		}
	}
	return out
}

// waitsOutside returns why running f inline could wait for its
// continuation through code of another package that the analysis does not
// look into, or "": f, or what it calls or declares in the package, calls a
// method of another package's type that takes a context.Context, such as
// semaphore.(*Weighted).Acquire, which waits until a release or a
// cancellation that may come from the continuation. forkjoin assumes such
// calls return; see the notes in the package documentation.
func (ur *unitRewriter) waitsOutside(f *forkjoin.Func) string {
	if ur.waits == nil {
		ur.waits = make(map[*forkjoin.Func]string)
		ur.children = make(map[*forkjoin.Func][]*forkjoin.Func)
		for _, g := range ur.res.Funcs {
			if g.Outer != nil {
				ur.children[g.Outer] = append(ur.children[g.Outer], g)
			}
		}
	}
	if why, ok := ur.waits[f]; ok {
		return why
	}
	ur.waits[f] = "" // cycles: assume not, until found
	why := ""
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			fn, ok := typeutil.Callee(ur.info, n).(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg() == ur.u.pkg.Types || fn.Pkg().Path() == "context" {
				return true
			}
			sig := fn.Signature()
			if sig.Recv() == nil {
				return true
			}
			for p := range sig.Params().Variables() {
				if isContext(p.Type()) {
					why = fmt.Sprintf("calls %s, which takes a context and may wait for the continuation, at %s", ur.calleeName(n.Fun), ur.line(n.Pos()))
					return false
				}
			}
		}
		return true
	})
	for _, c := range f.Calls {
		if why == "" && c.Callee != nil {
			if w := ur.waitsOutside(c.Callee); w != "" {
				why = fmt.Sprintf("calls %s, which %s", c.Callee.Name[strings.LastIndex(c.Callee.Name, "/")+1:], w)
			}
		}
	}
	for _, g := range ur.children[f] {
		if why == "" {
			why = ur.waitsOutside(g)
		}
	}
	ur.waits[f] = why
	return why
}

func isContext(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}
