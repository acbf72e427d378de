package forkjoin

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// serial computes Func.Serial for every declared function of the package,
// as the greatest fixpoint: every function starts serial, and one that
// forks, joins, makes an unknown call or calls a function that is not
// serial is struck off until nothing changes. module is the path of the
// module being analyzed, or "" when the driver does not say.
func (c *collector) serial(module string) {
	// A literal's fork or join makes the declaration it appears in fork
	// or join.
	forks := make(map[*Func]bool)
	for _, f := range c.res.Funcs {
		if len(f.Spawns)+len(f.Signals)+len(f.Waits) == 0 {
			continue
		}
		for g := f; g != nil; g = g.Outer {
			forks[g] = true
		}
	}
	type node struct {
		callees []*Func
		unknown bool
	}
	var order []*Func
	nodes := make(map[*Func]*node)
	for _, f := range c.res.Funcs {
		if f.Obj == nil || f.Body == nil {
			continue // literals count in the declaration that holds them
		}
		n := &node{unknown: forks[f]}
		nodes[f] = n
		order = append(order, f)
		ast.Inspect(f.Body, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok || n.unknown {
				return !n.unknown
			}
			callee, known := c.staticCallee(call, module)
			switch {
			case !known:
				n.unknown = true
			case callee != nil:
				n.callees = append(n.callees, callee)
			}
			return true
		})
	}
	for _, f := range order {
		f.Serial = !nodes[f].unknown
	}
	for changed := true; changed; {
		changed = false
		for _, f := range order {
			if !f.Serial {
				continue
			}
			for _, g := range nodes[f].callees {
				if !g.Serial {
					f.Serial = false
					changed = true
					break
				}
			}
		}
	}
}

// staticCallee classifies a call for serial: known reports whether the call
// is known not to fork or join by itself, and callee is the function of
// this package it calls, whose own body then decides.
func (c *collector) staticCallee(call *ast.CallExpr, module string) (callee *Func, known bool) {
	fun := ast.Unparen(call.Fun)
	if tv, ok := c.info.Types[fun]; ok && tv.IsType() {
		return nil, true // a conversion
	}
	if _, ok := fun.(*ast.FuncLit); ok {
		return nil, true // its body is inspected as part of the caller's
	}
	switch fn := typeutil.Callee(c.info, call).(type) {
	case *types.Builtin:
		return nil, true
	case *types.Func:
		fn = fn.Origin()
		if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
			return nil, false // an interface method: any implementation
		}
		pkg := fn.Pkg()
		if pkg == nil {
			return nil, false
		}
		if pkg == c.pkg {
			if f := c.res.FuncOf(fn); f != nil {
				return f, true
			}
			return nil, true // no body here (assembly)
		}
		if module != "" && (pkg.Path() == module || strings.HasPrefix(pkg.Path(), module+"/")) {
			return nil, false // another package of the program's own module, which may fork like this one
		}
		for _, a := range call.Args {
			if _, ok := c.info.TypeOf(a).Underlying().(*types.Signature); ok {
				if _, lit := ast.Unparen(a).(*ast.FuncLit); !lit {
					return nil, false // a callback out of sight
				}
			}
		}
		return nil, true
	}
	return nil, false // a function value
}
