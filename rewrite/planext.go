package rewrite

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// Calls into other packages.
//
// A call of a function of another package (slices.Sort in a quicksort's
// base case, json.Unmarshal in a worker, a map-reduce's reduce in a
// library) is instrumented as a site of its own, kind call, named by the
// callee ("slices.Sort", "(*encoding/json.Decoder).Decode"), so that the
// time it takes is named rather than charged to the line that calls it.
// Its events cost about as much as any instrumented call's, so the rule
// instruments only calls that run about as often as events already do:
//
//   - the caller is fork/join code, which makes events at every
//     invocation: it spawns or waits, or it is spawned (set-up code that
//     a program's main calls, flag parsing, errors.New on an error path,
//     stays as it is: its calls would be rows of no share);
//   - the call is in no for or range loop of the caller's own body (a
//     1M-iteration loop calling math.Abs stays as it is: the loop's time
//     is its caller's local time, on the loop's own line), and not in a
//     function literal, which a parlib loop may call once per index;
//   - some operand (an argument, or a method's receiver) is data of
//     unbounded size or reach (a string, slice, map, channel, function,
//     pointer or interface): a call of numbers and booleans alone does
//     work bounded by a constant (math.Sqrt, bits.OnesCount32, which the
//     compiler inlines or makes one instruction), and is never
//     instrumented;
//   - the callee is a static function or method: not a function value or
//     an interface method, whose code is not known, and not of the
//     packages whose calls are the fork/join idioms or the runtime's
//     (sync, sync/atomic, errgroup, parlib, region, runtime, unsafe) or output,
//     set-up and errors (fmt, log, os, io, bufio, flag, errors, time);
//   - the call is not deferred, not a go statement's, and sits where an
//     instrumented call can go (planCall's forms).
//
// So each such call adds at most one pair of events per invocation of a
// function that has some already, whichever inlining the compiler does
// (it inlines slices.Sort, whose sort it does not).

// excludedPkgs are the packages whose calls are never instrumented as
// calls into another package: the idioms' and the runtime's, and those of
// output, set-up and errors (fmt, log, os, io, bufio, flag, errors, time),
// which a fork/join program's main calls around its work: their rows would
// have no share in almost every profile, and what time they take is I/O or
// waiting that no change to the fork/join structure helps.
var excludedPkgs = map[string]bool{
	"sync": true, "sync/atomic": true, "runtime": true, "unsafe": true,
	"golang.org/x/sync/errgroup": true, forkjoin.ParlibPath: true, shadowPath: true, RegionPath: true,
	"fmt": true, "log": true, "os": true, "io": true, "bufio": true, "flag": true, "errors": true, "time": true,
}

// externalCalls returns the calls into other packages that the rule above
// instruments, as Calls whose Callee has only a Name.
func (pl *planner) externalCalls() []*forkjoin.Call {
	eventful := make(map[*forkjoin.Func]bool)
	for _, s := range pl.res.Spawns {
		if s.Callee != nil {
			eventful[s.Callee] = true
		}
	}
	var out []*forkjoin.Call
	for _, f := range pl.res.Funcs {
		if f.StartedBy != nil || f.Body == nil || pl.fileOf(f.Body.Pos()) == nil {
			continue
		}
		if !eventful[f] && len(f.Spawns) == 0 && len(f.Waits) == 0 {
			continue
		}
		ast.PreorderStack(f.Body, nil, func(n ast.Node, stack []ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt, *ast.GoStmt, *ast.DeferStmt:
				return false
			case *ast.CallExpr:
				if name := pl.externalCallee(n); name != "" && pl.edits[n] == nil {
					out = append(out, &forkjoin.Call{Node: n, Callee: &forkjoin.Func{Name: name}, Func: f})
				}
			}
			return true
		})
	}
	return out
}

// externalCallee returns the name of the function of another package that
// call statically calls, or "" if it calls none that the rule admits.
func (pl *planner) externalCallee(call *ast.CallExpr) string {
	fn := typeutil.StaticCallee(pl.info, call)
	if fn == nil || fn.Pkg() == nil || fn.Pkg() == pl.u.pkg.Types || excludedPkgs[fn.Pkg().Path()] {
		return ""
	}
	if fn.Pkg().Path() == pl.u.pkg.PkgPath {
		return "" // the package's own functions, seen through its test package
	}
	operands := call.Args
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && pl.info.Selections[sel] != nil {
		operands = append([]ast.Expr{sel.X}, operands...)
	}
	scalar := true
	for _, a := range operands {
		if t := pl.info.TypeOf(a); t == nil || !isScalar(t) {
			scalar = false
		}
	}
	if scalar {
		return ""
	}
	return fn.Origin().FullName()
}

// planExternal instruments a call into another package, as planCall does
// a call of the package's own (without its reasons to skip, which are
// about the package's own callees).
func (pl *planner) planExternal(c *forkjoin.Call) {
	n := 1
	if tup, ok := pl.info.TypeOf(c.Node).(*types.Tuple); ok {
		n = tup.Len()
	}
	after, why := pl.enterPoint(c.Node)
	if n == 1 {
		pl.planValueCall(c, after, why)
		return
	}
	if p, ok := pl.up(c.Node).(*ast.ExprStmt); ok {
		pl.planStmtCall(c, p, after, why)
		return
	}
	pl.planMultiCall(c, n, after, why)
}

// isScalar reports whether t is a number or a boolean, or a struct or
// array of them: a value whose processing is bounded by its type.
func isScalar(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsNumeric|types.IsBoolean) != 0
	case *types.Array:
		return isScalar(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if !isScalar(u.Field(i).Type()) {
				return false
			}
		}
		return true
	}
	return false
}
