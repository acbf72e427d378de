package rewrite

import (
	"go/ast"

	"github.com/dave/dst"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Events with nothing between.
//
// Serial mode reads the measure twice per event, once to end the strand
// before it and once to start the one after, so that the engine's own time
// is in no strand (shadow/engine.go, restart). Two events with no code of
// the program between them need only one read each: the strand between
// them is empty. The rewriter marks two such pairs, the common end of a
// fork/join function (shadow/glue.go):
//
//   - A call whose statement a wait follows directly,
//     y := fib(n-2); g.Wait(), or quicksort(a[p+1:]); wg.Wait(): its end
//     is LeaveGlue or CallEndGlue, which leave the measure unread, and the
//     wait's strand ends where the call's did. Two reads of fib's ten per
//     node. The call is the whole right side of an assignment to
//     variables, or a statement of its own; the wait (wg.Wait or errgroup's
//     Wait, on an operand that makes no call) is the next statement of the
//     same list, as a statement, the right side of an assignment to
//     variables, the init statement of an if, or a return's one result.
//     Nothing runs between the two events but the assignment and the
//     wait's own code (errgroup's Wait, which returns at once in serial
//     mode, where every child has ended).
//
//   - A defer wg.Done() that is the first statement of a function literal
//     that a go statement spawns: deferred first, it runs last, right
//     before the child's end, which signals nothing itself. Its helper is
//     WaitGroupDoneLast, for which serial mode takes no event: the child's
//     end contributes to wg. One event of three per spawn of stencil's
//     go func() { defer wg.Done(); g.relax(i, j, hi) }(). So is a
//     wg.Done() that is the literal's last statement where the literal
//     defers nothing: no deferred call runs after it.
//
// Either way the engine computes what it computes from the plain event
// stream with an empty strand between the two events: the same work, span
// and measurements of every site (shadow's TestOracleGluedEvents). What
// changes is only which few nanoseconds the strands hold: the assignment
// and the wait's own code are in no strand (as the engine's own time is
// not), and the return of the spawned literal after its Done is in the
// path that reaches wg. Parallel accounting takes both as the plain
// events.

// A glue is a call end that may be glued to the wait after it.
type glue struct {
	call *ast.CallExpr // the instrumented call, a leaveCall edit
	end  *dst.ExprStmt // its CallEnd statement, or nil for a leaveCall
	stmt ast.Stmt      // the statement the call ends
	wait *ast.CallExpr // the wait the next statement makes first
}

// noteGlue notes the end of instrumented call c, whose statement is stmt,
// as a glue if a wait follows it directly (see above): end is its CallEnd
// statement, or nil where the call is in Leave(Enter(site), c).
func (pl *planner) noteGlue(c *ast.CallExpr, stmt ast.Node, end *dst.ExprStmt) {
	s, ok := stmt.(ast.Stmt)
	if !ok || !pl.endsStmt(c, s) {
		return
	}
	next := pl.nextStmt(s)
	if next == nil {
		return
	}
	if w := pl.firstWait(next); w != nil {
		pl.glues = append(pl.glues, glue{call: c, end: end, stmt: s, wait: w})
	}
}

// endsStmt reports whether call c is the last thing statement s does: s is
// c itself, or the assignment of c to variables.
func (pl *planner) endsStmt(c *ast.CallExpr, s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ExprStmt:
		return ast.Unparen(s.X) == c
	case *ast.AssignStmt:
		return len(s.Rhs) == 1 && ast.Unparen(s.Rhs[0]) == c && onlyIdents(s.Lhs)
	}
	return false
}

// onlyIdents reports whether every expression of list is a name: assigning
// to it runs no code that could panic.
func onlyIdents(list []ast.Expr) bool {
	for _, x := range list {
		if _, ok := ast.Unparen(x).(*ast.Ident); !ok {
			return false
		}
	}
	return true
}

// stmtValue returns the expression that statement s evaluates last, where
// nothing but an assignment to names follows it: an expression
// statement's, or the one right side of an assignment to names; or nil.
func stmtValue(s ast.Stmt) ast.Expr {
	switch s := s.(type) {
	case *ast.ExprStmt:
		return s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 && onlyIdents(s.Lhs) {
			return s.Rhs[0]
		}
	}
	return nil
}

// nextStmt returns the statement after s in its list, or nil.
func (pl *planner) nextStmt(s ast.Stmt) ast.Stmt {
	var list []ast.Stmt
	switch p := pl.parent[s].(type) {
	case *ast.BlockStmt:
		list = p.List
	case *ast.CaseClause:
		list = p.Body
	case *ast.CommClause:
		list = p.Body
	}
	for i, t := range list {
		if t == s && i+1 < len(list) {
			return list[i+1]
		}
	}
	return nil
}

