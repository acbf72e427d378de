package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"

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
// Serial loops.
//
// For the same reason a call in a for or range loop of a function that
// can neither fork nor join, of a callee that cannot either, is not
// instrumented: the dot product in a Cholesky factorization's base case,
// called once per matrix element. Such a call, too, runs inside one
// invocation of its caller, on its strands: its work is its span, and both
// count in full in the caller's own call site, which is instrumented where
// the caller is called from fork/join code. What is lost is how the serial
// caller's time divides among the callees of its loops, which a CPU
// profile shows; what is saved is two events per iteration, which cost
// ten times the callee's own few nanoseconds (cholesky made 3.1 million
// such calls: its profiled run took 1.56x its serial elision with them,
// 1.19x without). The summary and the reports name the callee where it
// loops or calls (leftOutMatters), so the time it takes is not hidden.
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
	skipLoop     = "in a loop of a function that neither forks nor joins"
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
	if why := pl.skipCall(c); why != "" {
		pl.skip(c, why)
		return
	}
	n := 1
	if tup, ok := pl.info.TypeOf(c.Node).(*types.Tuple); ok {
		n = tup.Len()
	}
	after, why := pl.enterPoint(c.Node)
	if n == 1 {
		pl.planValueCall(c, after, why)
		return
	}
	if p, ok := pl.up(c.Node).(*ast.ExprStmt); ok {
		pl.planStmtCall(c, p, after, why)
		return
	}
	pl.planMultiCall(c, n, after, why)
}

// skipCall returns why call c is not instrumented whatever its form, or "".
func (pl *planner) skipCall(c *forkjoin.Call) string {
	switch {
	case c.Func.StartedBy != nil:
		return skipUnprof
	case c.Deferred:
		return skipDeferred
	case pl.prog.inlinable(pl.fset, c.Callee) && !hasLoop(c.Callee):
		return skipInlined
	case c.Callee == c.Func && c.Callee.Serial:
		return skipSerial // see Serial recursion, above
	case c.Func.Serial && c.Callee.Serial && pl.inLoop(c):
		return skipLoop // see Serial loops, above
	}
	return ""
}

// inLoop reports whether call c is in a for or range loop of its caller's
// own body (not of a function literal in it).
func (pl *planner) inLoop(c *forkjoin.Call) bool {
	if c.Func.Body == nil {
		return false
	}
	found := false
	ast.PreorderStack(c.Func.Body, nil, func(n ast.Node, stack []ast.Node) bool {
		if found {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if n != ast.Node(c.Node) {
			return true
		}
		for _, up := range stack {
			switch up.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				found = true
			}
		}
		return false
	})
	return found
}

// funcBody returns the body of f's declaration or literal, or nil.
func funcBody(f *forkjoin.Func) *ast.BlockStmt {
	switch n := f.Node.(type) {
	case *ast.FuncDecl:
		return n.Body
	case *ast.FuncLit:
		return n.Body
	}
	return nil
}

// hasLoop reports whether f's own body (not a function literal in it) has
// a loop. A callee the compiler inlines is instrumented all the same if it
// loops: its time would otherwise go to its caller's strands, and the line
// that bounds the span would vanish from the profile (a quicksort whose
// partition is inlined named pqsort's own strands instead). Straight-line
// callees, the accessors and small helpers that inlining is for, stay
// uninstrumented, as Cilkprof leaves inlined functions.
func hasLoop(f *forkjoin.Func) bool {
	body := funcBody(f)
	if body == nil {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt:
			found = true
		}
		return !found
	})
	return found
}

// skip counts a call not instrumented, and lists it where it may carry
// work (leftOutMatters).
func (pl *planner) skip(c *forkjoin.Call, why string) {
	if c.Callee.Node == nil {
		return // a call into another package: only those admitted are counted (planext.go)
	}
	if pl.stats.CallsSkipped == nil {
		pl.stats.CallsSkipped = make(map[string]int)
	}
	pl.stats.CallsSkipped[why]++
	if !pl.leftOutMatters(c, why) {
		return
	}
	fr := pl.fileOf(c.Node.Pos())
	if fr == nil {
		return
	}
	q := pl.fset.PositionFor(c.Node.Pos(), false)
	rel, err := filepath.Rel(pl.prog.Module.Dir, q.Filename)
	if err != nil {
		rel = q.Filename
	}
	row := siteInfo{File: filepath.ToSlash(rel), Line: q.Line, Column: q.Column, Func: c.Callee.Name, Caller: c.Func.Name, Kind: "call", Why: why}
	pl.leftOut[fr.table] = append(pl.leftOut[fr.table], row)
	pl.stats.LeftOut = append(pl.stats.LeftOut, row.File+":"+strconv.Itoa(row.Line)+" "+row.Func)
}

// leftOutMatters reports whether a call left out for why may carry a real
// share of its caller's time, so that the summary and the reports name
// it: its callee loops or makes calls (not only of builtins or
// conversions). A straight-line callee that calls nothing, the accessor or
// small helper that inlining is for, costs a few nanoseconds and is never
// named; nor is a serial self-recursive call, whose time its outermost
// invocation, which is instrumented, names.
func (pl *planner) leftOutMatters(c *forkjoin.Call, why string) bool {
	if why == skipSerial {
		return false
	}
	return hasLoop(c.Callee) || pl.makesCalls(c.Callee)
}

// makesCalls reports whether f's own body (not a function literal in it)
// calls a function: not a builtin, not a conversion.
func (pl *planner) makesCalls(f *forkjoin.Func) bool {
	if f.Body == nil {
		return false
	}
	found := false
	ast.Inspect(f.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if tv, ok := pl.info.Types[n.Fun]; !ok || !tv.IsType() && !tv.IsBuiltin() {
				found = true
			}
		}
		return !found
	})
	return found
}

