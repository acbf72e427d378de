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

// plan decides what to do at every site, in source order (by file name,
// then offset: forkjoin.ComparePos), numbering the sites of each table as
// it goes.
func (ur *unitRewriter) plan() {
	type item struct {
		pos   token.Pos
		spawn *forkjoin.Spawn
		call  *forkjoin.Call
	}
	var items []item
	seenCall := make(map[ast.Node]bool) // parlib.Do/For: one rewrite per call
	for _, s := range ur.res.Spawns {
		if s.Wait != nil {
			if seenCall[s.Node] {
				continue
			}
			seenCall[s.Node] = true
		}
		items = append(items, item{pos: s.Pos, spawn: s})
	}
	for _, c := range ur.res.Calls {
		items = append(items, item{pos: c.Node.Pos(), call: c})
	}
	slices.SortStableFunc(items, func(a, b item) int { return forkjoin.ComparePos(ur.fset, a.pos, b.pos) })
	for _, it := range items {
		if ur.fileOf(it.pos) == nil {
			continue
		}
		if it.spawn != nil {
			ur.planSpawn(it.spawn)
		} else {
			ur.planCall(it.call)
		}
	}
	for _, sig := range ur.res.Signals {
		ur.planSignal(sig)
	}
	for _, w := range ur.res.Waits {
		ur.planWait(w)
	}
	ur.planProgram()
	ur.planTests()
}

// spawnsOf returns the spawns made by one spawn site: the one spawn, or
// every function of a parlib.Do or For call.
func spawnsOf(s *forkjoin.Spawn) []*forkjoin.Spawn {
	if s.Wait != nil {
		return s.Wait.Spawns
	}
	return []*forkjoin.Spawn{s}
}

func (ur *unitRewriter) planSpawn(s *forkjoin.Spawn) {
	fr := ur.fileOf(s.Pos)
	spawns := spawnsOf(s)
	if why := ur.unprofiled(s.Func); why != "" {
		ur.stats.SpawnsNotProfiled += len(spawns)
		ur.warnings = append(ur.warnings, fmt.Sprintf("%s: spawn not profiled: %s", ur.line(s.Pos), why))
		return
	}
	ur.stats.Spawns += len(spawns)
	goroutine := ur.staysGoroutine(s)
	if goroutine != "" {
		// The runtime runs it as a real goroutine under parallel
		// accounting, in serial mode too (shadow.SiteInfo.Goroutine).
		ur.stats.SpawnsGoroutine += len(spawns)
		ur.warnings = append(ur.warnings, fmt.Sprintf("%s: spawn runs as a goroutine in serial mode too: %s", ur.line(s.Pos), goroutine))
	}
	var sites []dst.Expr
	for _, t := range spawns {
		name := ur.res.CalleeName(t.Fun)
		if t.Callee != nil {
			name = t.Callee.Name
		}
		sites = append(sites, ur.addSite(fr, t.Pos, name, s.Func.Name, "spawn"))
		if goroutine != "" {
			t := &ur.tables[fr.table]
			(*t)[len(*t)-1].Goroutine = true
		}
	}
	site := sites[0]
	switch s.Kind {
	case forkjoin.GoStmt:
		e := goSpawn{site: site, stableFun: ur.stable(s.Call.Fun)}
		for _, a := range s.Call.Args {
			e.stableArgs = append(e.stableArgs, ur.stable(a))
		}
		ur.edits[s.Node] = e
	case forkjoin.WaitGroupGo, forkjoin.ErrgroupGo, forkjoin.ErrgroupTryGo, forkjoin.ParlibGroupSpawn:
		helper := map[forkjoin.SpawnKind]string{
			forkjoin.WaitGroupGo:      rtWaitGroupGo,
			forkjoin.ErrgroupGo:       rtGroupGo,
			forkjoin.ErrgroupTryGo:    rtGroupTryGo,
			forkjoin.ParlibGroupSpawn: rtParlibGroupSpawn,
		}[s.Kind]
		ur.edits[s.Node] = helperCall{helper: rt(helper), site: site, recv: ur.receiverOf(s.Call)}
	case forkjoin.ParlibSpawn:
		ur.edits[s.Node] = helperCall{helper: rt(rtParlibSpawn), site: site, fun: true}
	case forkjoin.ParlibDo, forkjoin.ParlibFor:
		helper := rtParlibDo
		if s.Kind == forkjoin.ParlibFor {
			fn, _ := typeutil.Callee(ur.info, s.Call).(*types.Func)
			helper = rtParlibLoop[fn.Name()] // For, ForRange, ForEach
		}
		// The helper takes parlib's function too (with any explicit type
		// arguments): the file's import of parlib stays used.
		ur.edits[s.Node] = helperCall{helper: rt(helper), site: site, fun: true, ellipsis: true}
	}
}

