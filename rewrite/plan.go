package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/dave/dst"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// planUnit decides what to do at every site, in source order (by file name,
// then offset: forkjoin.ComparePos), numbering the sites of each table as
// it goes.
func (pl *planner) planUnit() *plan {
	pl.plan = &plan{
		edits:      make(map[ast.Node]nodeEdit),
		enterAfter: make(map[ast.Node]dst.Expr),
		before:     make(map[ast.Stmt][]dst.Stmt),
		after:      make(map[ast.Stmt][]dst.Stmt),
		testMain:   -1,
	}
	type item struct {
		pos   token.Pos
		spawn *forkjoin.Spawn
		call  *forkjoin.Call
	}
	var items []item
	seenCall := make(map[ast.Node]bool) // parlib.Do/For: one rewrite per call
	for _, s := range pl.res.Spawns {
		if s.Wait != nil {
			if seenCall[s.Node] {
				continue
			}
			seenCall[s.Node] = true
		}
		items = append(items, item{pos: s.Pos, spawn: s})
	}
	calls := make(map[*ast.CallExpr]*forkjoin.Call) // the calls that may become sites (fuse.go)
	for _, c := range pl.res.Calls {
		items = append(items, item{pos: c.Node.Pos(), call: c})
		calls[c.Node] = c
	}
	for _, c := range pl.externalCalls() {
		items = append(items, item{pos: c.Node.Pos(), call: c})
		calls[c.Node] = c
	}
	pl.fused = make(map[*ast.CallExpr]bool)
	pl.doneLast = make(map[*ast.CallExpr]bool)
	slices.SortStableFunc(items, func(a, b item) int { return forkjoin.ComparePos(pl.fset, a.pos, b.pos) })
	for _, it := range items {
		if pl.fileOf(it.pos) == nil {
			continue
		}
		switch {
		case it.spawn != nil:
			pl.planSpawn(it.spawn, calls)
		case pl.fused[it.call.Node]:
			pl.stats.CallsFused++ // its spawn's site stands for it (fuse.go)
		case it.call.Callee.Node == nil:
			pl.planExternal(it.call) // a call into another package (planext.go)
		default:
			pl.planCall(it.call)
		}
	}
	pl.planRegions()
	for _, sig := range pl.res.Signals {
		pl.planSignal(sig)
	}
	for _, w := range pl.res.Waits {
		pl.planWait(w)
	}
	pl.planGlues()
	pl.planLimits()
	pl.planSemaphores()
	pl.planProgram()
	pl.planTests()
	// The left-out calls go last, after every numbered site: generated
	// files register them apart (gen.go), and site numbers stay as planned.
	for tab := range pl.tables {
		pl.tables[tab] = append(pl.tables[tab], pl.leftOut[tab]...)
	}
	return pl.plan
}

// spawnsOf returns the spawns made by one spawn site: the one spawn, or
// every function of a parlib.Do or For call.
func spawnsOf(s *forkjoin.Spawn) []*forkjoin.Spawn {
	if s.Wait != nil {
		return s.Wait.Spawns
	}
	return []*forkjoin.Spawn{s}
}

