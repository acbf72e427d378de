package forkjoin

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// funcFacts are what a function's own code does, before calls are followed.
type funcFacts struct {
	effects []effect // operations that can wait on another goroutine
	waits   []use    // explicit waits
	locks   []use    // Lock and RLock calls
	calls   []edge   // calls of functions declared in the package
}

// An effect is a reason a function may wait for another goroutine.
type effect struct {
	pos    token.Pos // in the function that has the effect (its own code, or the call that leads to it)
	at     token.Pos // where the cause is
	reason string    // "receives from channel ch at a.go:12"
	chain  []*Func   // the functions the effect was found through, innermost last
}

// A use is an operation on an access path (a wait or a lock).
type use struct {
	r   ref
	pos token.Pos // in the function
	at  token.Pos // where the operation is
}

// An edge is a call of a function declared in the package.
type edge struct {
	callee *Func
	bind   map[types.Object]ref
	pos    token.Pos
	name   string // the callee as the call writes it
}

// walk records the sites and facts of f's own code; nested literals are
// walked as Funcs of their own.
func (c *collector) walk(f *Func) {
	fx := new(funcFacts)
	if c.facts == nil {
		c.facts = make(map[*Func]*funcFacts)
	}
	c.facts[f] = fx
	addEffect := func(n ast.Node, format string, args ...any) {
		fx.effects = append(fx.effects, effect{pos: n.Pos(), at: n.Pos(),
			reason: fmt.Sprintf(format, args...) + " at " + shortLine(c.fset, n.Pos())})
	}
	ast.PreorderStack(f.Body, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			lit := c.res.funcs[n]
			if lit == nil || lit.spawned {
				return false
			}
			if call, ok := parent(stack).(*ast.CallExpr); ok && ast.Unparen(call.Fun) == n {
				if d := c.deferStmt[call]; d != nil {
					lit.deferred, lit.deferStmt = true, d
				} else {
					lit.immediate = true
				}
			}
			f.inlines = append(f.inlines, lit)
			return false

		case *ast.GoStmt:
			c.goCall[n.Call] = true
			s := &Spawn{Kind: GoStmt, Node: n, Pos: n.Pos(), Call: n.Call, Fun: ast.Unparen(n.Call.Fun), Func: f}
			c.addSpawn(f, s)

		case *ast.DeferStmt:
			c.deferStmt[n.Call] = n

		case *ast.CallExpr:
			if c.goCall[n] {
				return true
			}
			c.call(f, fx, n, stack, addEffect)

		case *ast.SendStmt:
			addEffect(n, "sends on channel %s", types.ExprString(n.Chan))

		case *ast.UnaryExpr:
			if n.Op == token.ARROW && !c.isTimerChan(n.X) {
				addEffect(n, "receives from channel %s", types.ExprString(n.X))
			}

		case *ast.SelectStmt:
			addEffect(n, "selects")

		case *ast.RangeStmt:
			if t := c.info.TypeOf(n.X); t != nil {
				if _, ok := t.Underlying().(*types.Chan); ok {
					addEffect(n, "ranges over channel %s", types.ExprString(n.X))
				}
			}

		case *ast.ForStmt:
			if n.Cond == nil {
				label := ""
				if l, ok := parent(stack).(*ast.LabeledStmt); ok {
					label = l.Label.Name
				}
				if !hasExit(n, label) {
					addEffect(n, "loops forever (a for without condition or exit)")
				}
			} else if c.readsAtomic(n.Cond) {
				addEffect(n, "spins until an atomic value changes")
			}
		}
		return true
	})
	c.facts[f] = fx
}

