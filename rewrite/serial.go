package rewrite

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Serial recursion.
//
// A self-recursive call of a function that can neither fork nor join (a
// tree build, a serial sum) is not instrumented. Such a call runs entirely
// inside the invocation of the same function that called it, on one strand
// sequence: its work is its span, and both already count in full in the
// outermost invocation of the recursion, which stays instrumented. What is
// lost is only how the recursion's own local work divides among its
// recursive call sites, which recursion folding merges into one calling
// context anyway. What is saved is two events per call, in the programs
// whose recursion is finest: treesum makes 48 million of these calls, and
// instrumenting them made it 5x slower. Cilkprof (§7) skips inlinable
// callees for the same reason.
//
// Whether a call is instrumented changes which sites the profile shows,
// never the work or the span: these come from the strands and the fork and
// join events, which are all still there.

// serial reports whether f, with the literals in it, can neither fork nor
// join: no spawn, signal or wait of its own, and every call in it is of a
// builtin, a conversion, a function of this package that is serial in
// turn, or a function outside the program's module that is given no
// function value to call back. Calls of function values and interface
// methods may reach anything, so they make f not serial.
func (ur *unitRewriter) serial(f *forkjoin.Func) bool {
	if ur.serialFn == nil {
		ur.serialFn = ur.serialFuncs()
	}
	return ur.serialFn[f]
}

// serialFuncs computes serial for every declared function of the package,
// as the greatest fixpoint: every function starts serial, and one that
// forks, joins, makes an unknown call or calls a function that is not
// serial is struck off until nothing changes.
func (ur *unitRewriter) serialFuncs() map[*forkjoin.Func]bool {
	byObj := make(map[*types.Func]*forkjoin.Func)
	for _, f := range ur.res.Funcs {
		if f.Obj != nil {
			byObj[f.Obj] = f
		}
	}
	// A literal's fork or join makes the declaration it appears in fork
	// or join.
	forks := make(map[*forkjoin.Func]bool)
	for _, f := range ur.res.Funcs {
		if len(f.Spawns)+len(f.Signals)+len(f.Waits) == 0 {
			continue
		}
		for g := f; g != nil; g = g.Outer {
			forks[g] = true
		}
	}
	type node struct {
		callees []*forkjoin.Func
		unknown bool
	}
	nodes := make(map[*forkjoin.Func]*node)
	for _, f := range ur.res.Funcs {
		if f.Obj == nil || f.Body == nil {
			continue // literals count in the declaration that holds them
		}
		n := &node{unknown: forks[f]}
		nodes[f] = n
		ast.Inspect(f.Body, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok || n.unknown {
				return !n.unknown
			}
			callee, known := ur.staticCallee(call, byObj)
			switch {
			case !known:
				n.unknown = true
			case callee != nil:
				n.callees = append(n.callees, callee)
			}
			return true
		})
	}
	serial := make(map[*forkjoin.Func]bool, len(nodes))
	for f, n := range nodes {
		serial[f] = !n.unknown
	}
	for changed := true; changed; {
		changed = false
		for f, n := range nodes {
			if !serial[f] {
				continue
			}
			for _, c := range n.callees {
				if !serial[c] {
					serial[f] = false
					changed = true
					break
				}
			}
		}
	}
	return serial
}

// staticCallee classifies a call for serialFuncs: known reports whether the
// call is known not to fork or join by itself, and callee is the function of
// this package it calls, whose own body then decides.
func (ur *unitRewriter) staticCallee(call *ast.CallExpr, byObj map[*types.Func]*forkjoin.Func) (callee *forkjoin.Func, known bool) {
	fun := ast.Unparen(call.Fun)
	if tv, ok := ur.info.Types[fun]; ok && tv.IsType() {
		return nil, true // a conversion
	}
	if _, ok := fun.(*ast.FuncLit); ok {
		return nil, true // its body is inspected as part of the caller's
	}
	switch fn := typeutil.Callee(ur.info, call).(type) {
	case *types.Builtin:
		return nil, true
	case *types.Func:
		if fn.Origin() != nil {
			fn = fn.Origin()
		}
		if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
			return nil, false // an interface method: any implementation
		}
		pkg := fn.Pkg()
		if pkg == nil {
			return nil, false
		}
		if pkg == ur.u.pkg.Types {
			if f, ok := byObj[fn]; ok {
				return f, true
			}
			return nil, true // no body here (assembly)
		}
		if mod := ur.prog.Module.Path; mod != "" && (pkg.Path() == mod || strings.HasPrefix(pkg.Path(), mod+"/")) {
			return nil, false // instrumented too, and may fork
		}
		for _, a := range call.Args {
			if _, ok := ur.info.TypeOf(a).Underlying().(*types.Signature); ok {
				if _, lit := ast.Unparen(a).(*ast.FuncLit); !lit {
					return nil, false // a callback out of sight
				}
			}
		}
		return nil, true
	}
	return nil, false // a function value
}
