package missingdone

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

var Analyzer = &analysis.Analyzer{
	Name:     "missingdone",
	Doc:      analyzerdoc.MustExtract(doc, "missingdone"),
	URL:      "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/missingdone",
	Requires: []*analysis.Analyzer{forkjoin.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[forkjoin.Analyzer].(*forkjoin.Result)
	reported := make(map[token.Pos]bool) // a function spawned from several sites is reported once
	for _, s := range res.Spawns {
		if s.Contrib != forkjoin.ExplicitDone || s.Callee == nil || !s.Join.Exact {
			continue
		}
		if !countedOnce(res, s) {
			continue // the WaitGroup counts something else than this goroutine
		}
		exit, goexit := uncoveredExit(pass.TypesInfo, s.Callee.Body, s.Signals)
		if exit == nil || reported[exit.Pos()] {
			continue
		}
		reported[exit.Pos()] = true
		done := doneText(s.Signals[0])
		where, end := "returns here", exit.End()
		switch {
		case goexit:
			where = "calls runtime.Goexit"
		case exit.Pos() == s.Callee.Body.Rbrace:
			where, end = "reaches the end of its body", exit.Pos()+1
		}
		pass.Report(analysis.Diagnostic{
			Pos: exit.Pos(),
			End: end,
			Message: fmt.Sprintf("goroutine spawned at %s %s without calling %s: Wait blocks forever; defer %s at its start",
				shortLine(pass.Fset, s.Pos), where, done, done),
			SuggestedFixes: deferFix(pass, s),
		})
	}
	return nil, nil
}

// uncoveredExit returns the first exit of body (a return, the end of the
// body, a call of runtime.Goexit) that control can reach from the entry
// without passing a node that contains one of the signals; goexit says
// which kind of exit it is.
func uncoveredExit(info *types.Info, body *ast.BlockStmt, signals []*forkjoin.Signal) (exit ast.Node, goexit bool) {
	covers := func(n ast.Node) bool {
		for _, s := range signals {
			if s.Kind != forkjoin.Return && n.Pos() <= s.Pos && s.Pos < n.End() {
				return true
			}
		}
		return false
	}
	// A branch on which the WaitGroup is nil has nothing to signal:
	// if wg != nil { defer wg.Done() }.
	recvs := make(map[string]bool)
	for _, s := range signals {
		if s.Recv != nil {
			recvs[types.ExprString(s.Recv)] = true
		}
	}
	g := cfg.New(body, func(call *ast.CallExpr) bool { return !noReturn(info, call) })
	seen := make(map[*cfg.Block]bool)
	queue := []*cfg.Block{g.Blocks[0]}
	seen[g.Blocks[0]] = true
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		covered := false
		for _, n := range b.Nodes {
			if covers(n) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		if ret := b.Return(); ret != nil {
			return ret, false
		}
		if len(b.Succs) == 0 && len(b.Nodes) > 0 {
			if call := lastCall(b.Nodes[len(b.Nodes)-1]); call != nil && isGoexit(info, call) {
				return call, true
			}
		}
		succs := b.Succs
		if len(succs) == 2 && len(b.Nodes) > 0 {
			if cond, ok := b.Nodes[len(b.Nodes)-1].(*ast.BinaryExpr); ok && isNil(info, cond.Y) && recvs[types.ExprString(cond.X)] {
				switch cond.Op {
				case token.NEQ:
					succs = succs[:1] // the false branch: nil
				case token.EQL:
					succs = succs[1:]
				}
			}
		}
		for _, succ := range succs {
			if !seen[succ] {
				seen[succ] = true
				queue = append(queue, succ)
			}
		}
	}
	return nil, false
}

func isNil(info *types.Info, e ast.Expr) bool {
	return info.Types[e].IsNil()
}

// countedOnce reports whether the spawner counts this goroutine in its
// WaitGroup: an Add of a positive constant on the same object at the same
// loop depth as the spawn, as in wg.Add(1); go f(). Without one the
// WaitGroup may count work items or a single event (wg.Add(n) for n
// requests done one by one, or a "ready" signal only the first of many
// goroutines gives), and a goroutine that returns without Done is then
// not a mistake.
func countedOnce(res *forkjoin.Result, s *forkjoin.Spawn) bool {
	file := res.File(s.Pos)
	if file == nil {
		return false
	}
	spawnLoop := innermostLoop(file, s.Node)
	for _, sig := range s.Func.Signals {
		if sig.Kind == forkjoin.Add && sig.DeltaKnown && sig.Delta > 0 && sig.Join == s.Join &&
			innermostLoop(file, sig.Node) == spawnLoop {
			return true
		}
	}
	return false
}

// innermostLoop returns the innermost for or range statement around n in
// the function that contains n, or that function when there is none.
func innermostLoop(file *ast.File, n ast.Node) ast.Node {
	path, _ := astutil.PathEnclosingInterval(file, n.Pos(), n.End())
	for _, p := range path[1:] {
		switch p.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.FuncLit, *ast.FuncDecl:
			return p
		}
	}
	return nil
}

