package rewrite

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"

	"github.com/dave/dst"
	"github.com/dave/dst/dstutil"
)

// Edits: what the plan puts at a node of the original syntax, as data, and
// how the apply phase carries it out on the node's decorated form. Each
// apply returns the node now at the cursor, which an EnterAfter planned for
// the same node then wraps.

// A nodeEdit is the change at one node of the original syntax, made to its
// decorated form when the bottom-up walk reaches it, after its children.
type nodeEdit interface {
	apply(c *dstutil.Cursor) dst.Node
}

// A helperCall replaces a call with a call of a runtime helper:
// helper(site, recv, args...) for a method of a join object, or
// helper(site, fun, args...) where the helper takes the function too. site
// is left out where nil, and recv and fun where not asked for.
type helperCall struct {
	helper   dst.Expr // rt(name)
	site     dst.Expr
	recv     *receiverPath // the join object, as a pointer, first; its method's other arguments follow
	fun      bool          // the call's function first (parlib's, t.Run's), then all its arguments
	ellipsis bool          // keep the call's "..."
}

func (e helperCall) apply(c *dstutil.Cursor) dst.Node {
	call := c.Node().(*dst.CallExpr)
	var args []dst.Expr
	if e.site != nil {
		args = append(args, e.site)
	}
	rest := call.Args
	switch {
	case e.recv != nil:
		var recv dst.Expr
		recv, rest = e.recv.apply(call)
		args = append(args, recv)
	case e.fun:
		args = append(args, call.Fun)
	}
	n := &dst.CallExpr{Fun: e.helper, Args: append(args, rest...)}
	if e.ellipsis {
		n.Ellipsis = call.Ellipsis
	}
	replaceExpr(c, n)
	return n
}

// A receiverPath says how to make a pointer to the join object of a method
// call, as a method value or a method expression: the first argument of a
// method expression, or the selector's operand followed through the
// embedded fields the method is promoted through, and its address taken
// unless it is a pointer. The object is addressable or a pointer, since its
// methods have pointer receivers.
type receiverPath struct {
	methodExpr bool
	embedded   []string
	addr       bool
}

// apply returns the pointer to the join object of call and the call's
// other arguments.
func (p *receiverPath) apply(call *dst.CallExpr) (dst.Expr, []dst.Expr) {
	if p.methodExpr {
		return call.Args[0], call.Args[1:]
	}
	x := unparen(call.Fun).(*dst.SelectorExpr).X
	for _, name := range p.embedded {
		x = &dst.SelectorExpr{X: x, Sel: dst.NewIdent(name)}
	}
	if !p.addr {
		return x, call.Args
	}
	if u, ok := x.(*dst.StarExpr); ok {
		return u.X, call.Args // &*p is p
	}
	return &dst.UnaryExpr{Op: token.AND, X: x}, call.Args
}

// A leaveCall wraps a call of a function of the package: in
// Leave(Enter(site), call) when enter is set, else in Leave1 or LeaveN
// for its number of results (the invocation then begins at an EnterAfter or
// a CallBegin statement).
type leaveCall struct {
	results int
	enter   dst.Expr
	glue    bool // LeaveGlue: a wait follows with nothing between (glue.go)
}

func (e leaveCall) apply(c *dstutil.Cursor) dst.Node {
	call := c.Node().(*dst.CallExpr)
	w := rtCall(rtLeaveN[e.results], call)
	if e.enter != nil {
		leave := rtLeave
		if e.glue {
			leave = rtLeaveGlue
		}
		w = rtCall(leave, rtCall(rtEnter, e.enter), call)
	}
	*w.Decorations() = call.Decs.NodeDecs
	call.Decs.NodeDecs = dst.NodeDecs{}
	c.Replace(w)
	return w
}

// A prologue puts statements at the start of a function's body.
type prologue struct{ stmts []dst.Stmt }

func (e prologue) apply(c *dstutil.Cursor) dst.Node {
	var body *dst.BlockStmt
	switch n := c.Node().(type) {
	case *dst.FuncDecl:
		body = n.Body
	case *dst.FuncLit:
		body = n.Body
	}
	body.List = append(slices.Clip(e.stmts), body.List...)
	return c.Node()
}

// A rename renames a declared function.
type rename struct{ name string }

func (e rename) apply(c *dstutil.Cursor) dst.Node {
	c.Node().(*dst.FuncDecl).Name.Name = e.name
	return c.Node()
}

// wrapArgs passes a call's arguments through a runtime helper:
// f(helper(args...)).
type wrapArgs struct{ helper dst.Expr }

func (e wrapArgs) apply(c *dstutil.Cursor) dst.Node {
	call := c.Node().(*dst.CallExpr)
	call.Args = []dst.Expr{&dst.CallExpr{Fun: e.helper, Args: call.Args}}
	return call
}

// A goSpawn turns a go statement into a call of shadow.Go with a closure
// that makes the statement's call. The go statement evaluates the function
// value and the arguments before it spawns; so does the rewrite, into
// temporaries in a block of their own, except for what has no effects and
// no value that could change (stableFun, stableArgs): constants, nil,
// function literals and names of functions.
type goSpawn struct {
	site       dst.Expr
	stableFun  bool
	stableArgs []bool
}

func (e goSpawn) apply(c *dstutil.Cursor) dst.Node {
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
		return replaceStmt(c, g, &dst.ExprStmt{X: rtCall(rtGo, e.site, unparen(fun))})
	}
	if !e.stableFun {
		fun = temp(namePrefix+"F", fun)
	}
	args := make([]dst.Expr, len(call.Args))
	for i, a := range call.Args {
		if e.stableArgs[i] {
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
	spawn := &dst.ExprStmt{X: rtCall(rtGo, e.site, closure)}
	if len(names) == 0 {
		return replaceStmt(c, g, spawn)
	}
	assign := &dst.AssignStmt{Lhs: names, Tok: token.DEFINE, Rhs: vals}
	assign.Decs.Before = dst.NewLine
	spawn.Decs.Before = dst.NewLine
	spawn.Decs.After = dst.NewLine
	return replaceStmt(c, g, &dst.BlockStmt{List: []dst.Stmt{assign, spawn}})
}

// rt is the qualified name of a runtime function: _spanprof_shadow.name.
func rt(name string) dst.Expr {
	return &dst.SelectorExpr{X: dst.NewIdent(shadowAlias), Sel: dst.NewIdent(name)}
}

// rtCall is a call of a runtime function.
func rtCall(name string, args ...dst.Expr) *dst.CallExpr {
	return &dst.CallExpr{Fun: rt(name), Args: args}
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

// replaceStmt replaces statement old (the cursor's node) with n, which
// takes over its line breaks and comments.
func replaceStmt(c *dstutil.Cursor, old dst.Stmt, n dst.Stmt) dst.Node {
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
	return n
}
