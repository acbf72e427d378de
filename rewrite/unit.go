package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"
	"github.com/dave/dst/dstutil"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Names the rewriter injects. Every one starts with _spanprof, which
// rewriting refuses to find in user code, so none can clash.
const (
	shadowPath   = "github.com/spanprof/spanprof/shadow"
	shadowAlias  = "_spanprof_shadow"
	namePrefix   = "_spanprof"
	userTestMain = "_spanprofTestMain"
)

// A table is one of the static site tables of a package's generated files.
type table int

const (
	tablePkg   table = iota // the package's own files: _spanprofSites in zz_spanprof.go
	tableTest               // its internal test files: _spanprofTestSites in zz_spanprof_test.go
	tableXTest              // the external test package: _spanprofSites in zz_spanprof_x_test.go
)

var tableVars = [...]string{"_spanprofSites", "_spanprofTestSites", "_spanprofSites"}

// A siteInfo is a row of a site table: shadow.SiteInfo, written out.
type siteInfo struct {
	File         string // relative to the module root, slash-separated
	Line, Column int
	Func, Caller string
	Kind         string // spawn or call
	Goroutine    bool   // a spawn that runs as a goroutine in every mode
}

// A Unit is one package to rewrite: its own files, its internal test files
// with them when tests are rewritten, or an external test package.
type unit struct {
	pkg   *Package
	xtest bool // an external test package (p_test)
	named bool // named on the command line: gets a TestMain when tests are rewritten
}

// unitRewriter rewrites one unit.
type unitRewriter struct {
	prog  *Program
	u     *unit
	fset  *token.FileSet
	info  *types.Info
	res   *forkjoin.Result
	files []*fileRewriter
	byAst map[*ast.File]*fileRewriter

	parent map[ast.Node]ast.Node // syntactic parent of every node

	actions map[ast.Node]action // what to do at a node, applied bottom-up
	// enterAfter holds the expressions to wrap as EnterAfter(x, site) once
	// their own actions are done: the start of a call that evaluating
	// them precedes (planCall).
	enterAfter map[ast.Node]dst.Expr
	before     map[ast.Stmt][]dst.Stmt
	after      map[ast.Stmt][]dst.Stmt

	tables   [3][]siteInfo
	warnings []string
	stats    Stats
	testMain table // where the user's TestMain is (tableTest or tableXTest); -1 if none
}

// fileRewriter holds one file's syntax in both forms.
type fileRewriter struct {
	ast  *ast.File
	name string // absolute path
	// lineName is the file's name in //line directives.
	lineName string
	table    table
	dec      *decorator.Decorator
	dst      *dst.File
}

// An action is an edit at one node of the original syntax, applied to its
// decorated form when the bottom-up walk reaches it, after its children.
type action func(fr *fileRewriter, c *dstutil.Cursor)

// A Refusal is an error that refuses to rewrite: a package that does not
// load, parse, type-check or build, a construct the rewriter cannot handle,
// a file it must not change. Other errors are bugs.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &Refusal{fmt.Sprintf(format, args...)}
}

// rewrite instruments the unit and returns its changed files and the files
// it adds.
func (u *unit) rewrite(prog *Program) ([]*File, *unitRewriter, error) {
	ur := &unitRewriter{
		prog:       prog,
		u:          u,
		fset:       u.pkg.Fset,
		info:       u.pkg.TypesInfo,
		byAst:      make(map[*ast.File]*fileRewriter),
		parent:     make(map[ast.Node]ast.Node),
		actions:    make(map[ast.Node]action),
		enterAfter: make(map[ast.Node]dst.Expr),
		before:     make(map[ast.Stmt][]dst.Stmt),
		after:      make(map[ast.Stmt][]dst.Stmt),
		testMain:   -1,
	}
	if err := ur.selectFiles(); err != nil {
		return nil, nil, err
	}
	res, err := analyze(u.pkg)
	if err != nil {
		return nil, nil, fmt.Errorf("analyzing %s: %w", u.pkg.ID, err)
	}
	ur.res = res
	ur.index()
	ur.plan()
	files, err := ur.apply()
	if err != nil {
		return nil, nil, err
	}
	return files, ur, nil
}