// firstWait returns the wait that statement s makes before anything else,
// in one of the forms above, or nil.
func (pl *planner) firstWait(s ast.Stmt) *ast.CallExpr {
	x := stmtValue(s)
	switch s := s.(type) {
	case *ast.IfStmt:
		if s.Init != nil {
			return pl.firstWait(s.Init)
		}
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			x = s.Results[0]
		}
	}
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok || len(call.Args) > 0 || pl.hasEvent(call.Fun) {
		return nil
	}
	return call
}

// planGlues glues the noted call ends whose wait was planned as one and
// where the plan inserts nothing between them.
func (pl *planner) planGlues() {
	pl.planSpawnGlues()
	for _, g := range pl.glues {
		h, ok := pl.edits[g.wait].(helperCall)
		if !ok {
			continue
		}
		if name := h.helper.(*dst.SelectorExpr).Sel.Name; name != rtWaitGroupWait && name != rtGroupWait {
			continue
		}
		next := pl.nextStmt(g.stmt)
		if len(pl.before[next]) > 0 {
			continue
		}
		if g.end == nil {
			e, ok := pl.edits[g.call].(leaveCall)
			if !ok || e.enter == nil || len(pl.after[g.stmt]) > 0 {
				continue
			}
			e.glue = true
			pl.edits[g.call] = e
			pl.stats.Glued++
			continue
		}
		if after := pl.after[g.stmt]; len(after) != 1 || after[0] != dst.Stmt(g.end) {
			continue
		}
		g.end.X = rtCall(rtCallEndGlue)
		pl.stats.Glued++
	}
}

// planSpawnGlues marks the site of each noted spawn statement as Glued
// where the next statement's first event is the begin of an instrumented
// call: a Leave(Enter(S), f(x)) that is the statement's whole right side
// or the statement, or a CallBegin statement inserted before it.
func (pl *planner) planSpawnGlues() {
	for _, s := range pl.spawnGlues {
		next := pl.nextStmt(s)
		if next == nil || len(pl.after[s]) > 0 || !pl.beginsWithCall(next) {
			continue
		}
		var node ast.Node = s
		if x, ok := s.(*ast.ExprStmt); ok {
			node = ast.Unparen(x.X)
		}
		switch e := pl.edits[node].(type) {
		case goSpawn:
			e.site = rtCall(rtGlued, dst.Clone(e.site).(dst.Expr))
			pl.edits[node] = e
		case helperCall:
			e.site = rtCall(rtGlued, dst.Clone(e.site).(dst.Expr))
			pl.edits[node] = e
		default:
			continue
		}
		pl.stats.Glued++
	}
}

// beginsWithCall reports whether the first event statement s makes, as
// planned, is the begin of an instrumented call.
func (pl *planner) beginsWithCall(s ast.Stmt) bool {
	if before := pl.before[s]; len(before) > 0 {
		x, ok := before[0].(*dst.ExprStmt)
		if !ok {
			return false
		}
		call, ok := x.X.(*dst.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*dst.SelectorExpr)
		return ok && sel.Sel.Name == rtCallBegin
	}
	call, ok := ast.Unparen(stmtValue(s)).(*ast.CallExpr)
	if !ok {
		return false
	}
	e, ok := pl.edits[call].(leaveCall)
	return ok && e.enter != nil
}

// noteDoneLast notes the Done of go statement s that is its child's last
// action: defer wg.Done(), first in the literal it spawns, or wg.Done() as
// the literal's last statement where the literal defers nothing (a
// deferred call would run after it).
func (pl *planner) noteDoneLast(s *forkjoin.Spawn) {
	if s.Lit == nil || s.Lit.Body == nil || len(s.Lit.Body.List) == 0 {
		return
	}
	list := s.Lit.Body.List
	if first := list[0]; pl.isDeferredDone(s, first) {
		pl.doneLast[first.(*ast.DeferStmt).Call] = true
		return
	}
	last, ok := list[len(list)-1].(*ast.ExprStmt)
	if !ok || defers(s.Lit.Body) {
		return
	}
	call, ok := ast.Unparen(last.X).(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return
	}
	for _, sig := range s.Signals {
		if sig.Kind == forkjoin.Done && sig.Node == ast.Node(call) && !pl.hasEvent(sig.Recv) {
			pl.doneLast[call] = true
			return
		}
	}
}

// defers reports whether body defers a call, outside the function
// literals in it.
func defers(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.DeferStmt:
			found = true
		case *ast.FuncLit:
			return false
		}
		return !found
	})
	return found
}