// calls are the calls that may become sites, by node: a spawned literal
// made of one of them names the callee, and the call is no site (fuse.go).
func (pl *planner) planSpawn(s *forkjoin.Spawn, calls map[*ast.CallExpr]*forkjoin.Call) {
	fr := pl.fileOf(s.Pos)
	spawns := spawnsOf(s)
	if why := pl.unprofiled(s.Func); why != "" {
		pl.stats.SpawnsNotProfiled += len(spawns)
		pl.warnings = append(pl.warnings, fmt.Sprintf("%s: spawn not profiled: %s", pl.line(s.Pos), why))
		return
	}
	pl.stats.Spawns += len(spawns)
	goroutine := pl.staysGoroutine(s)
	if goroutine != "" {
		// The runtime runs it as a real goroutine under parallel
		// accounting, in serial mode too (shadow.SiteInfo.Goroutine).
		pl.stats.SpawnsGoroutine += len(spawns)
		pl.warnings = append(pl.warnings, fmt.Sprintf("%s: spawn runs as a goroutine in serial mode too: %s", pl.line(s.Pos), goroutine))
	}
	var sites []dst.Expr
	for _, t := range spawns {
		name := pl.res.CalleeName(t.Fun)
		if t.Callee != nil {
			name = t.Callee.Name
		}
		if c := pl.fuseCall(s, t, calls); c != nil {
			name = c.Callee.Name
			pl.fused[c.Node] = true
		}
		sites = append(sites, pl.addSite(fr, t.Pos, name, s.Func.Name, "spawn"))
		pl.noteSpawn(fr, s, t, sites[len(sites)-1])
		if goroutine != "" {
			t := &pl.tables[fr.table]
			(*t)[len(*t)-1].Goroutine = true
		}
	}
	site := sites[0]
	switch s.Kind {
	case forkjoin.GoStmt:
		pl.noteDoneLast(s)
		pl.spawnGlues = append(pl.spawnGlues, s.Node.(ast.Stmt))
		e := goSpawn{site: site, stableFun: pl.stable(s.Call.Fun)}
		for _, a := range s.Call.Args {
			e.stableArgs = append(e.stableArgs, pl.stable(a))
		}
		pl.edits[s.Node] = e
	case forkjoin.WaitGroupGo, forkjoin.ErrgroupGo, forkjoin.ErrgroupTryGo, forkjoin.ParlibGroupSpawn:
		helper := map[forkjoin.SpawnKind]string{
			forkjoin.WaitGroupGo:      rtWaitGroupGo,
			forkjoin.ErrgroupGo:       rtGroupGo,
			forkjoin.ErrgroupTryGo:    rtGroupTryGo,
			forkjoin.ParlibGroupSpawn: rtParlibGroupSpawn,
		}[s.Kind]
		pl.edits[s.Node] = helperCall{helper: rt(helper), site: site, recv: pl.receiverOf(s.Call)}
		if s.Kind == forkjoin.WaitGroupGo || s.Kind == forkjoin.ErrgroupGo {
			if st, ok := pl.up(s.Node).(*ast.ExprStmt); ok {
				pl.spawnGlues = append(pl.spawnGlues, st)
			}
		}
	case forkjoin.ParlibSpawn:
		pl.edits[s.Node] = helperCall{helper: rt(rtParlibSpawn), site: site, fun: true}
	case forkjoin.ParlibDo, forkjoin.ParlibFor:
		helper := rtParlibDo
		if s.Kind == forkjoin.ParlibFor {
			fn, _ := typeutil.Callee(pl.info, s.Call).(*types.Func)
			helper = rtParlibLoop[fn.Name()] // For, ForRange, ForEach
		}
		// The helper takes parlib's function too (with any explicit type
		// arguments): the file's import of parlib stays used.
		pl.edits[s.Node] = helperCall{helper: rt(helper), site: site, fun: true, ellipsis: true}
	}
}

// planSignal rewrites a Done, or an Add that may be negative, into the
// runtime's typed call, which signals the join object and then makes the
// call.
func (pl *planner) planSignal(sig *forkjoin.Signal) {
	if sig.Kind == forkjoin.Return || pl.fileOf(sig.Pos) == nil {
		return
	}
	if sig.Kind == forkjoin.Add && sig.DeltaKnown && sig.Delta >= 0 {
		return // registers children: nothing to measure
	}
	if sig.Func.StartedBy != nil {
		return
	}
	call := sig.Node.(*ast.CallExpr)
	if !pl.isMethodCall(call) {
		return
	}
	helper := rtWaitGroupDone
	switch {
	case sig.Kind == forkjoin.Add:
		helper = rtWaitGroupAdd
	case pl.doneLast[call]:
		helper = rtWaitGroupDoneLast // the child's last action (glue.go)
	}
	pl.stats.Signals++
	pl.edits[call] = helperCall{helper: rt(helper), recv: pl.receiverOf(call)}
}

// isMethodCall reports whether call calls a method through a selector, a
// method value or a method expression, which receiver can rewrite.
func (pl *planner) isMethodCall(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	s := pl.info.Selections[sel]
	return s != nil && (s.Kind() == types.MethodVal || s.Kind() == types.MethodExpr && len(call.Args) > 0)
}