// rewritten reports whether the unit is rewritten already: a file of it
// imports the runtime under the rewriter's alias, or its directory holds a
// file that rewriting adds.
func (u *unit) rewritten() bool {
	for _, f := range u.pkg.Syntax {
		for _, imp := range f.Imports {
			if imp.Name != nil && imp.Name.Name == shadowAlias {
				return true
			}
		}
	}
	for _, name := range []string{genFile, genTestFile, genXTestFile} {
		if data, err := os.ReadFile(filepath.Join(u.pkg.Dir, name)); err == nil && bytes.HasPrefix(data, []byte(GeneratedHeader)) {
			return true
		}
	}
	return false
}

// selectFiles decides which files of the package to rewrite: the Go files
// of the package's directory that are neither generated nor cgo files.
func (ur *unitRewriter) selectFiles() error {
	pkg := ur.u.pkg
	var errs []error
	for _, f := range pkg.Syntax {
		name := ur.fset.File(f.Pos()).Name()
		if !slices.Contains(pkg.GoFiles, name) || ast.IsGenerated(f) || importsC(f) {
			continue // cgo output, generated or cgo source: left as it is
		}
		if hasLineDirective(f) {
			ur.warnings = append(ur.warnings, fmt.Sprintf("%s: not rewritten: the file has //line directives of its own", ur.prog.relPath(name)))
			continue
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == shadowPath {
				errs = append(errs, refuse("%s: the file imports the spanprof runtime itself (instrumented by hand?)", ur.pos(imp.Pos())))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(id.Name, namePrefix) {
				errs = append(errs, refuse("%s: unsupported: identifier %s would clash with the names spanprof injects", ur.pos(id.Pos()), id.Name))
			}
			return true
		})
		t := tablePkg
		switch {
		case ur.u.xtest:
			t = tableXTest
		case strings.HasSuffix(name, "_test.go"):
			t = tableTest
		}
		// A //line directive names the file by its path in an overlay,
		// which the go command compiles from elsewhere, and by its base
		// name in a file written for keeps: the compiler and go/scanner
		// read a relative name relative to the file's own directory, and
		// nothing of this machine's paths goes into the user's tree.
		lineName := name
		if ur.prog.cfg.Mode != Overlay {
			lineName = filepath.Base(name)
		}
		fr := &fileRewriter{ast: f, name: name, lineName: lineName, table: t}
		ur.files = append(ur.files, fr)
		ur.byAst[f] = fr
	}
	return errors.Join(errs...)
}

// pos formats p as file:line:col with the file relative to the working
// directory where that is shorter.
func (ur *unitRewriter) pos(p token.Pos) string {
	q := ur.fset.PositionFor(p, false)
	return fmt.Sprintf("%s:%d:%d", ur.prog.relPath(q.Filename), q.Line, q.Column)
}

// line formats p as file:line.
func (ur *unitRewriter) line(p token.Pos) string {
	q := ur.fset.PositionFor(p, false)
	return fmt.Sprintf("%s:%d", ur.prog.relPath(q.Filename), q.Line)
}

func importsC(f *ast.File) bool {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

func hasLineDirective(f *ast.File) bool {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
				return true
			}
		}
	}
	return false
}

// index records every node's parent.
func (ur *unitRewriter) index() {
	for _, file := range ur.u.pkg.Syntax {
		ast.PreorderStack(file, nil, func(n ast.Node, stack []ast.Node) bool {
			if len(stack) > 0 {
				ur.parent[n] = stack[len(stack)-1]
			}
			return true
		})
	}
}

// up returns the parent of n, skipping parentheses.
func (ur *unitRewriter) up(n ast.Node) ast.Node {
	p := ur.parent[n]
	for {
		if _, ok := p.(*ast.ParenExpr); !ok {
			return p
		}
		p = ur.parent[p]
	}
}

// inList reports whether statement s is an element of a statement list,
// where statements can be inserted before and after it.
func (ur *unitRewriter) inList(s ast.Stmt) bool {
	switch ur.parent[s].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
		return true
	}
	return false
}

// fileOf returns the rewriter of the file containing p, or nil when that
// file is not rewritten.
func (ur *unitRewriter) fileOf(p token.Pos) *fileRewriter {
	for _, fr := range ur.files {
		if fr.ast.FileStart <= p && p < fr.ast.FileEnd {
			return fr
		}
	}
	return nil
}

