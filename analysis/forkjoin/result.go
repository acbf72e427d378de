package forkjoin

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// A Result is the fork/join structure of one package. Every list is in
// source order (by position in the package's files, as the pass read them).
// A Result is read-only once the analyzer has returned it: analyzers that
// require forkjoin may read it concurrently.
type Result struct {
	// Funcs lists every function declared in the package that has a body:
	// function and method declarations and function literals. A spawned
	// literal has its own Func, distinct from the function that spawns it.
	Funcs []*Func
	// Spawns lists every spawn site; Signals every Done, Add and implicit
	// contribution at a spawned function's return; Waits every Wait, Sync
	// and implicit wait of parlib's loops.
	Spawns  []*Spawn
	Signals []*Signal
	Waits   []*Wait
	// Limits lists every errgroup SetLimit call: how many of a group's
	// children may run at once, which bounds its parallelism.
	Limits []*Limit
	// Semaphores lists every buffered channel seen bounding a spawn
	// site's children (see [Semaphore]), in the order of the spawns.
	Semaphores []*Semaphore
	// Calls lists the static calls of functions in Funcs (not spawns): the
	// calls a profiler instruments.
	Calls []*Call
	// Objects lists each join object that a spawn, signal or wait of this
	// package uses, once, in order of first use.
	Objects []*JoinObject

	funcs   map[ast.Node]*Func
	objects map[string]*JoinObject
	byObj   map[*types.Func]*Func       // declared functions by object (generic origin)
	litVar  map[*types.Var]*ast.FuncLit // function variables assigned exactly one literal
	calls   map[*ast.CallExpr]*Call
	files   []*ast.File
	fset    *token.FileSet
	info    *types.Info
	pkg     *types.Package
}

// Func returns the Func for a *ast.FuncDecl or *ast.FuncLit of the package,
// or nil.
func (r *Result) Func(node ast.Node) *Func { return r.funcs[node] }

// Object returns the join object with the given key, or nil.
func (r *Result) Object(key string) *JoinObject { return r.objects[key] }

// A Func is a function declared in the package: a declaration with a body or
// a function literal.
type Func struct {
	Node ast.Node    // *ast.FuncDecl or *ast.FuncLit
	Obj  *types.Func // the declared function or method; nil for a literal
	// Name is the function's name as the compiler spells it at run time
	// (runtime.FuncForPC): "example.com/m/p.f", "example.com/m/p.(*T).m",
	// "example.com/m/p.f.func1" for the first literal in f and
	// "example.com/m/p.f.func1.1" for one nested in it, "p.g[...]" for a
	// generic function, "p.init.func1" for a literal in a package-level
	// variable's initializer; "main.f" in a main package. Literals are
	// numbered in source order within their enclosing function, as the
	// compiler does.
	Name string
	Type *ast.FuncType
	Body *ast.BlockStmt
	// Params are the variables a call binds, the receiver first for a
	// method, then the parameters in order; blank and unnamed ones are
	// included, so the indexes match the call's operands.
	Params []*types.Var
	Outer  *Func // the function a literal appears in; nil for a declaration
	// Literals are the function literals whose Outer is this function, in
	// source order.
	Literals []*Func

	// Serial reports, for a declared function, that neither it nor the
	// literals in it can fork or join: no spawn, signal or wait of their
	// own, and every call in them is of a builtin, a conversion, a function
	// of this package that is serial in turn, or a function outside the
	// module being analyzed that is given no function value to call back.
	// Calls of function values and interface methods may reach anything,
	// so they make a function not serial. It is false for a literal, which
	// counts in the declaration it appears in.
	Serial bool
	// Outside is the first call, in the function's code or in what it
	// calls or declares in the package, of a method of another package that
	// takes a context.Context (see [OutsideWait]); nil if none.
	Outside *OutsideWait
	// StartedBy is the call of a goroutine API (time.AfterFunc, ...) that
	// runs this function, or the function that declares it, on a goroutine
	// of its own; nil if none.
	StartedBy *GoroutineAPICall

	// Sites that appear in this function's own code, not in nested
	// literals. Signals holds its Done and Add calls; the Return signals of
	// spawned functions are listed by their Spawn and in Result.Signals.
	Spawns  []*Spawn
	Signals []*Signal
	Waits   []*Wait
	Calls   []*Call

	sig       *types.Signature
	deferStmt *ast.DeferStmt // for a deferred literal, its defer statement
	inlines   []*Func        // literals in this function's own code that are not spawned
	deferred  bool           // a literal that is the function of a defer statement
	immediate bool           // a literal called where it appears: func(){...}()
	spawned   bool           // a literal that is the function of a spawn
}

