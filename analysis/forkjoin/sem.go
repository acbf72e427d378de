package forkjoin

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A Semaphore is a buffered channel that bounds how many children of a
// spawn site run at once: a send takes a slot before the spawn (or first
// in the spawned function) and a receive in the spawned function frees it,
//
//	sem <- struct{}{}
//	go func() {
//		defer func() { <-sem }()
//		...
//	}()
//
// Its limit, the channel's capacity, bounds the parallelism as errgroup's
// SetLimit does; the runtime reads it with cap when the send is made.
// Neither operation blocks forever when the child runs inline: the child
// receives what was sent for it (or, sending first, finds a slot its
// earlier siblings freed), so they are no reason against eliding the
// spawn.
type Semaphore struct {
	Spawn *Spawn
	// Chan is the channel as the spawner writes it.
	Chan ast.Expr
	// Acquire is the send that takes a slot, and Release the receive
	// that frees it.
	Acquire *ast.SendStmt
	Release *ast.UnaryExpr
	// InChild reports that the send is in the spawned function, before
	// anything but defer statements, rather than before the spawn.
	InChild bool
}

// semaphores finds the spawns that take a semaphore's slot and removes
// the semaphore's own send and receive from the reasons the spawned
// function may block (it runs before elide). Only a spawned literal or a
// function of the package whose channel is the spawner's own variable (a
// captured or package-level one, the same access path on both sides) is
// matched: a channel passed in as an argument is not followed.
func (c *collector) semaphores() {
	for _, s := range c.res.Spawns {
		if s.Callee == nil || s.Kind == ParlibDo || s.Kind == ParlibFor {
			continue
		}
		sem := c.semaphoreOf(s)
		if sem == nil {
			continue
		}
		c.res.Semaphores = append(c.res.Semaphores, sem)
		c.dropEffect(sem.Release.Pos())
		if sem.InChild {
			c.dropEffect(sem.Acquire.Pos())
		}
	}
}

// semaphoreOf returns the semaphore around spawn s, or nil.
func (c *collector) semaphoreOf(s *Spawn) *Semaphore {
	body := s.Callee.Body
	if body == nil {
		return nil
	}
	var acquire *ast.SendStmt
	inChild := false
	if list, i := c.stmtList(s); list != nil {
		acquire = c.sendBefore(list, i)
	}
	if acquire == nil {
		inChild = true
		for _, st := range body.List {
			if _, ok := st.(*ast.DeferStmt); ok {
				continue
			}
			if send, ok := st.(*ast.SendStmt); ok && c.isBufferable(send.Chan) {
				acquire = send
			}
			break
		}
	}
	if acquire == nil {
		return nil
	}
	key, ok := c.chanKey(acquire.Chan)
	if !ok {
		return nil
	}
	release := c.releaseIn(body, key)
	if release == nil {
		return nil
	}
	return &Semaphore{Spawn: s, Chan: acquire.Chan, Acquire: acquire, Release: release, InChild: inChild}
}

// stmtList returns the statement list that holds spawn s's statement, and
// its index there.
func (c *collector) stmtList(s *Spawn) ([]ast.Stmt, int) {
	var list []ast.Stmt
	at := -1
	ast.Inspect(s.Func.Body, func(n ast.Node) bool {
		if at >= 0 {
			return false
		}
		var stmts []ast.Stmt
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			stmts = n.List
		case *ast.CaseClause:
			stmts = n.Body
		case *ast.CommClause:
			stmts = n.Body
		}
		for i, st := range stmts {
			if st == s.Node {
				list, at = stmts, i
			}
			if e, ok := st.(*ast.ExprStmt); ok && e.X == s.Node {
				list, at = stmts, i
			}
		}
		return true
	})
	return list, at
}

// sendBefore returns the send on a channel nearest before
// list[i], with nothing between but simple statements (wg.Add(1), an
// assignment, a declaration) that cannot receive from it; nil if none.
func (c *collector) sendBefore(list []ast.Stmt, i int) *ast.SendStmt {
	for j := i - 1; j >= 0; j-- {
		switch st := list[j].(type) {
		case *ast.SendStmt:
			if c.isBufferable(st.Chan) {
				return st
			}
			return nil
		case *ast.ExprStmt, *ast.AssignStmt, *ast.DeclStmt, *ast.IncDecStmt:
			if hasReceiveOrLit(st) {
				return nil
			}
		default:
			return nil
		}
	}
	return nil
}

func hasReceiveOrLit(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			found = true
		case *ast.UnaryExpr:
			found = found || n.Op == token.ARROW
		}
		return !found
	})
	return found
}

// isBufferable reports whether e is a channel both sent on and received
// from (a semaphore's type; its capacity is checked at run time).
func (c *collector) isBufferable(e ast.Expr) bool {
	t := c.info.TypeOf(e)
	if t == nil {
		return false
	}
	ch, ok := t.Underlying().(*types.Chan)
	return ok && ch.Dir() == types.SendRecv
}

// chanKey returns the access path of channel e as a key.
func (c *collector) chanKey(e ast.Expr) (string, bool) {
	r, ok := c.ref(e)
	if !ok || r.root == nil {
		return "", false
	}
	return r.key(c.fset), true
}

// releaseIn returns the receive from the channel with key in body that
// frees the slot: a statement <-ch of the body's own, or of a literal the
// body defers (defer func() { <-ch }()).
func (c *collector) releaseIn(body *ast.BlockStmt, key string) *ast.UnaryExpr {
	recv := func(st ast.Stmt) *ast.UnaryExpr {
		e, ok := st.(*ast.ExprStmt)
		if !ok {
			return nil
		}
		u, ok := ast.Unparen(e.X).(*ast.UnaryExpr)
		if !ok || u.Op != token.ARROW {
			return nil
		}
		if k, ok := c.chanKey(u.X); ok && k == key {
			return u
		}
		return nil
	}
	for _, st := range body.List {
		if u := recv(st); u != nil {
			return u
		}
		if d, ok := st.(*ast.DeferStmt); ok {
			if lit, ok := ast.Unparen(d.Call.Fun).(*ast.FuncLit); ok && len(d.Call.Args) == 0 {
				for _, in := range lit.Body.List {
					if u := recv(in); u != nil {
						return u
					}
				}
			}
		}
	}
	return nil
}

// dropEffect removes the effect caused at pos from the facts of every
// function: a semaphore's send or receive, which does not block inline.
func (c *collector) dropEffect(pos token.Pos) {
	for _, fx := range c.facts {
		kept := fx.effects[:0]
		for _, e := range fx.effects {
			if e.at != pos {
				kept = append(kept, e)
			}
		}
		fx.effects = kept
	}
}

// loops sets each spawn's Loops: how many for and range statements of
// its function enclose it.
func (c *collector) loops() {
	for _, s := range c.res.Spawns {
		var path []ast.Node
		ast.PreorderStack(s.Func.Body, nil, func(n ast.Node, stack []ast.Node) bool {
			if path != nil {
				return false
			}
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if n == s.Node {
				path = append([]ast.Node{}, stack...)
				return false
			}
			return true
		})
		for _, n := range path {
			switch n.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				s.Loops++
			}
		}
	}
}