func (pl *planner) planWait(w *forkjoin.Wait) {
	if w.Kind == forkjoin.ParlibImplicit || pl.fileOf(w.Pos) == nil {
		return
	}
	if w.Func.StartedBy != nil {
		return
	}
	if !pl.isMethodCall(w.Node) {
		return
	}
	helper := map[forkjoin.WaitKind]string{
		forkjoin.WaitGroupWait:  rtWaitGroupWait,
		forkjoin.ErrgroupWait:   rtGroupWait,
		forkjoin.ParlibSync:     rtParlibGroupSync,
		forkjoin.ParlibTaskWait: rtParlibTaskWait,
	}[w.Kind]
	pl.stats.Waits++
	pl.edits[w.Node] = helperCall{helper: rt(helper), recv: pl.receiverOf(w.Node)}
}

// planLimits plans errgroup's SetLimit calls: the runtime models a group's
// limit in serial mode (shadow/limit.go), which runs its children inline,
// where the limit would never bind. A call on a goroutine that a library
// starts is left alone, as the group's waits there are.
func (pl *planner) planLimits() {
	for _, l := range pl.res.Limits {
		if pl.fileOf(l.Pos) == nil || l.Func != nil && l.Func.StartedBy != nil || !pl.isMethodCall(l.Node) {
			continue
		}
		pl.edits[l.Node] = helperCall{helper: rt(rtGroupSetLimit), recv: pl.receiverOf(l.Node)}
	}
}

// planProgram plans what is not a fork/join site: the start and end of the
// run in main, os.Exit, and the user's TestMain, which the generated one
// wraps.
func (pl *planner) planProgram() {
	for _, fr := range pl.files {
		for _, d := range fr.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil || fd.Type.TypeParams != nil {
				continue
			}
			switch {
			case fd.Name.Name == "main" && pl.u.pkg.Name == "main" && fr.table == tablePkg:
				start := &dst.ExprStmt{X: rtCall(rtStartIfNeeded)}
				finish := &dst.DeferStmt{Call: rtCall(rtFinish)}
				start.Decs.Before, finish.Decs.Before = dst.NewLine, dst.NewLine
				pl.edits[fd] = prologue{[]dst.Stmt{start, finish}}
			case fd.Name.Name == "TestMain" && fr.table != tablePkg && pl.prog.cfg.Tests && pl.u.named:
				pl.testMain = fr.table
				pl.edits[fd] = rename{userTestMain}
			}
		}
		ast.Inspect(fr.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, _ := typeutil.Callee(pl.info, call).(*types.Func)
			if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "os" || fn.Name() != "Exit" {
				return true
			}
			if f := pl.res.Enclosing(call.Pos()); f == nil {
				return true
			} else if f.StartedBy != nil {
				return true // on another goroutine: the runtime must not be entered there
			}
			pl.edits[call] = wrapArgs{rt(rtBeforeExit)}
			return true
		})
	}
}

// receiverOf says how the join object of call, a method call that
// isMethodCall accepts, is reached (see receiverPath).
func (pl *planner) receiverOf(call *ast.CallExpr) *receiverPath {
	sel := pl.info.Selections[ast.Unparen(call.Fun).(*ast.SelectorExpr)]
	if sel.Kind() == types.MethodExpr {
		return &receiverPath{methodExpr: true}
	}
	p := new(receiverPath)
	t := sel.Recv()
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		f := derefType(t).Underlying().(*types.Struct).Field(i)
		p.embedded = append(p.embedded, f.Name())
		t = f.Type()
	}
	_, ptr := t.Underlying().(*types.Pointer)
	p.addr = !ptr
	return p
}

// stable reports whether evaluating e later, inside the spawned closure,
// gives what evaluating it at the go statement gives: constants, nil,
// function literals, and the names of functions, builtins and types.
func (pl *planner) stable(e ast.Expr) bool {
	e = ast.Unparen(e)
	tv := pl.info.Types[e]
	if tv.Value != nil || tv.IsNil() || tv.IsBuiltin() || tv.IsType() {
		return true
	}
	if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return true // an untyped comparison: keep its type as the call gives it
	}
	switch x := e.(type) {
	case *ast.FuncLit:
		return true
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		_, ok := pl.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if pl.info.Selections[x] != nil {
			return false // a method value binds its receiver now
		}
		_, ok := pl.info.Uses[x.Sel].(*types.Func)
		return ok
	}
	return false
}
