package finegrain

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

var Analyzer = &analysis.Analyzer{
	Name:     "finegrain",
	Doc:      analyzerdoc.MustExtract(doc, "finegrain"),
	URL:      "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/finegrain",
	Requires: []*analysis.Analyzer{forkjoin.Analyzer},
	Run:      run,
}

const (
	// smallTrip is the largest constant trip count not reported: a handful
	// of goroutines costs little in total however small each is.
	smallTrip = 64
	// maxCallDepth bounds how deep calls of the package's functions are
	// followed to decide that a body is tiny.
	maxCallDepth = 2
)

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[forkjoin.Analyzer].(*forkjoin.Result)
	for _, s := range res.Spawns {
		switch s.Kind {
		case forkjoin.GoStmt, forkjoin.WaitGroupGo, forkjoin.ErrgroupGo, forkjoin.ErrgroupTryGo,
			forkjoin.ParlibGroupSpawn, forkjoin.ParlibSpawn:
		default:
			continue // parlib's Do and For chunk their own work
		}
		if s.Callee == nil {
			continue
		}
		file := res.File(s.Pos)
		if file == nil || strings.HasSuffix(pass.Fset.File(s.Pos).Name(), "_test.go") {
			continue // tests spawn to exercise concurrency, over a few cases
		}
		loop, label := enclosingLoop(file, s)
		if loop == nil || smallConstantTrip(pass.TypesInfo, loop) {
			continue
		}
		t := &tiny{info: pass.TypesInfo, res: res, seen: make(map[*forkjoin.Func]bool)}
		if !t.body(s.Callee, 0) {
			continue
		}
		var fixes []analysis.SuggestedFix
		if label == nil {
			fixes = parlibFix(pass, file, s, loop)
		}
		pass.Report(analysis.Diagnostic{
			Pos: s.Pos,
			End: s.Node.End(),
			Message: fmt.Sprintf("%s per loop iteration for a tiny body (no loop, no costly call): each costs more to start than it does work; "+
				"give each goroutine a chunk of iterations, e.g. parlib.For(lo, hi, grain, body)", spawnWord(s)),
			SuggestedFixes: fixes,
		})
	}
	return nil, nil
}

func spawnWord(s *forkjoin.Spawn) string {
	switch s.Kind {
	case forkjoin.GoStmt:
		return "go statement"
	case forkjoin.WaitGroupGo, forkjoin.ErrgroupGo, forkjoin.ErrgroupTryGo:
		return types.ExprString(s.Call.Fun)
	}
	return "spawn"
}

// enclosingLoop returns the innermost for or range statement around the
// spawn inside the spawning function (not an enclosing one), and its label.
func enclosingLoop(file *ast.File, s *forkjoin.Spawn) (ast.Stmt, *ast.Ident) {
	path, _ := astutil.PathEnclosingInterval(file, s.Node.Pos(), s.Node.End())
	for i, n := range path {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.FuncDecl:
			return nil, nil
		case *ast.ForStmt, *ast.RangeStmt:
			if n == s.Node {
				continue
			}
			var label *ast.Ident
			if i+1 < len(path) {
				if l, ok := path[i+1].(*ast.LabeledStmt); ok {
					label = l.Label
				}
			}
			return n.(ast.Stmt), label
		}
	}
	return nil, nil
}

// smallConstantTrip reports whether loop runs a known number of times, at
// most smallTrip.
func smallConstantTrip(info *types.Info, loop ast.Stmt) bool {
	small := func(v constant.Value) bool {
		n, ok := constant.Int64Val(constant.ToInt(v))
		return ok && n <= smallTrip
	}
	switch loop := loop.(type) {
	case *ast.RangeStmt:
		tv := info.Types[loop.X]
		if tv.Value != nil {
			return small(tv.Value)
		}
		if tv.Type == nil {
			return false
		}
		t := tv.Type.Underlying()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem().Underlying()
		}
		if a, ok := t.(*types.Array); ok {
			return a.Len() <= smallTrip
		}
		if lit, ok := ast.Unparen(loop.X).(*ast.CompositeLit); ok {
			return len(lit.Elts) <= smallTrip
		}
	case *ast.ForStmt:
		init, ok := loop.Init.(*ast.AssignStmt)
		cond, ok2 := loop.Cond.(*ast.BinaryExpr)
		if !ok || !ok2 || len(init.Rhs) != 1 {
			return false
		}
		lo, hi := info.Types[init.Rhs[0]].Value, info.Types[cond.Y].Value
		if lo == nil || hi == nil {
			return false
		}
		return small(constant.BinaryOp(hi, token.SUB, lo))
	}
	return false
}

// tiny decides whether spawned bodies are tiny.
type tiny struct {
	info *types.Info
	res  *forkjoin.Result
	seen map[*forkjoin.Func]bool
}