// A SpawnKind says which idiom a spawn site uses.
type SpawnKind int

const (
	GoStmt           SpawnKind = iota + 1 // go f(x), go func() {...}()
	WaitGroupGo                           // (*sync.WaitGroup).Go(f)
	ErrgroupGo                            // (*errgroup.Group).Go(f)
	ErrgroupTryGo                         // (*errgroup.Group).TryGo(f): spawns only when it returns true
	ParlibGroupSpawn                      // (*parlib.Group).Spawn(f)
	ParlibSpawn                           // parlib.Spawn(f), whose *Task is the join object
	ParlibDo                              // parlib.Do(f, g, ...): one Spawn per function, with an implicit Wait at the call
	ParlibFor                             // parlib.For, ForRange, ForEach: the body spawned for pieces, implicit Wait at the call
)

var spawnKindNames = [...]string{"", "go", "WaitGroup.Go", "errgroup.Go", "errgroup.TryGo", "parlib.Group.Spawn", "parlib.Spawn", "parlib.Do", "parlib.For"}

func (k SpawnKind) String() string { return enumName(spawnKindNames[:], int(k)) }

// A Contribution says how a spawned function signals its join object.
type Contribution int

const (
	// NoContribution: nothing in the spawned function is seen to signal a
	// join object; a fire-and-forget goroutine, or one whose Done is out of
	// sight (in a function value, in another package, behind a call).
	NoContribution Contribution = iota
	// AtReturn: the function's return signals the join object (wg.Go,
	// errgroup, parlib).
	AtReturn
	// DeferredDone: a defer statement at the top level of the body, before
	// any other statement that can return, arranges the Done, so every
	// return signals.
	DeferredDone
	// ExplicitDone: Done (or Add with a negative constant) calls in the body
	// that do not obviously cover every return.
	ExplicitDone
)

var contributionNames = [...]string{"none", "at return", "deferred Done", "explicit Done"}

func (c Contribution) String() string { return enumName(contributionNames[:], int(c)) }

// A Spawn is a spawn site.
type Spawn struct {
	Kind SpawnKind
	// Node is the *ast.GoStmt, or the *ast.CallExpr of Go, TryGo, Spawn,
	// Do or For. Pos is Node.Pos().
	Node ast.Node
	Pos  token.Pos
	// Call is the go statement's call, or Node itself for the others.
	Call *ast.CallExpr
	// Fun is the spawned function as written: for a go statement the
	// function of the call (a *ast.FuncLit, or the name of a function,
	// method value or function value); otherwise the function argument.
	Fun ast.Expr
	// Lit is Fun when it is a function literal.
	Lit *ast.FuncLit
	// Closure reports whether the spawned function is a literal (a closure),
	// as opposed to a named function, method or function value.
	Closure bool
	// Args are the operands the spawner binds to the spawned function's
	// parameters: a go statement's arguments, with the method value's
	// receiver first for go x.m(...) (see Func.Params); nil for the other
	// kinds, whose functions take no arguments from the spawner.
	Args []ast.Expr
	// Callee is the spawned function when the package declares it (a
	// literal, a function or method, or a local variable assigned exactly
	// one literal); nil when its code is not visible.
	Callee *Func
	// Func is the function that contains the spawn site.
	Func *Func

	// Join is the join object the spawned function contributes to, in the
	// spawner's terms; nil when none is known (Contrib is NoContribution).
	Join    *JoinObject
	Contrib Contribution
	// Signals are the spawn's contributions to Join: the Done and Add calls
	// in the spawned function's body (including deferred literals and
	// literals called in place) for a go statement, or the one Return
	// signal for the other kinds.
	Signals []*Signal
	// Wait is the implicit wait of ParlibDo and ParlibFor, at the same call.
	Wait *Wait
	// Loops is how many for and range statements of Func enclose the
	// spawn: 0 for a spawn in no loop (recursion), 1 for one per
	// iteration of a flat loop, 2 or more inside nested loops.
	Loops int

	// Elidable reports whether running the spawned function inline at the
	// spawn point cannot wait forever on the continuation; when it is
	// false, Reason says why ("receives from channel ch at a.go:12") and
	// ReasonPos points at the cause.
	Elidable  bool
	Reason    string
	ReasonPos token.Pos
	// Outside is set when the spawn is not elidable only because its code
	// calls a method of another package that takes a context.Context, or
	// it spawns one (see [OutsideWait]); Reason then describes it.
	Outside *OutsideWait

	bind    map[types.Object]ref // Callee's parameters bound to the spawner's access paths
	res     *Result
	taskVar ast.Expr // the variable a parlib.Spawn's Task is stored in
	unknown string   // why the spawned code is not elidable when it is not visible
}

