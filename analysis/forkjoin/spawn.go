package forkjoin

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
)

// finishSpawn resolves what a spawn spawns and which join object it signals.
func (c *collector) finishSpawn(s *Spawn) {
	callee, _, methodExpr := c.res.funcOf(s.Fun)
	s.Callee = callee
	recvSel, _ := s.Fun.(*ast.SelectorExpr)
	if methodExpr || callee == nil || callee.Obj == nil || callee.Obj.Signature().Recv() == nil {
		recvSel = nil
	}
	if s.Kind == GoStmt {
		s.bind, s.Args = c.bindCall(callee, recvSel, s.Call.Args, s.Call.Ellipsis.IsValid())
		if callee == nil {
			s.Args = s.Call.Args
		}
	} else {
		s.bind, _ = c.bindCall(callee, recvSel, nil, false)
	}
	if callee == nil && s.unknown == "" {
		s.unknown = c.invisibleSpawn(s)
	}

	switch s.Kind {
	case GoStmt:
		c.goStmtJoin(s)
		return
	case WaitGroupGo, ErrgroupGo, ErrgroupTryGo, ParlibGroupSpawn:
		// Join was set from the receiver when the call was walked.
	case ParlibSpawn:
		if s.taskVar != nil {
			s.Join = c.object(c.refOrAnon(s.taskVar), ParlibTask, s.taskVar)
		} else {
			s.Join = c.object(ref{anchor: s.Call.Pos(), call: true, exact: true}, ParlibTask, s.Call)
		}
	case ParlibDo, ParlibFor:
		s.Join = s.Wait.Join
	}
	s.Contrib = AtReturn
	sig := &Signal{Kind: Return, Node: s.Fun, Pos: s.Pos, Join: s.Join, Func: callee, Spawn: s}
	if callee != nil {
		sig.Node, sig.Pos = callee.Node, callee.Body.Rbrace
	}
	s.Signals = []*Signal{sig}
	c.res.Signals = append(c.res.Signals, sig)
}

// invisibleSpawn returns why a spawn of code the package does not declare is
// not elidable, or "" for a function of another package that takes nothing
// to wait on.
func (c *collector) invisibleSpawn(s *Spawn) string {
	if id, ok := uninstantiated(s.Fun).(*ast.Ident); ok {
		if b, ok := c.info.Uses[id].(*types.Builtin); ok {
			if b.Name() == "panic" {
				return "spawns panic, which inline would panic the spawning goroutine"
			}
			return "" // close, print, copy, delete, clear: they return
		}
	}
	fn := namedFunc(c.info, s.Fun)
	if fn == nil || fn.Signature().Recv() != nil && types.IsInterface(fn.Signature().Recv().Type()) {
		return fmt.Sprintf("spawns function value %s, whose code is not visible here", types.ExprString(s.Fun))
	}
	if s.Kind == GoStmt {
		return c.unknownCall(s.Call, fn)
	}
	// wg.Go(pkg.F) or wg.Go(x.M): F takes no arguments; only the receiver can
	// carry something to wait on.
	if sel, ok := s.Fun.(*ast.SelectorExpr); ok {
		if s := c.info.Selections[sel]; s != nil {
			if what := carriesSync(s.Recv()); what != "" {
				return fmt.Sprintf("spawns %s, whose receiver holds %s", fn.FullName(), what)
			}
		}
	}
	return ""
}

// goStmtJoin finds the join object of a go statement from the Done and Add
// calls of the spawned function (and of the literals it defers or calls in
// place), with parameters bound to the statement's arguments.
func (c *collector) goStmtJoin(s *Spawn) {
	if s.Callee == nil {
		return
	}
	var cands []*Signal
	for _, f := range append([]*Func{s.Callee}, inlineLits(s.Callee)...) {
		for _, sig := range f.Signals {
			if sig.Contributes() {
				cands = append(cands, sig)
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b *Signal) int { return ComparePos(c.fset, a.Pos, b.Pos) })
	for _, sig := range cands {
		j := s.Map(sig.Join)
		if j.Root == nil && !j.ref.call {
			continue // the callee's own object, or one the spawner does not bind
		}
		if s.Join == nil {
			if j.Kind != WaitGroup {
				continue
			}
			s.Join = c.objectTyped(j.ref, WaitGroup, c.operandFor(s, sig.Join), sig.Join.Type)
		}
		if j.Key == s.Join.Key {
			s.Signals = append(s.Signals, sig)
		}
	}
	if s.Join == nil {
		return
	}
	s.Contrib = ExplicitDone
	for _, sig := range s.Signals {
		if sig.Deferred && coversBody(s.Callee.Body, sig.deferStmt) {
			s.Contrib = DeferredDone
		}
	}
}

// operandFor returns the spawner's expression for j, a join object named in
// the spawned function: the argument bound to the parameter j is, or j's own
// expression when it is not a bare parameter.
func (c *collector) operandFor(s *Spawn, j *JoinObject) ast.Expr {
	if v, ok := j.Root.(*types.Var); ok && len(j.Path) == 0 {
		if i := slices.Index(s.Callee.Params, v); i >= 0 && i < len(s.Args) {
			return s.Args[i]
		}
	}
	if _, bound := s.bind[j.Root]; bound {
		return nil // named in the callee's terms only
	}
	return j.Expr
}

// inlineLits returns the literals f defers or calls in place, where a Done
// still belongs to f's goroutine and runs before f returns.
func inlineLits(f *Func) []*Func {
	var lits []*Func
	for _, l := range f.inlines {
		if l.deferred || l.immediate {
			lits = append(lits, l)
			lits = append(lits, inlineLits(l)...)
		}
	}
	return lits
}

// coversBody reports whether d is a top-level statement of body that no
// return precedes, so that it runs on every path that returns normally.
func coversBody(body *ast.BlockStmt, d *ast.DeferStmt) bool {
	for _, st := range body.List {
		if st == d {
			return true
		}
		returns := false
		ast.Inspect(st, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				returns = true
			}
			return !returns
		})
		if returns {
			return false
		}
	}
	return false
}