// body reports whether f's body does too little to pay for a goroutine.
func (t *tiny) body(f *forkjoin.Func, depth int) bool {
	if t.seen[f] {
		return false // recursion is not tiny
	}
	t.seen[f] = true
	defer delete(t.seen, f)
	ok := true
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.GoStmt, *ast.SelectStmt, *ast.SendStmt, *ast.FuncLit:
			ok = false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				ok = false
			}
		case *ast.CallExpr:
			ok = t.cheap(n, depth)
		}
		return ok
	})
	return ok
}

// cheap reports whether call costs about as much as a few instructions.
func (t *tiny) cheap(call *ast.CallExpr, depth int) bool {
	if tv, ok := t.info.Types[call.Fun]; ok && tv.IsType() {
		// A conversion; between strings and slices it copies.
		from := t.info.TypeOf(call.Args[0])
		return !(isString(tv.Type) && isSlice(from) || isSlice(tv.Type) && isString(from))
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := t.info.Uses[id].(*types.Builtin); ok {
			switch b.Name() {
			case "len", "cap", "min", "max", "real", "imag", "complex", "new", "panic", "delete":
				return true
			case "append":
				return !call.Ellipsis.IsValid() // appending a slice copies it
			}
			return false // make, copy, clear, print: proportional to their operand
		}
	}
	fn, ok := typeutil.Callee(t.info, call).(*types.Func)
	if !ok {
		return false
	}
	if fn.Pkg() != nil {
		switch path := fn.Pkg().Path(); {
		case path == "sync/atomic", path == "math", path == "math/bits":
			return true
		case path == "sync":
			switch fn.Name() {
			case "Done", "Add", "Lock", "Unlock", "RLock", "RUnlock", "TryLock", "TryRLock":
				return true
			}
			return false
		}
	}
	if depth >= maxCallDepth {
		return false
	}
	if c := t.res.CallOf(call); c != nil {
		return t.body(c.Callee, depth+1)
	}
	return false
}

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

func isSlice(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Slice)
	return ok
}

// parlibFix replaces the loop by one spawn of parlib.For over its range,
// when the file imports parlib and the loop has one of the supported shapes.
func parlibFix(pass *analysis.Pass, file *ast.File, s *forkjoin.Spawn, loop ast.Stmt) []analysis.SuggestedFix {
	pkgName := importName(file, forkjoin.ParlibPath)
	if pkgName == "" || s.Lit == nil {
		return nil
	}
	iv, lo, hi := intRange(pass, loop)
	if hi == "" {
		return nil
	}
	body := loopBody(loop)
	tf := pass.Fset.File(file.Pos())
	src, err := pass.ReadFile(tf.Name())
	if err != nil {
		return nil
	}
	text := func(from, to token.Pos) string { return string(src[tf.Offset(from):tf.Offset(to)]) }
	// Comments outside the spawned literal would be lost.
	for _, cg := range file.Comments {
		if loop.Pos() <= cg.Pos() && cg.End() <= loop.End() && !(s.Lit.Body.Pos() < cg.Pos() && cg.End() < s.Lit.Body.End()) {
			return nil
		}
	}
	param := iv + " int"
	if iv == "" {
		param = "int"
	}
	loopCall := func(block string) string {
		return fmt.Sprintf("%s.For(%s, %s, 0, func(%s) %s)", pkgName, lo, hi, param, block)
	}
	var replacement string
	switch s.Kind {
	case forkjoin.WaitGroupGo, forkjoin.ParlibGroupSpawn:
		if len(body.List) != 1 || !isStmtOf(body.List[0], s.Node) {
			return nil
		}
		recv := ast.Unparen(s.Call.Fun).(*ast.SelectorExpr)
		replacement = fmt.Sprintf("%s(func() {\n%s\n})", text(recv.Pos(), recv.End()), loopCall(text(s.Lit.Body.Pos(), s.Lit.Body.End())))
	case forkjoin.GoStmt:
		// wg.Add(1); go func() { defer wg.Done(); ... }()
		if len(body.List) != 2 || body.List[1] != s.Node || len(s.Call.Args) != 0 || len(s.Lit.Body.List) < 2 {
			return nil
		}
		add, ok := body.List[0].(*ast.ExprStmt)
		if !ok || !isAddOne(pass.TypesInfo, add.X, s) {
			return nil
		}
		d, ok := s.Lit.Body.List[0].(*ast.DeferStmt)
		if !ok || len(s.Signals) != 1 || s.Signals[0].Node != d.Call || s.Contrib != forkjoin.DeferredDone {
			return nil
		}
		// Keep everything around the defer, comments included.
		lit := s.Lit.Body
		block := "{" + text(d.End(), lit.Rbrace) + "}"
		replacement = fmt.Sprintf("%s\ngo func() {%s\n%s\n}()", text(add.Pos(), add.End()), text(lit.Lbrace+1, d.End()), loopCall(block))
	default:
		return nil
	}
	return []analysis.SuggestedFix{{
		Message:   "Spawn one " + pkgName + ".For over the loop's range",
		TextEdits: []analysis.TextEdit{{Pos: loop.Pos(), End: loop.End(), NewText: []byte(replacement)}},
	}}
}