// Map translates a join object named inside the spawned function (Callee)
// into the spawner's terms: an access path rooted at one of Callee's
// parameters is rebased on the argument bound to it; one rooted at a
// captured or package-level variable is returned unchanged. A path rooted at
// a parameter the spawner does not bind, or at a variable declared in
// Callee's body (a new variable at each call, even when Callee is the
// spawner itself), becomes an inexact object that matches nothing.
func (s *Spawn) Map(j *JoinObject) *JoinObject {
	if j == nil {
		return nil
	}
	r, ok := s.res.rebase(j.ref, s.bind, s.Callee)
	if !ok {
		return j
	}
	return s.res.lookup(r, j.Kind, j.Expr, j.Type)
}

// A SignalKind says what a signal does to its join object.
type SignalKind int

const (
	Done   SignalKind = iota + 1 // (*sync.WaitGroup).Done
	Add                          // (*sync.WaitGroup).Add(n): registers n children, or contributes when n < 0
	Return                       // the return of a function spawned by wg.Go, errgroup or parlib
)

var signalKindNames = [...]string{"", "Done", "Add", "return"}

func (k SignalKind) String() string { return enumName(signalKindNames[:], int(k)) }

// A Signal is a join contribution (Done, Add with a negative delta, the
// return of a spawned function) or a registration (Add with a positive or
// unknown delta).
type Signal struct {
	Kind SignalKind
	// Node is the *ast.CallExpr of Done and Add; for Return, the spawned
	// function's *ast.FuncLit or *ast.FuncDecl, or Spawn.Fun when the code
	// is not visible.
	Node ast.Node
	// Pos is the call's position, or for Return the closing brace of the
	// spawned function's body (the spawn's position if not visible).
	Pos  token.Pos
	Recv ast.Expr    // the receiver expression of Done and Add
	Join *JoinObject // in the terms of Func
	// Delta is Add's constant argument; DeltaKnown is false when it is not
	// a constant.
	Delta      int64
	DeltaKnown bool
	// Deferred reports that the call is made by a defer statement, directly
	// or inside a deferred literal.
	Deferred bool
	Func     *Func  // the function containing the call; for Return, the spawned function (nil if not visible)
	Spawn    *Spawn // for Return: the spawn whose function returns

	deferStmt *ast.DeferStmt // the defer statement that makes a Deferred call
}

// Contributes reports whether the signal counts a child as finished: Done,
// Return, or Add with a negative constant delta.
func (s *Signal) Contributes() bool {
	return s.Kind != Add || (s.DeltaKnown && s.Delta < 0)
}

// A WaitKind says which idiom a wait uses.
type WaitKind int

const (
	WaitGroupWait  WaitKind = iota + 1 // (*sync.WaitGroup).Wait
	ErrgroupWait                       // (*errgroup.Group).Wait
	ParlibSync                         // (*parlib.Group).Sync
	ParlibTaskWait                     // (*parlib.Task).Wait
	ParlibImplicit                     // the wait inside parlib.Do, For, ForRange, ForEach
)