// planSignal rewrites a Done, or an Add that may be negative, into the
// runtime's typed call, which signals the join object and then makes the
// call.
func (ur *unitRewriter) planSignal(sig *forkjoin.Signal) {
	if sig.Kind == forkjoin.Return || ur.fileOf(sig.Pos) == nil {
		return
	}
	if sig.Kind == forkjoin.Add && sig.DeltaKnown && sig.Delta >= 0 {
		return // registers children: nothing to measure
	}
	if sig.Func.StartedBy != nil {
		return
	}
	call := sig.Node.(*ast.CallExpr)
	if !ur.isMethodCall(call) {
		return
	}
	helper := rtWaitGroupDone
	if sig.Kind == forkjoin.Add {
		helper = rtWaitGroupAdd
	}
	ur.stats.Signals++
	ur.edits[call] = helperCall{helper: rt(helper), recv: ur.receiverOf(call)}
}

// isMethodCall reports whether call calls a method through a selector, a
// method value or a method expression, which receiver can rewrite.
func (ur *unitRewriter) isMethodCall(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	s := ur.info.Selections[sel]
	return s != nil && (s.Kind() == types.MethodVal || s.Kind() == types.MethodExpr && len(call.Args) > 0)
}

func (ur *unitRewriter) planWait(w *forkjoin.Wait) {
	if w.Kind == forkjoin.ParlibImplicit || ur.fileOf(w.Pos) == nil {
		return
	}
	if w.Func.StartedBy != nil {
		return
	}
	if !ur.isMethodCall(w.Node) {
		return
	}
	helper := map[forkjoin.WaitKind]string{
		forkjoin.WaitGroupWait:  rtWaitGroupWait,
		forkjoin.ErrgroupWait:   rtGroupWait,
		forkjoin.ParlibSync:     rtParlibGroupSync,
		forkjoin.ParlibTaskWait: rtParlibTaskWait,
	}[w.Kind]
	ur.stats.Waits++
	ur.edits[w.Node] = helperCall{helper: rt(helper), recv: ur.receiverOf(w.Node)}
}

// planProgram plans what is not a fork/join site: the start and end of the
// run in main, os.Exit, and the user's TestMain, which the generated one
// wraps.
func (ur *unitRewriter) planProgram() {
	for _, fr := range ur.files {
		for _, d := range fr.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil || fd.Type.TypeParams != nil {
				continue
			}
			switch {
			case fd.Name.Name == "main" && ur.u.pkg.Name == "main" && fr.table == tablePkg:
				start := &dst.ExprStmt{X: rtCall(rtStartIfNeeded)}
				finish := &dst.DeferStmt{Call: rtCall(rtFinish)}
				start.Decs.Before, finish.Decs.Before = dst.NewLine, dst.NewLine
				ur.edits[fd] = prologue{[]dst.Stmt{start, finish}}
			case fd.Name.Name == "TestMain" && fr.table != tablePkg && ur.prog.cfg.Tests && ur.u.named:
				ur.testMain = fr.table
				ur.edits[fd] = rename{userTestMain}
			}
		}
		ast.Inspect(fr.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, _ := typeutil.Callee(ur.info, call).(*types.Func)
			if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "os" || fn.Name() != "Exit" {
				return true
			}
			if f := ur.res.Enclosing(call.Pos()); f == nil {
				return true
			} else if f.StartedBy != nil {
				return true // on another goroutine: the runtime must not be entered there
			}
			ur.edits[call] = wrapArgs{rt(rtBeforeExit)}
			return true
		})
	}
}

// receiverOf says how the join object of call, a method call that
// isMethodCall accepts, is reached (see receiverPath).
func (ur *unitRewriter) receiverOf(call *ast.CallExpr) *receiverPath {
	sel := ur.info.Selections[ast.Unparen(call.Fun).(*ast.SelectorExpr)]
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
func (ur *unitRewriter) stable(e ast.Expr) bool {
	e = ast.Unparen(e)
	tv := ur.info.Types[e]
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
		_, ok := ur.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if ur.info.Selections[x] != nil {
			return false // a method value binds its receiver now
		}
		_, ok := ur.info.Uses[x.Sel].(*types.Func)
		return ok
	}
	return false
}