func loopBody(loop ast.Stmt) *ast.BlockStmt {
	switch loop := loop.(type) {
	case *ast.ForStmt:
		return loop.Body
	case *ast.RangeStmt:
		return loop.Body
	}
	return nil
}

func isStmtOf(st ast.Stmt, call ast.Node) bool {
	es, ok := st.(*ast.ExprStmt)
	return ok && es.X == call
}

// isAddOne reports whether e is an Add(1) on the spawn's WaitGroup.
func isAddOne(info *types.Info, e ast.Expr, s *forkjoin.Spawn) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	for _, sig := range s.Func.Signals {
		if sig.Node == call {
			return sig.Kind == forkjoin.Add && sig.DeltaKnown && sig.Delta == 1 && sig.Join == s.Join
		}
	}
	return false
}

// intRange returns the loop variable ("" if none) and the bounds of a loop
// over ints whose bounds cannot change while it runs: for i := range n, or
// for i := lo; i < hi; i++. hi is "" when the loop has another shape.
func intRange(pass *analysis.Pass, loop ast.Stmt) (iv, lo, hi string) {
	info := pass.TypesInfo
	isInt := func(e ast.Expr) bool {
		t := info.TypeOf(e)
		return t != nil && types.Identical(t, types.Typ[types.Int])
	}
	switch loop := loop.(type) {
	case *ast.RangeStmt:
		if loop.Value != nil || !isInt(loop.X) || !stable(pass, loop.X) {
			return "", "", ""
		}
		if loop.Key != nil {
			id, ok := loop.Key.(*ast.Ident)
			if !ok || loop.Tok != token.DEFINE {
				return "", "", ""
			}
			if id.Name != "_" {
				iv = id.Name
			}
		}
		return iv, "0", types.ExprString(loop.X)
	case *ast.ForStmt:
		init, ok1 := loop.Init.(*ast.AssignStmt)
		cond, ok2 := loop.Cond.(*ast.BinaryExpr)
		post, ok3 := loop.Post.(*ast.IncDecStmt)
		if !ok1 || !ok2 || !ok3 || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 ||
			cond.Op != token.LSS || post.Tok != token.INC {
			return "", "", ""
		}
		id, ok := init.Lhs[0].(*ast.Ident)
		if !ok || !isInt(id) || !sameVar(info, cond.X, id) || !sameVar(info, post.X, id) {
			return "", "", ""
		}
		if !stable(pass, init.Rhs[0]) || !stable(pass, cond.Y) || assignedIn(info, loop.Body, info.Defs[id]) {
			return "", "", ""
		}
		return id.Name, types.ExprString(init.Rhs[0]), types.ExprString(cond.Y)
	}
	return "", "", ""
}

func sameVar(info *types.Info, e ast.Expr, id *ast.Ident) bool {
	x, ok := ast.Unparen(e).(*ast.Ident)
	return ok && info.Uses[x] != nil && info.Uses[x] == info.Defs[id]
}

// stable reports whether e has the same value whenever it is evaluated
// after the loop starts: a constant, a local variable or parameter that is
// never assigned after its declaration nor has its address taken, or len of
// such a variable.
func stable(pass *analysis.Pass, e ast.Expr) bool {
	info := pass.TypesInfo
	if tv := info.Types[e]; tv.Value != nil {
		return true
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := info.Uses[e].(*types.Var)
		if !ok || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
			return false
		}
		for _, f := range pass.Files {
			if assignedIn(info, f, v) {
				return false
			}
		}
		return true
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok && len(e.Args) == 1 {
			if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "len" {
				return stable(pass, e.Args[0])
			}
		}
	}
	return false
}

// assignedIn reports whether v is assigned, incremented, or has its address
// taken in n (its declaration does not count).
func assignedIn(info *types.Info, n ast.Node, v types.Object) bool {
	found := false
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.Uses[id] == v
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				found = found || is(l)
			}
		case *ast.IncDecStmt:
			found = found || is(n.X)
		case *ast.UnaryExpr:
			found = found || n.Op == token.AND && is(n.X)
		case *ast.RangeStmt:
			found = found || n.Tok == token.ASSIGN && (n.Key != nil && is(n.Key) || n.Value != nil && is(n.Value))
		}
		return !found
	})
	return found
}

// importName returns the name file uses for the package path, or "".
func importName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == "_" || imp.Name.Name == "." {
				return ""
			}
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}