// noReturn reports whether call never returns to its caller: panic, the
// functions that exit the program, and runtime.Goexit and the testing
// methods that call it.
func noReturn(info *types.Info, call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "panic" {
			return true
		}
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	name := fn.Name()
	switch fn.Pkg().Path() {
	case "os":
		return name == "Exit"
	case "runtime":
		return name == "Goexit"
	case "log":
		return strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Panic")
	case "testing":
		switch name {
		case "FailNow", "Fatal", "Fatalf", "SkipNow", "Skip", "Skipf":
			return true
		}
	}
	return false
}

func isGoexit(info *types.Info, call *ast.CallExpr) bool {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == "runtime" && fn.Name() == "Goexit"
}

// lastCall returns the call that n, a statement or expression of a block,
// is or makes at its top, or nil.
func lastCall(n ast.Node) *ast.CallExpr {
	if st, ok := n.(*ast.ExprStmt); ok {
		n = st.X
	}
	call, _ := n.(*ast.CallExpr)
	return call
}

// doneText is the Done call as the spawned function writes it.
func doneText(s *forkjoin.Signal) string {
	if call, ok := s.Node.(*ast.CallExpr); ok {
		return types.ExprString(call)
	}
	return "Done"
}

// deferFix moves the spawned function's Done, when it is the last statement
// of the body, to a defer statement at its start. It offers nothing when the
// body has another defer statement: the Done would then run after those
// deferred calls, and one of them might wait for the parent to pass Wait.
func deferFix(pass *analysis.Pass, s *forkjoin.Spawn) []analysis.SuggestedFix {
	if len(s.Signals) != 1 || s.Signals[0].Deferred {
		return nil
	}
	body := s.Callee.Body
	if len(body.List) < 2 {
		return nil
	}
	last, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok || last.X != s.Signals[0].Node {
		return nil
	}
	if hasDefer(body) {
		return nil
	}
	tf := pass.Fset.File(body.Pos())
	src, err := pass.ReadFile(tf.Name())
	if err != nil {
		return nil
	}
	prev := body.List[len(body.List)-2]
	// The deleted span, from the end of the previous statement to the end
	// of the Done, must hold nothing but space and separators.
	gap := string(src[tf.Offset(prev.End()):tf.Offset(last.Pos())])
	if strings.Trim(gap, " \t\r\n;") != "" {
		return nil
	}
	first := body.List[0]
	call := string(src[tf.Offset(last.Pos()):tf.Offset(last.End())])
	insert := "defer " + call + "; "
	if tf.Line(first.Pos()) != tf.Line(body.Lbrace) {
		insert = "defer " + call + "\n" + indentOf(src, tf.Offset(first.Pos()))
	}
	return []analysis.SuggestedFix{{
		Message: "Defer " + call + " at the start of the function",
		TextEdits: []analysis.TextEdit{
			{Pos: first.Pos(), End: first.Pos(), NewText: []byte(insert)},
			{Pos: prev.End(), End: last.End()},
		},
	}}
}

// hasDefer reports whether body has a defer statement outside nested
// function literals.
func hasDefer(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// indentOf returns the space before offset on its line.
func indentOf(src []byte, offset int) string {
	start := offset
	for start > 0 && (src[start-1] == ' ' || src[start-1] == '\t') {
		start--
	}
	return string(src[start:offset])
}

func shortLine(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}