// call records what call does in f.
func (c *collector) call(f *Func, fx *funcFacts, call *ast.CallExpr, stack []ast.Node, addEffect func(ast.Node, string, ...any)) {
	if tv, ok := c.info.Types[call.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return // a conversion or a builtin
	}
	id := classify(c.info, call)
	var (
		jr ref        // the receiver's access path
		jk ObjectKind // the receiver's kind, from the method's receiver type
	)
	if id.recv != nil {
		jr = c.refOrAnon(id.recv)
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.X == id.recv {
			if r, ok := c.receiverRef(sel); ok {
				jr = r // promoted through embedded fields
			}
		}
		if r := id.fn.Signature().Recv(); r != nil {
			jk = objectKind(r.Type())
		}
	}
	switch id.op {
	case opAdd, opDone:
		sig := &Signal{Kind: Done, Node: call, Pos: call.Pos(), Recv: id.recv, Func: f, Join: c.object(jr, jk, id.recv)}
		if id.op == opAdd {
			sig.Kind = Add
			if len(id.args) == 1 {
				if tv := c.info.Types[id.args[0]]; tv.Value != nil {
					sig.Delta, sig.DeltaKnown = constant.Int64Val(constant.ToInt(tv.Value))
				}
			}
		}
		if d := c.deferStmt[call]; d != nil {
			sig.Deferred, sig.deferStmt = true, d
		} else if f.deferred {
			sig.Deferred, sig.deferStmt = true, f.deferStmt
		}
		f.Signals = append(f.Signals, sig)
		c.res.Signals = append(c.res.Signals, sig)

	case opWait, opErrWait, opGroupSync, opTaskWait:
		kind := map[op]WaitKind{opWait: WaitGroupWait, opErrWait: ErrgroupWait, opGroupSync: ParlibSync, opTaskWait: ParlibTaskWait}[id.op]
		w := &Wait{Kind: kind, Node: call, Pos: call.Pos(), Recv: id.recv, Func: f, Join: c.object(jr, jk, id.recv)}
		f.Waits = append(f.Waits, w)
		c.res.Waits = append(c.res.Waits, w)
		fx.waits = append(fx.waits, use{r: jr, pos: call.Pos(), at: call.Pos()})

	case opErrLimit:
		l := &Limit{Node: call, Pos: call.Pos(), Recv: id.recv, Func: f, Join: c.object(jr, jk, id.recv)}
		if len(id.args) == 1 {
			if tv := c.info.Types[id.args[0]]; tv.Value != nil {
				l.N, l.NKnown = constant.Int64Val(constant.ToInt(tv.Value))
			}
		}
		c.res.Limits = append(c.res.Limits, l)

	case opGo, opErrGo, opErrTryGo, opGroupSpawn, opSpawn:
		if len(id.args) != 1 {
			return
		}
		kind := map[op]SpawnKind{opGo: WaitGroupGo, opErrGo: ErrgroupGo, opErrTryGo: ErrgroupTryGo, opGroupSpawn: ParlibGroupSpawn, opSpawn: ParlibSpawn}[id.op]
		s := &Spawn{Kind: kind, Node: call, Pos: call.Pos(), Call: call, Fun: ast.Unparen(id.args[0]), Func: f}
		if id.op == opSpawn {
			s.taskVar = storedIn(call, stack)
		} else {
			s.Join = c.object(jr, jk, id.recv)
		}
		c.addSpawn(f, s)

	case opDo, opFor:
		w := &Wait{Kind: ParlibImplicit, Node: call, Pos: call.Pos(), Func: f,
			Join: c.object(ref{anchor: call.Pos(), call: true, exact: true}, ParlibCall, call)}
		var funs []ast.Expr
		if id.op == opDo {
			funs = call.Args
		} else if len(call.Args) > 0 {
			funs = call.Args[len(call.Args)-1:] // the body
		}
		for _, fun := range funs {
			kind := ParlibFor
			if id.op == opDo {
				kind = ParlibDo
			}
			s := &Spawn{Kind: kind, Node: call, Pos: call.Pos(), Call: call, Fun: ast.Unparen(fun), Func: f, Wait: w}
			if call.Ellipsis.IsValid() {
				s.unknown = fmt.Sprintf("spawns the functions in %s, whose code is not visible here", types.ExprString(fun))
			}
			c.addSpawn(f, s)
			w.Spawns = append(w.Spawns, s)
		}
		f.Waits = append(f.Waits, w)
		c.res.Waits = append(c.res.Waits, w)
		fx.waits = append(fx.waits, use{r: w.Join.ref, pos: call.Pos(), at: call.Pos()})

	case opCondWait:
		addEffect(call, "waits on sync.Cond %s", types.ExprString(id.recv))
	case opGosched:
		addEffect(call, "yields with runtime.Gosched, as a spin wait does")
	case opGoexit:
		addEffect(call, "calls runtime.Goexit, which inline would end the spawning goroutine")
	case opLock:
		fx.locks = append(fx.locks, use{r: jr, pos: call.Pos(), at: call.Pos()})

	default:
		callee, _, methodExpr := c.res.funcOf(call.Fun)
		if callee != nil {
			recvSel, _ := ast.Unparen(call.Fun).(*ast.SelectorExpr)
			if methodExpr || callee.Obj == nil || callee.Obj.Signature().Recv() == nil {
				recvSel = nil
			}
			bind, _ := c.bindCall(callee, recvSel, call.Args, call.Ellipsis.IsValid())
			fx.calls = append(fx.calls, edge{callee: callee, bind: bind, pos: call.Pos(), name: types.ExprString(call.Fun)})
			cl := &Call{Node: call, Callee: callee, Func: f, Deferred: c.deferStmt[call] != nil, bind: bind, res: c.res}
			f.Calls = append(f.Calls, cl)
			c.res.Calls = append(c.res.Calls, cl)
			c.res.calls[call] = cl
			return
		}
		if why := c.unknownCall(call, id.fn); why != "" {
			addEffect(call, "%s", why)
		}
	}
}

