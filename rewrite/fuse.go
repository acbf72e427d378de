package rewrite

import (
	"go/ast"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Spawns of one call.
//
// Fork/join Go spawns a call far more often than anything else:
// g.Go(func() error { x = fib(n-1); return nil }),
// go func() { defer wg.Done(); quicksort(a[:p]) }(), wg.Go(func() { walk(t.left) }).
// Instrumented as written, that call is a site of its own inside the
// spawn's: two more events per spawn (four clock reads and the engine's
// bookkeeping; 7 events per fib node instead of 5, and about a seventh
// of fib's profiled CPU time), for a row whose work and span are the spawn's but
// for the few instructions the literal adds around the call.
//
// So when the body of a spawned function literal is that one call, the
// call is not a site: the spawn's site names the callee (SiteInfo.Func
// main.fib, not main.fib.func1), and the callee's own strands are the
// spawn's local work, as a go f(x) spawn's are. The body may be
//
//   - the call as a statement, an assignment or definition of its
//     results (x = f(a), x, err := f(a), out[i] += f(a)), or return f(a);
//   - optionally preceded by defer wg.Done() (a join contribution of the
//     spawn) and, but for return f(a), followed by return or return nil;
//
// and the call's function value, receiver, arguments and the left side of
// its assignment make no call and no receive (forkjoin's events: not
// builtins or conversions), so that nothing but the call runs in the
// child, but for calls of leaf helpers: functions of the package that the
// compiler inlines, with no loop and no call or receive of their own
// (matmul's x(c, 0, 1), lu's m.quad(0, 1, h), the accessors that pick a
// block of a matrix). Those are no sites in any case, and run a few
// instructions in whichever strand evaluates them, so the spawn's row
// still measures the call, and the fork/join codes that divide their data
// this way (matmul, lu, strassen, fft, cholesky) lose two events per spawn
// too. The call is one that would be instrumented (a function of the
// package that planCall keeps, or a call into another package that
// planext.go admits); one that would not be stays as it is, and the spawn
// keeps the literal's name. A parlib loop's body is never fused: it runs
// once per index, its spawn once per chunk.
//
// The top-caller and top-call-site values of every other site keep their
// meaning. The engine finds recursion by the function containing a site
// (SiteInfo.Caller, shadow/sites.go) and by the site itself, and the
// spawn's Caller is the function that spawns, as before: in fib the
// spawn of fib(n-1) is a top-caller invocation exactly when it was, and
// its top-caller work is still that of fib(n-1), so it and the call of
// fib(n-2) stay in the golden ratio (Cilkprof, Schardl et al., SPAA 2015,
// Figure 7). What goes is the inner call's row, Caller main.fib.func1,
// whose values the spawn's repeat.

// fuseCall returns the call that spawn t's function literal is made of,
// when the call is not to be a site of its own (see above), or nil.
// calls are the calls that may become sites, by node.
func (pl *planner) fuseCall(s, t *forkjoin.Spawn, calls map[*ast.CallExpr]*forkjoin.Call) *forkjoin.Call {
	if t.Lit == nil || t.Lit.Body == nil || s.Kind == forkjoin.ParlibFor {
		return nil
	}
	call := pl.lonelyCall(t, t.Lit.Body.List, func(x *ast.CallExpr) bool { return pl.leafCall(x, calls) })
	if call == nil {
		return nil
	}
	c := calls[call]
	if c == nil || c.Func == nil || c.Func.Node != ast.Node(t.Lit) {
		return nil
	}
	if c.Callee.Node != nil && pl.skipCall(c) != "" {
		return nil // not a site anyway
	}
	return c
}

// lonelyCall returns the one call that the statements of spawn t's
// literal make, where they have the shape that fuseCall accepts, or nil.
// leaf reports the calls that its operands may make.
func (pl *planner) lonelyCall(t *forkjoin.Spawn, list []ast.Stmt, leaf func(*ast.CallExpr) bool) *ast.CallExpr {
	if len(list) > 0 && pl.isDeferredDone(t, list[0]) {
		list = list[1:]
	}
	if len(list) == 2 {
		if r, ok := list[1].(*ast.ReturnStmt); !ok || !pl.bareReturn(r) {
			return nil
		}
		if _, ok := list[0].(*ast.ReturnStmt); ok {
			return nil
		}
		list = list[:1]
	}
	if len(list) != 1 {
		return nil
	}
	var rhs ast.Expr
	var lhs []ast.Expr
	switch st := list[0].(type) {
	case *ast.ExprStmt:
		rhs = st.X
	case *ast.AssignStmt:
		if len(st.Rhs) != 1 {
			return nil
		}
		rhs, lhs = st.Rhs[0], st.Lhs
	case *ast.ReturnStmt:
		if len(st.Results) != 1 {
			return nil
		}
		rhs = st.Results[0]
	default:
		return nil
	}
	call, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if !ok || !pl.isEvent(call) {
		return nil
	}
	// Nothing else may run in the child: no call but of a leaf helper,
	// and no receive, in the function value, receiver or arguments, nor
	// on the left side.
	if pl.hasEventBut(call.Fun, leaf) {
		return nil
	}
	for _, e := range append(lhs, call.Args...) {
		if pl.hasEventBut(e, leaf) {
			return nil
		}
	}
	return call
}

// leafCall reports whether call x is of a leaf helper (see Spawns of one
// call, above): a call that may become a site (calls) of a function of the
// package whose body the compiler inlines and that neither loops nor
// calls nor receives.
func (pl *planner) leafCall(x *ast.CallExpr, calls map[*ast.CallExpr]*forkjoin.Call) bool {
	c := calls[x]
	if c == nil || c.Callee == nil || c.Callee.Node == nil || pl.skipCall(c) != skipInlined {
		return false
	}
	body := funcBody(c.Callee)
	if body == nil {
		return false
	}
	leaf := true
	ast.Inspect(body, func(n ast.Node) bool {
		if !leaf {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case ast.Expr:
			if pl.hasEvent(x) {
				leaf = false
			}
			return false
		}
		return true
	})
	return leaf
}

// isDeferredDone reports whether st is defer wg.Done(), a join
// contribution of spawn t: the runtime signals the join when the child
// ends, whether it is fused or not.
func (pl *planner) isDeferredDone(t *forkjoin.Spawn, st ast.Stmt) bool {
	d, ok := st.(*ast.DeferStmt)
	if !ok {
		return false
	}
	for _, sig := range t.Signals {
		if sig.Kind == forkjoin.Done && sig.Node == ast.Node(d.Call) && len(d.Call.Args) == 0 && !pl.hasEvent(sig.Recv) {
			return true
		}
	}
	return false
}

// bareReturn reports whether r is return or return nil.
func (pl *planner) bareReturn(r *ast.ReturnStmt) bool {
	switch len(r.Results) {
	case 0:
		return true
	case 1:
		return pl.info.Types[r.Results[0]].IsNil()
	}
	return false
}