// addSite appends a site to the table of the file containing p and
// returns the expression that names it.
func (ur *unitRewriter) addSite(fr *fileRewriter, p token.Pos, fn, caller, kind string) dst.Expr {
	q := ur.fset.PositionFor(p, false)
	rel, err := filepath.Rel(ur.prog.Module.Dir, q.Filename)
	if err != nil {
		rel = q.Filename
	}
	t := &ur.tables[fr.table]
	*t = append(*t, siteInfo{File: filepath.ToSlash(rel), Line: q.Line, Column: q.Column, Func: fn, Caller: caller, Kind: kind})
	return siteRef(tableVars[fr.table], len(*t)-1)
}

// siteRef is the expression _spanprofSites+i.
func siteRef(table string, i int) dst.Expr {
	return &dst.BinaryExpr{X: dst.NewIdent(table), Op: token.ADD, Y: &dst.BasicLit{Kind: token.INT, Value: strconv.Itoa(i)}}
}

// rt is the qualified name of a runtime function: _spanprof_shadow.name.
func rt(name string) dst.Expr {
	return &dst.SelectorExpr{X: dst.NewIdent(shadowAlias), Sel: dst.NewIdent(name)}
}

// rtCall is a call of a runtime function.
func rtCall(name string, args ...dst.Expr) *dst.CallExpr {
	return &dst.CallExpr{Fun: rt(name), Args: args}
}

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
		ur.actions[s.Node] = func(fr *fileRewriter, c *dstutil.Cursor) { ur.rewriteGo(c, s, site) }
	case forkjoin.WaitGroupGo, forkjoin.ErrgroupGo, forkjoin.ErrgroupTryGo, forkjoin.ParlibGroupSpawn:
		helper := map[forkjoin.SpawnKind]string{
			forkjoin.WaitGroupGo:      rtWaitGroupGo,
			forkjoin.ErrgroupGo:       rtGroupGo,
			forkjoin.ErrgroupTryGo:    rtGroupTryGo,
			forkjoin.ParlibGroupSpawn: rtParlibGroupSpawn,
		}[s.Kind]
		ur.actions[s.Node] = func(fr *fileRewriter, c *dstutil.Cursor) {
			call := c.Node().(*dst.CallExpr)
			recv, args := ur.receiver(s.Call, call)
			replaceExpr(c, rtCall(helper, append([]dst.Expr{site, recv}, args...)...))
		}
	case forkjoin.ParlibSpawn:
		ur.actions[s.Node] = func(fr *fileRewriter, c *dstutil.Cursor) {
			call := c.Node().(*dst.CallExpr)
			replaceExpr(c, rtCall(rtParlibSpawn, site, call.Fun, call.Args[0]))
		}
	case forkjoin.ParlibDo, forkjoin.ParlibFor:
		helper := rtParlibDo
		if s.Kind == forkjoin.ParlibFor {
			fn, _ := typeutil.Callee(ur.info, s.Call).(*types.Func)
			helper = rtParlibLoop[fn.Name()] // For, ForRange, ForEach
		}
		ur.actions[s.Node] = func(fr *fileRewriter, c *dstutil.Cursor) {
			// The helper takes parlib's function too (with any explicit
			// type arguments): the file's import of parlib stays used.
			call := c.Node().(*dst.CallExpr)
			n := rtCall(helper, append([]dst.Expr{site, call.Fun}, call.Args...)...)
			n.Ellipsis = call.Ellipsis
			replaceExpr(c, n)
		}
	}
}

// receiver returns a pointer to the join object that call (a method call on
// it, as a method value or a method expression) operates on, and the
// call's other arguments. The object is addressable or a pointer, since its
// methods have pointer receivers.
func (ur *unitRewriter) receiver(orig *ast.CallExpr, call *dst.CallExpr) (dst.Expr, []dst.Expr) {
	osel := ast.Unparen(orig.Fun).(*ast.SelectorExpr)
	sel := ur.info.Selections[osel]
	if sel.Kind() == types.MethodExpr {
		return call.Args[0], call.Args[1:]
	}
	x := unparen(call.Fun).(*dst.SelectorExpr).X
	t := sel.Recv()
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		st := derefType(t).Underlying().(*types.Struct)
		f := st.Field(i)
		x = &dst.SelectorExpr{X: x, Sel: dst.NewIdent(f.Name())}
		t = f.Type()
	}
	if _, ok := t.Underlying().(*types.Pointer); ok {
		return x, call.Args
	}
	if u, ok := x.(*dst.StarExpr); ok {
		return u.X, call.Args // &*p is p
	}
	return &dst.UnaryExpr{Op: token.AND, X: x}, call.Args
}