// unknownCall returns why a call of code the analyzer cannot see might wait
// on another goroutine, or "" if it is assumed to return.
func (c *collector) unknownCall(call *ast.CallExpr, fn *types.Func) string {
	if fn == nil {
		return fmt.Sprintf("calls function value %s, whose code is not visible here", types.ExprString(call.Fun))
	}
	if pkg := fn.Pkg(); pkg != nil {
		switch {
		case pkg.Path() == "time", pkg.Path() == "sync/atomic":
			return ""
		case pkg.Path() == "testing" && fn.Name() != "Run" && fn.Name() != "Parallel":
			return ""
		}
	}
	name := fn.FullName()
	var operands []types.Type
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s := c.info.Selections[sel]; s != nil && s.Kind() == types.MethodVal {
			operands = append(operands, s.Recv())
		}
	}
	if sig, ok := c.info.TypeOf(call.Fun).(*types.Signature); ok {
		for p := range sig.Params().Variables() {
			operands = append(operands, p.Type())
		}
	}
	for _, t := range operands {
		if what := carriesSync(t); what != "" {
			return fmt.Sprintf("calls %s, which takes %s", name, what)
		}
	}
	// A function value passed to code outside the standard library (a
	// sibling package of the module, such as conc's panics.Catcher.Try,
	// which its WaitGroup.Go spawns) may be called there, and its code is
	// not visible here either.
	if pkg := fn.Pkg(); pkg != nil && !isStd(pkg.Path()) {
		for _, a := range call.Args {
			if c.opaqueFunc(a) {
				return fmt.Sprintf("passes function value %s to %s, whose code is not visible here", types.ExprString(a), name)
			}
		}
	}
	return ""
}

// isStd reports whether path is a standard library package's: its first
// element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// opaqueFunc reports whether e is a function value whose code is not
// visible: not a literal and not a function or method named directly.
func (c *collector) opaqueFunc(e ast.Expr) bool {
	if _, ok := c.info.TypeOf(e).Underlying().(*types.Signature); !ok {
		return false
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.FuncLit:
		return false
	case *ast.Ident, *ast.SelectorExpr:
		if _, ok := typeutil.Callee(c.info, &ast.CallExpr{Fun: x}).(*types.Func); ok {
			return false
		}
	}
	return true
}

// isTimerChan reports whether e is time.After(d) or time.Tick(d): a receive
// from it waits a finite time.
func (c *collector) isTimerChan(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn, ok := typeutil.Callee(c.info, call).(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == "time" && (fn.Name() == "After" || fn.Name() == "Tick")
}

// readsAtomic reports whether e calls a sync/atomic function or method.
func (c *collector) readsAtomic(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if fn, ok := typeutil.Callee(c.info, call).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "sync/atomic" {
				found = true
			}
		}
		return !found
	})
	return found
}

// hasExit reports whether the body of loop, a for statement without
// condition labelled label (or ""), can leave it: a return, a goto, a break
// that targets it, or a call of panic.
func hasExit(loop *ast.ForStmt, label string) bool {
	found := false
	var visit func(n ast.Node, inner bool) // inner: inside a nested breakable statement
	visit = func(n ast.Node, inner bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			if found {
				return false
			}
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				found = true
			case *ast.BranchStmt:
				switch {
				case n.Tok == token.GOTO:
					found = true
				case n.Tok == token.BREAK && n.Label != nil && n.Label.Name == label:
					found = true
				case n.Tok == token.BREAK && n.Label == nil && !inner:
					found = true
				}
			case *ast.CallExpr:
				if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "panic" {
					found = true
				}
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if !inner {
					visit(n, true)
					return false
				}
			}
			return true
		})
	}
	visit(loop.Body, false)
	return found
}

// storedIn returns the variable that the result of call is assigned to or
// declared with, or nil.
func storedIn(call *ast.CallExpr, stack []ast.Node) ast.Expr {
	switch p := parent(stack).(type) {
	case *ast.AssignStmt:
		if len(p.Lhs) == len(p.Rhs) {
			for i, r := range p.Rhs {
				if r == call {
					return p.Lhs[i]
				}
			}
		}
	case *ast.ValueSpec:
		if len(p.Names) == len(p.Values) {
			for i, v := range p.Values {
				if v == call {
					return p.Names[i]
				}
			}
		}
	}
	return nil
}

func parent(stack []ast.Node) ast.Node {
	if len(stack) == 0 {
		return nil
	}
	return stack[len(stack)-1]
}

func (c *collector) addSpawn(f *Func, s *Spawn) {
	s.res = c.res
	if lit, ok := s.Fun.(*ast.FuncLit); ok {
		s.Lit, s.Closure = lit, true
		if lf := c.res.funcs[lit]; lf != nil {
			lf.spawned = true
		}
	}
	f.Spawns = append(f.Spawns, s)
	c.res.Spawns = append(c.res.Spawns, s)
}