// callSite adds the site of an instrumented call.
func (pl *planner) callSite(c *forkjoin.Call) dst.Expr {
	pl.stats.Calls++
	if c.Callee.Node == nil {
		pl.stats.CallsOut++
	}
	return pl.addSite(pl.fileOf(c.Node.Pos()), c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
}

// argsInside warns, when why says so, that the calls the evaluation of c's
// function value and arguments makes are charged to the callee.
func (pl *planner) argsInside(c *forkjoin.Call, why string) {
	if why == "" {
		return
	}
	pl.stats.CallsArgsInside++
	pl.warnings = append(pl.warnings, fmt.Sprintf("%s: the calls in the arguments of %s are charged to it: %s", pl.line(c.Node.Pos()), pl.res.CalleeName(c.Node.Fun), why))
}

// planValueCall instruments a call that yields one value:
// Leave(Enter(site), f(x)), or Leave1(f(a, EnterAfter(g(), site))).
func (pl *planner) planValueCall(c *forkjoin.Call, after ast.Expr, why string) {
	site := pl.callSite(c)
	e := leaveCall{results: 1}
	if after != nil {
		pl.enterAfter[after] = site
	} else {
		pl.argsInside(c, why)
		e.enter = site
		pl.noteGlue(c.Node, pl.up(c.Node), nil)
	}
	pl.edits[c.Node] = e
}

// planStmtCall instruments a call with several results (or none) that is a
// statement of its own: between CallBegin and CallEnd statements, or with
// an EnterAfter and a CallEnd statement.
func (pl *planner) planStmtCall(c *forkjoin.Call, p *ast.ExprStmt, after ast.Expr, why string) {
	if !pl.inList(p) {
		pl.skip(c, skipPosition)
		return
	}
	site := pl.callSite(c)
	if after != nil {
		pl.enterAfter[after] = site
	} else {
		pl.argsInside(c, why)
		pl.before[p] = append(pl.before[p], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
	}
	end := &dst.ExprStmt{X: rtCall(rtCallEnd)}
	if len(pl.after[p]) == 0 {
		pl.noteGlue(c.Node, p, end)
	}
	pl.after[p] = append(pl.after[p], end)
}

// planMultiCall instruments a call with n results, n > 1, that is the one
// value of an assignment, declaration or return: in LeaveN, after a
// CallBegin statement or an EnterAfter.
func (pl *planner) planMultiCall(c *forkjoin.Call, n int, after ast.Expr, why string) {
	stmt, multi, after, why := pl.multiValueStmt(c, after, why)
	if n > 4 {
		pl.skip(c, skipResults)
		return
	}
	if !multi {
		pl.skip(c, skipPosition)
		return
	}
	leave := leaveCall{results: n}
	if after != nil {
		// No statement needed: any position of a multi-valued call will
		// do, a for statement's post statement and an else-if's init too.
		pl.enterAfter[after] = pl.callSite(c)
		pl.edits[c.Node] = leave
		return
	}
	if stmt != nil && !pl.inList(stmt) {
		stmt = pl.initOf(stmt)
	}
	if stmt == nil || !pl.inList(stmt) {
		pl.skip(c, skipPosition)
		return
	}
	site := pl.callSite(c)
	pl.argsInside(c, why)
	pl.before[stmt] = append(pl.before[stmt], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
	pl.edits[c.Node] = leave
}

// multiValueStmt finds the statement whose one value c, a call with
// several results, is: an assignment, a declaration or a return (multi),
// and the statement before which a CallBegin statement would go. Where the
// statement makes calls before c (on an assignment's left side, in an
// earlier spec of a var declaration), a CallBegin statement would go before
// them, so after becomes c's last argument (lastArg), or nil with why.
func (pl *planner) multiValueStmt(c *forkjoin.Call, after ast.Expr, why string) (stmt ast.Stmt, multi bool, _ ast.Expr, _ string) {
	switch p := pl.up(c.Node).(type) {
	case *ast.AssignStmt:
		if len(p.Rhs) == 1 {
			stmt, multi = p, true
			if after == nil && why == "" && slices.ContainsFunc(p.Lhs, pl.hasEvent) {
				// m[g()], x = f(y): a CallBegin statement would go
				// before g.
				after, why = pl.lastArg(c.Node, "the assignment makes calls on its left side")
			}
		}
	case *ast.ValueSpec:
		if len(p.Values) == 1 {
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
		if len(p.Results) == 1 {
			stmt, multi = p, true
		}
	}
	return stmt, multi, after, why
}

// initOf returns the if, switch or for statement whose init statement stmt
// is, or stmt: the init statement runs once, before anything else of the
// statement, so CallBegin can go before that.
func (pl *planner) initOf(stmt ast.Stmt) ast.Stmt {
	switch p := pl.parent[stmt].(type) {
	case *ast.IfStmt:
		if p.Init == stmt {
			return p
		}
	case *ast.SwitchStmt:
		if p.Init == stmt {
			return p
		}
	case *ast.TypeSwitchStmt:
		if p.Init == stmt {
			return p
		}
	case *ast.ForStmt:
		if p.Init == stmt {
			return p
		}
	}
	return stmt
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
	return pl.hasEventBut(e, nil)
}

// hasEventBut is hasEvent, but for the calls that but reports (whose
// operands it still inspects); but may be nil.
func (pl *planner) hasEventBut(e ast.Expr, but func(*ast.CallExpr) bool) bool {
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
				if c, ok := x.(*ast.CallExpr); ok && but != nil && but(c) {
					return true
				}
				found = true
				return false
			}
		}
		return true
	})
	return found
}