var waitKindNames = [...]string{"", "WaitGroup.Wait", "errgroup.Wait", "parlib.Group.Sync", "parlib.Task.Wait", "parlib implicit"}

func (k WaitKind) String() string { return enumName(waitKindNames[:], int(k)) }

// A Wait is a join point.
type Wait struct {
	Kind WaitKind
	Node *ast.CallExpr
	Pos  token.Pos
	Recv ast.Expr // the receiver expression; nil for ParlibImplicit
	Join *JoinObject
	Func *Func
	// Spawns are the spawns of a ParlibImplicit wait's own call.
	Spawns []*Spawn
}

// A Limit is a call of (*errgroup.Group).SetLimit: at most N of the
// group's children run at once, and its Go blocks until one returns.
type Limit struct {
	Node *ast.CallExpr
	Pos  token.Pos
	Recv ast.Expr // the receiver expression
	Join *JoinObject
	Func *Func
	// N is the limit where it is a constant; NKnown says so.
	N      int64
	NKnown bool
}

// A Call is a static call of a function declared in the package.
type Call struct {
	Node     *ast.CallExpr
	Callee   *Func
	Func     *Func // the caller
	Deferred bool  // the call of a defer statement

	bind map[types.Object]ref
	res  *Result
}

// Map translates a join object named inside Callee into the caller's terms,
// as [Spawn.Map] does for a spawn.
func (c *Call) Map(j *JoinObject) *JoinObject {
	if j == nil {
		return nil
	}
	r, ok := c.res.rebase(j.ref, c.bind, c.Callee)
	if !ok {
		return j
	}
	return c.res.lookup(r, j.Kind, j.Expr, j.Type)
}

// Inlined returns the function literals in f's own code that run on f's
// goroutine before f returns: those it defers and those it calls where they
// appear, and theirs in turn.
func (f *Func) Inlined() []*Func { return inlineLits(f) }

// An ObjectKind says what type of join object a JoinObject is.
type ObjectKind int

const (
	WaitGroup   ObjectKind = iota + 1 // sync.WaitGroup
	Errgroup                          // errgroup.Group
	ParlibGroup                       // parlib.Group
	ParlibTask                        // parlib.Task
	ParlibCall                        // the implicit group of one parlib.Do/For/ForRange/ForEach call
)

var objectKindNames = [...]string{"", "sync.WaitGroup", "errgroup.Group", "parlib.Group", "parlib.Task", "parlib call"}

func (k ObjectKind) String() string { return enumName(objectKindNames[:], int(k)) }

// A JoinObject is a WaitGroup, errgroup.Group or parlib join object, named
// by an access path (see the package documentation).
type JoinObject struct {
	// Key identifies the object within the package: "wg@a.go:12:6" for a
	// local variable or parameter (its name and where it is declared),
	// "example.com/m/p.wg" for a package-level variable, each followed by
	// ".field" selections and "[]" for index expressions; "call@a.go:7:9"
	// for the result of a call (the group of a parlib.Do or For call, or a
	// parlib.Spawn whose Task is not stored in a variable), "?@a.go:3:4"
	// for an expression the analyzer cannot name.
	Key  string
	Kind ObjectKind
	// Root is the variable the access path starts from; nil for a call
	// result or an unnamed expression.
	Root types.Object
	// Path lists the selections from Root: field names, "[]" for an index.
	Path []string
	// Exact reports whether two uses with this Key always denote the same
	// object at run time.
	Exact bool
	// Expr is the first expression, in source order, that denoted it.
	Expr ast.Expr
	// Type is the object's type with pointers removed.
	Type types.Type

	ref ref
}

// Name returns the object as the source would write it: "wg", "s.wg",
// "wgs[]".
func (j *JoinObject) Name() string {
	if j.Root == nil {
		if call, ok := j.Expr.(*ast.CallExpr); ok {
			return types.ExprString(call.Fun) + "(...)"
		}
		if j.Expr != nil {
			return types.ExprString(j.Expr)
		}
		return j.Key
	}
	var b strings.Builder
	b.WriteString(j.Root.Name())
	for _, p := range j.Path {
		if p != "[]" {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func (j *JoinObject) String() string { return j.Key }

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return "invalid"
}