func derefType(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func unparen(e dst.Expr) dst.Expr {
	for {
		p, ok := e.(*dst.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// replaceExpr replaces the cursor's node with n, which takes over its
// decorations (line breaks and comments around it).
func replaceExpr(c *dstutil.Cursor, n dst.Node) {
	old := c.Node()
	*n.Decorations() = *old.Decorations()
	*old.Decorations() = dst.NodeDecs{}
	c.Replace(n)
}

// rewriteGo turns a go statement into a call of shadow.Go with a closure
// that makes the statement's call. The go statement evaluates the function
// value and the arguments before it spawns; so does the rewrite, into
// temporaries in a block of their own, except for what has no effects and
// no value that could change: constants, nil, function literals and names
// of functions.
func (ur *unitRewriter) rewriteGo(c *dstutil.Cursor, s *forkjoin.Spawn, site dst.Expr) {
	g := c.Node().(*dst.GoStmt)
	call := g.Call
	var (
		names []dst.Expr
		vals  []dst.Expr
	)
	temp := func(name string, v dst.Expr) dst.Expr {
		names = append(names, dst.NewIdent(name))
		vals = append(vals, v)
		return dst.NewIdent(name)
	}
	fun := call.Fun
	if lit, ok := unparen(fun).(*dst.FuncLit); ok && len(call.Args) == 0 && (lit.Type.Results == nil || len(lit.Type.Results.List) == 0) {
		// go func() {...}(): the literal is the child.
		replaceStmt(c, g, &dst.ExprStmt{X: rtCall(rtGo, site, unparen(fun))})
		return
	}
	if !ur.stable(s.Call.Fun) {
		fun = temp(namePrefix+"F", fun)
	}
	args := make([]dst.Expr, len(call.Args))
	for i, a := range call.Args {
		if ur.stable(s.Call.Args[i]) {
			args[i] = a
		} else {
			args[i] = temp(namePrefix+"A"+strconv.Itoa(i), a)
		}
	}
	inner := &dst.CallExpr{Fun: fun, Args: args, Ellipsis: call.Ellipsis}
	closure := &dst.FuncLit{
		Type: &dst.FuncType{Func: true, Params: &dst.FieldList{}},
		Body: &dst.BlockStmt{List: []dst.Stmt{&dst.ExprStmt{X: inner}}},
	}
	spawn := &dst.ExprStmt{X: rtCall(rtGo, site, closure)}
	if len(names) == 0 {
		replaceStmt(c, g, spawn)
		return
	}
	assign := &dst.AssignStmt{Lhs: names, Tok: token.DEFINE, Rhs: vals}
	assign.Decs.Before = dst.NewLine
	spawn.Decs.Before = dst.NewLine
	spawn.Decs.After = dst.NewLine
	replaceStmt(c, g, &dst.BlockStmt{List: []dst.Stmt{assign, spawn}})
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

// replaceStmt replaces statement old (the cursor's node) with n, which
// takes over its line breaks and comments.
func replaceStmt(c *dstutil.Cursor, old dst.Stmt, n dst.Stmt) {
	decs := old.Decorations()
	nd := n.Decorations()
	nd.Before, nd.After = decs.Before, decs.After
	nd.Start = append(nd.Start, decs.Start...)
	nd.End = append(nd.End, decs.End...)
	if g, ok := old.(*dst.GoStmt); ok {
		nd.End = append(nd.End, g.Decs.Go...)
	}
	*decs = dst.NodeDecs{}
	c.Replace(n)
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
	ur.actions[call] = func(fr *fileRewriter, c *dstutil.Cursor) {
		recv, args := ur.receiver(call, c.Node().(*dst.CallExpr))
		replaceExpr(c, rtCall(helper, append([]dst.Expr{recv}, args...)...))
	}
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
	ur.actions[w.Node] = func(fr *fileRewriter, c *dstutil.Cursor) {
		recv, args := ur.receiver(w.Node, c.Node().(*dst.CallExpr))
		replaceExpr(c, rtCall(helper, append([]dst.Expr{recv}, args...)...))
	}
}

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
func (ur *unitRewriter) planCall(c *forkjoin.Call) {
	skip := func(why string) {
		if ur.stats.CallsSkipped == nil {
			ur.stats.CallsSkipped = make(map[string]int)
		}
		ur.stats.CallsSkipped[why]++
	}
	if c.Func.StartedBy != nil {
		skip(skipUnprof)
		return
	}
	switch {
	case c.Deferred:
		skip(skipDeferred)
		return
	case ur.prog.inlinable(ur.fset, c.Callee):
		skip(skipInlined)
		return
	case c.Callee == c.Func && c.Callee.Serial:
		skip(skipSerial) // see Serial recursion, above
		return
	}
	n := 1
	if tup, ok := ur.info.TypeOf(c.Node).(*types.Tuple); ok {
		n = tup.Len()
	}
	fr := ur.fileOf(c.Node.Pos())
	after, why := ur.enterPoint(c.Node)
	// inside warns that the calls the call's evaluation makes are charged
	// to the callee.
	inside := func(why string) {
		if why == "" {
			return
		}
		ur.stats.CallsArgsInside++
		ur.warnings = append(ur.warnings, fmt.Sprintf("%s: the calls in the arguments of %s are charged to it: %s", ur.line(c.Node.Pos()), ur.res.CalleeName(c.Node.Fun), why))
	}
	var (
		stmt  ast.Stmt // the statement before which CallBegin goes, for n != 1
		multi bool     // the call is the one value of an assignment, declaration or return
	)
	switch p := ur.up(c.Node).(type) {
	case *ast.ExprStmt:
		if n != 1 {
			if !ur.inList(p) {
				skip(skipPosition)
				return
			}
			site := ur.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
			if after != nil {
				ur.enterAfter[after] = site
			} else {
				inside(why)
				ur.before[p] = append(ur.before[p], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
			}
			ur.after[p] = append(ur.after[p], &dst.ExprStmt{X: rtCall(rtCallEnd)})
			ur.stats.Calls++
			return
		}
	case *ast.AssignStmt:
		if n != 1 && len(p.Rhs) == 1 {
			stmt, multi = p, true
			if after == nil && why == "" && slices.ContainsFunc(p.Lhs, ur.hasEvent) {
				// m[g()], x = f(y): a CallBegin statement would go
				// before g.
				after, why = ur.lastArg(c.Node, "the assignment makes calls on its left side")
			}
		}
	case *ast.ValueSpec:
		if n != 1 && len(p.Values) == 1 {
			multi = true
			if d, ok := ur.parent[ur.parent[p]].(*ast.DeclStmt); ok {
				stmt = d
				for _, q := range d.Decl.(*ast.GenDecl).Specs {
					if q == p {
						break
					}
					if after == nil && why == "" && slices.ContainsFunc(q.(*ast.ValueSpec).Values, ur.hasEvent) {
						after, why = ur.lastArg(c.Node, "the declaration makes calls before it")
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
		site := ur.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
		ur.stats.Calls++
		if after != nil {
			ur.enterAfter[after] = site
		} else {
			inside(why)
		}
		ur.actions[c.Node] = func(fr *fileRewriter, cur *dstutil.Cursor) {
			call := cur.Node().(*dst.CallExpr)
			w := rtCall(rtLeave1, call)
			if after == nil {
				w = rtCall(rtLeave, rtCall(rtEnter, site), call)
			}
			*w.Decorations() = call.Decs.NodeDecs
			call.Decs.NodeDecs = dst.NodeDecs{}
			cur.Replace(w)
		}
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
	leave := func(fr *fileRewriter, cur *dstutil.Cursor) {
		call := cur.Node().(*dst.CallExpr)
		w := rtCall(rtLeaveN[n], call)
		*w.Decorations() = call.Decs.NodeDecs
		call.Decs.NodeDecs = dst.NodeDecs{}
		cur.Replace(w)
	}
	if after != nil {
		// No statement needed: any position of a multi-valued call will
		// do, a for statement's post statement and an else-if's init too.
		site := ur.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
		ur.stats.Calls++
		ur.enterAfter[after] = site
		ur.actions[c.Node] = leave
		return
	}
	if stmt != nil && !ur.inList(stmt) {
		// The init statement of an if, switch or for runs once, before
		// anything else of the statement: CallBegin can go before that.
		switch p := ur.parent[stmt].(type) {
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
	if stmt == nil || !ur.inList(stmt) {
		skip(skipPosition)
		return
	}
	site := ur.addSite(fr, c.Node.Pos(), c.Callee.Name, c.Func.Name, "call")
	ur.stats.Calls++
	inside(why)
	ur.before[stmt] = append(ur.before[stmt], &dst.ExprStmt{X: rtCall(rtCallBegin, site)})
	ur.actions[c.Node] = leave
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
func (ur *unitRewriter) enterPoint(call *ast.CallExpr) (after ast.Expr, why string) {
	e := ast.Expr(call)
	for {
		var last ast.Expr
		for _, c := range children(e) {
			if x, ok := c.(ast.Expr); ok && ur.hasEvent(x) {
				last = x
			}
		}
		if last == nil {
			return nil, "" // the events are above: none if e is call
		}
		if b, ok := ast.Unparen(last).(*ast.BinaryExpr); ok && (b.Op == token.LAND || b.Op == token.LOR) && ur.hasEvent(b.Y) {
			// b.Y may not be evaluated: b is wrapped whole, if it has
			// the type that EnterAfter's inference gives it.
			if !ur.untyped(b) || types.Identical(ur.info.TypeOf(b), types.Typ[types.Bool]) {
				return last, ""
			}
			return nil, "its last argument that makes calls is an untyped " + b.Op.String() + " of another type than bool"
		}
		if ur.isEvent(last) {
			if _, ok := ur.info.TypeOf(last).(*types.Tuple); ok {
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
func (ur *unitRewriter) lastArg(call *ast.CallExpr, why string) (ast.Expr, string) {
	if len(call.Args) == 0 {
		return nil, why
	}
	a := call.Args[len(call.Args)-1]
	if tv := ur.info.Types[a]; tv.IsNil() || tv.Type == nil || ur.untyped(a) {
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
		if fn, ok := ur.info.Uses[x].(*types.Func); ok && fn.Signature().TypeParams().Len() > 0 {
			return nil, why
		}
	}
	return a, ""
}

// untyped reports whether e, a boolean or numeric expression, is untyped
// by itself, its type set by its context: a comparison, or an operation on
// untyped constants and untyped expressions (1<<n with n a variable).
func (ur *unitRewriter) untyped(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		c, ok := ur.info.Uses[x].(*types.Const)
		return ok && isUntyped(c.Type())
	case *ast.SelectorExpr:
		c, ok := ur.info.Uses[x.Sel].(*types.Const)
		return ok && ur.info.Selections[x] == nil && isUntyped(c.Type())
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && x.Op != token.AND && ur.untyped(x.X)
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return true
		case token.SHL, token.SHR:
			return ur.untyped(x.X)
		}
		return ur.untyped(x.X) && ur.untyped(x.Y)
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
func (ur *unitRewriter) isEvent(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.CallExpr:
		tv := ur.info.Types[x.Fun]
		return !tv.IsType() && !tv.IsBuiltin()
	case *ast.UnaryExpr:
		return x.Op == token.ARROW
	}
	return false
}

// hasEvent reports whether evaluating e makes a call or a receive
// (isEvent). The bodies of function literals are not evaluated, nor are the
// operands of constant expressions (unsafe.Sizeof(g())) or types.
func (ur *unitRewriter) hasEvent(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case ast.Expr:
			if tv, ok := ur.info.Types[x]; ok && (tv.Value != nil || tv.IsType()) {
				return false
			}
			if ur.isEvent(x) {
				found = true
				return false
			}
		}
		return true
	})
	return found
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
				ur.actions[fd] = func(fr *fileRewriter, c *dstutil.Cursor) {
					body := c.Node().(*dst.FuncDecl).Body
					start := &dst.ExprStmt{X: rtCall(rtStartIfNeeded)}
					finish := &dst.DeferStmt{Call: rtCall(rtFinish)}
					start.Decs.Before, finish.Decs.Before = dst.NewLine, dst.NewLine
					body.List = append([]dst.Stmt{start, finish}, body.List...)
				}
			case fd.Name.Name == "TestMain" && fr.table != tablePkg && ur.prog.cfg.Tests && ur.u.named:
				ur.testMain = fr.table
				ur.actions[fd] = func(fr *fileRewriter, c *dstutil.Cursor) {
					c.Node().(*dst.FuncDecl).Name.Name = userTestMain
				}
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
			ur.actions[call] = func(fr *fileRewriter, c *dstutil.Cursor) {
				call := c.Node().(*dst.CallExpr)
				call.Args = []dst.Expr{rtCall(rtBeforeExit, call.Args...)}
			}
			return true
		})
	}
}
