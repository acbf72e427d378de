package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/dave/dst"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Serial recursion.
//
// A self-recursive call of a function that can neither fork nor join (a
// tree build, a serial sum: forkjoin's Func.Serial) is not instrumented.
// Such a call runs entirely inside the invocation of the same function that
// called it, on one strand sequence: its work is its span, and both already
// count in full in the outermost invocation of the recursion, which stays
// instrumented. What is lost is only how the recursion's own local work
// divides among its recursive call sites, which recursion folding merges
// into one calling context anyway. What is saved is two events per call, in
// the programs whose recursion is finest: treesum makes 48 million of these
// calls, and instrumenting them made it 5x slower. Cilkprof (§7) skips
// inlinable callees for the same reason.
//
// Whether a call is instrumented changes which sites the profile shows,
// never the work or the span: these come from the strands and the fork and
// join events, which are all still there.

// Reasons a call of a function of the package is not instrumented.
const (
	skipInlined  = "the compiler inlines the callee"
	skipDeferred = "deferred"
	skipUnprof   = "on a goroutine that is not profiled"
	skipPosition = "in a position where a statement cannot be inserted"
	skipResults  = "more than 4 results"
	skipSerial   = "self-recursive in a function that neither forks nor joins"
)

// planCall instruments a call of a function of the package: as
// Leave(Enter(site), f(x)) where it yields one value, between CallBegin
// and CallEnd statements where it is a statement of its own, and with a
// CallBegin statement before and LeaveN around it where it yields several
// values to an assignment, declaration or return.
//
// Those forms begin the invocation before the function value and the
// arguments are evaluated, which the caller does in the program. Where
// that evaluation makes calls or receives (f(a, g())), the invocation
// begins after them instead, with EnterAfter around the last of them
// (enterPoint): f(a, EnterAfter(g(), site)), in Leave1 where the call
// yields one value, LeaveN where it yields several, and before a CallEnd
// statement where it is a statement. Where no such expression can be
// wrapped the call keeps its form and a warning says so.
func (pl *planner) planCall(c *forkjoin.Call) {
	skip := func(why string) {
		if pl.stats.CallsSkipped == nil {
			pl.stats.CallsSkipped = make(map[string]int)
		}
		pl.stats.CallsSkipped[why]++
	}
	if c.Func.StartedBy != nil {
		skip(skipUnprof)
		return
	}
	switch {
	case c.Deferred:
		skip(skipDeferred)
		return
	case pl.prog.inlinable(pl.fset, c.Callee):
		skip(skipInlined)
		return
	case c.Callee == c.Func && c.Callee.Serial:
		skip(skipSerial) // see Serial recursion, above
		return
	}
	n := 1
	if tup, ok := pl.info.TypeOf(c.Node).(*types.Tuple); ok {
		n = tup.Len()
	}
	fr := pl.fileOf(c.Node.Pos())
	after, why := pl.enterPoint(c.Node)
	// inside warns that the calls the call's evaluation makes are charged
	// to the callee.
	inside := func(why string) {
		if why == "" {
			return
		}
		pl.stats.CallsArgsInside++
		pl.warnings = append(pl.warnings, fmt.Sprintf("%s: the calls in the arguments of %s are charged to it: %s", pl.line(c.Node.Pos()), pl.res.CalleeName(c.Node.Fun), why))
	}
	var (
		stmt  ast.Stmt // the statement before which CallBegin goes, for n != 1
		multi bool     // the call is the one value of an assignment, declaration or return
	)
	switch p := pl.up(c.Node).(type) {
	case *ast.ExprStmt:
		if n != 1 {
			if !pl.inList(p) {
				skip(skipPosition)
				return
			}
			site := pl.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
			if after != nil {
				pl.enterAfter[after] = site
			} else {
				inside(why)
				pl.before[p] = append(pl.before[p], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
			}
			pl.after[p] = append(pl.after[p], &dst.ExprStmt{X: rtCall(rtCallEnd)})
			pl.stats.Calls++
			return
		}
	case *ast.AssignStmt:
		if n != 1 && len(p.Rhs) == 1 {
			stmt, multi = p, true
			if after == nil && why == "" && slices.ContainsFunc(p.Lhs, pl.hasEvent) {
				// m[g()], x = f(y): a CallBegin statement would go
				// before g.
				after, why = pl.lastArg(c.Node, "the assignment makes calls on its left side")
			}
		}
	case *ast.ValueSpec:
		if n != 1 && len(p.Values) == 1 {
			multi = true
			if d, ok := pl.parent[pl.parent[p]].(*ast.DeclStmt); ok {
				stmt = d
				for _, q := range d.Decl.(*ast.GenDecl).Specs {
					if q == p {
						break
					}
					if after == nil && why == "" && slices.ContainsFunc(q.(*ast.ValueSpec).Values, pl.hasEvent) {
						after, why = pl.lastArg(c.Node, "the declaration makes calls before it")
					}
				}
			}
		}
	case *ast.ReturnStmt:
		if n != 1 && len(p.Results) == 1 {
			stmt, multi = p, true
		}
	}
	if n == 1 {
		site := pl.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
		pl.stats.Calls++
		if after != nil {
			pl.enterAfter[after] = site
		} else {
			inside(why)
		}
		e := leaveCall{results: 1}
		if after == nil {
			e.enter = site
		}
		pl.edits[c.Node] = e
		return
	}
	if n > 4 {
		skip(skipResults)
		return
	}
	if !multi {
		skip(skipPosition)
		return
	}
	leave := leaveCall{results: n}
	if after != nil {
		// No statement needed: any position of a multi-valued call will
		// do, a for statement's post statement and an else-if's init too.
		site := pl.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
		pl.stats.Calls++
		pl.enterAfter[after] = site
		pl.edits[c.Node] = leave
		return
	}
	if stmt != nil && !pl.inList(stmt) {
		// The init statement of an if, switch or for runs once, before
		// anything else of the statement: CallBegin can go before that.
		switch p := pl.parent[stmt].(type) {
		case *ast.IfStmt:
			if p.Init == stmt {
				stmt = p
			}
		case *ast.SwitchStmt:
			if p.Init == stmt {
				stmt = p
			}
		case *ast.TypeSwitchStmt:
			if p.Init == stmt {
				stmt = p
			}
		case *ast.ForStmt:
			if p.Init == stmt {
				stmt = p
			}
		}
	}
	if stmt == nil || !pl.inList(stmt) {
		skip(skipPosition)
		return
	}
	site := pl.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
	pl.stats.Calls++
	inside(why)
	pl.before[stmt] = append(pl.before[stmt], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
	pl.edits[c.Node] = leave
}

// enterPoint returns the expression that EnterAfter wraps for call: the
// last call or receive (event) that evaluating its function value and its
// arguments makes, or nil if they make none. Go makes those events in
// lexical left-to-right order, a call after the events of its own operands
// (The Go Programming Language Specification, "Order of evaluation"), so
// the last one is found by descending into the last operand that makes
// any, down to an event. What is evaluated after it makes none, so its
// order relative to the EnterAfter does not matter.
//
// The wrapped expression is a call or a receive: a value, never
// addressable, typed by itself (an untyped expression such as g() > 0 or
// 1<<g() is descended into, never wrapped), and single-valued, so that
// EnterAfter(x, site) is x with the same type and meaning wherever x was.
// An && or || whose right side makes events, which may not be evaluated,
// is wrapped whole, if its type is its own or bool (EnterAfter(x, site) is
// bool for an untyped boolean x). Where there is no expression to wrap, why
// says so and the result is nil: an argument that is a call with several
// results, f(g()), which has no single value to wrap, and an untyped && or
// || that the call converts to a boolean type other than bool.
func (pl *planner) enterPoint(call *ast.CallExpr) (after ast.Expr, why string) {
	e := ast.Expr(call)
	for {
		var last ast.Expr
		for _, c := range children(e) {
			if x, ok := c.(ast.Expr); ok && pl.hasEvent(x) {
				last = x
			}
		}
		if last == nil {
			return nil, "" // the events are above: none if e is call
		}
		if b, ok := ast.Unparen(last).(*ast.BinaryExpr); ok && (b.Op == token.LAND || b.Op == token.LOR) && pl.hasEvent(b.Y) {
			// b.Y may not be evaluated: b is wrapped whole, if it has
			// the type that EnterAfter's inference gives it.
			if !pl.untyped(b) || types.Identical(pl.info.TypeOf(b), types.Typ[types.Bool]) {
				return last, ""
			}
			return nil, "its last argument that makes calls is an untyped " + b.Op.String() + " of another type than bool"
		}
		if pl.isEvent(last) {
			if _, ok := pl.info.TypeOf(last).(*types.Tuple); ok {
				return nil, "its argument is a call with several results"
			}
			return last, ""
		}
		e = last
	}
}

// lastArg returns call's last argument for EnterAfter to wrap where the
// statement of the call makes calls before it and the call's function and
// arguments make none: an argument typed by itself, whose order relative
// to the EnterAfter does not matter. It returns nil and why if there is
// none (no argument, or an untyped one, nil, or a generic function).
func (pl *planner) lastArg(call *ast.CallExpr, why string) (ast.Expr, string) {
	if len(call.Args) == 0 {
		return nil, why
	}
	a := call.Args[len(call.Args)-1]
	if tv := pl.info.Types[a]; tv.IsNil() || tv.Type == nil || pl.untyped(a) {
		return nil, why
	}
	// A generic function instantiated by the parameter's type, f(g) with
	// func g[T any](T): EnterAfter(g, site) could not infer it.
	id := ast.Unparen(a)
	switch x := id.(type) {
	case *ast.IndexExpr:
		id = ast.Unparen(x.X)
	case *ast.IndexListExpr:
		id = ast.Unparen(x.X)
	}
	if sel, ok := id.(*ast.SelectorExpr); ok {
		id = sel.Sel
	}
	if x, ok := id.(*ast.Ident); ok {
		if fn, ok := pl.info.Uses[x].(*types.Func); ok && fn.Signature().TypeParams().Len() > 0 {
			return nil, why
		}
	}
	return a, ""
}

// untyped reports whether e, a boolean or numeric expression, is untyped
// by itself, its type set by its context: a comparison, or an operation on
// untyped constants and untyped expressions (1<<n with n a variable).
func (pl *planner) untyped(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		c, ok := pl.info.Uses[x].(*types.Const)
		return ok && isUntyped(c.Type())
	case *ast.SelectorExpr:
		c, ok := pl.info.Uses[x.Sel].(*types.Const)
		return ok && pl.info.Selections[x] == nil && isUntyped(c.Type())
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && x.Op != token.AND && pl.untyped(x.X)
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return true
		case token.SHL, token.SHR:
			return pl.untyped(x.X)
		}
		return pl.untyped(x.X) && pl.untyped(x.Y)
	}
	return false
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}

// children returns the direct children of n, in source order.
func children(n ast.Node) []ast.Node {
	var cs []ast.Node
	ast.Inspect(n, func(c ast.Node) bool {
		if c == n {
			return true
		}
		if c != nil {
			cs = append(cs, c)
		}
		return false
	})
	return cs
}

// isEvent reports whether e is a call of a function (not a builtin, not a
// conversion) or a receive: the operations whose order the spec fixes
// besides && and ||, and those that run code or wait.
func (pl *planner) isEvent(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.CallExpr:
		tv := pl.info.Types[x.Fun]
		return !tv.IsType() && !tv.IsBuiltin()
	case *ast.UnaryExpr:
		return x.Op == token.ARROW
	}
	return false
}

// hasEvent reports whether evaluating e makes a call or a receive
// (isEvent). The bodies of function literals are not evaluated, nor are the
// operands of constant expressions (unsafe.Sizeof(g())) or types.
func (pl *planner) hasEvent(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case ast.Expr:
			if tv, ok := pl.info.Types[x]; ok && (tv.Value != nil || tv.IsType()) {
				return false
			}
			if pl.isEvent(x) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}
