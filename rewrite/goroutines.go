package rewrite

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// goroutineAPIs are functions of other packages known to run a function
// argument on a goroutine of their own.
var goroutineAPIs = map[string]bool{
	"(*testing.B).RunParallel": true,
	"time.AfterFunc":           true,
	"runtime.SetFinalizer":     true,
}

// unprofiled returns the functions of the package that run on goroutines
// the runtime does not know, each with why: those passed to goroutineAPIs
// at their calls (a function literal, or a function of the package named
// there), with the literals they declare. Their spawns are not profiled:
// they would run on those goroutines. What they call is instrumented as
// usual: the taint is per call, not package-wide, because the same code is
// called from profiled goroutines too (a benchmark's b.RunParallel body
// calling NewCache, which the package's tests call directly), and the
// runtime takes no event from a goroutine that does not hold it (it counts
// them for the profile's NotProfiled instead).
func unprofiled(ur *unitRewriter) map[*forkjoin.Func]string {
	res := ur.res
	out := make(map[*forkjoin.Func]string)
	byObj := make(map[*types.Func]*forkjoin.Func)
	children := make(map[*forkjoin.Func][]*forkjoin.Func)
	for _, f := range res.Funcs {
		if f.Obj != nil {
			byObj[f.Obj] = f
		}
		if f.Outer != nil {
			children[f.Outer] = append(children[f.Outer], f)
		}
	}
	var taint func(f *forkjoin.Func, why string)
	taint = func(f *forkjoin.Func, why string) {
		if f == nil {
			return
		}
		if _, ok := out[f]; ok {
			return
		}
		out[f] = why
		for _, c := range children[f] {
			taint(c, why)
		}
	}
	for _, file := range ur.u.pkg.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := typeutil.Callee(ur.info, call).(*types.Func)
			if !ok || !goroutineAPIs[fn.Origin().FullName()] {
				return true
			}
			why := fmt.Sprintf("%s at %s runs the function it is in on goroutines the profiler does not follow", fn.Name(), ur.line(call.Pos()))
			for _, a := range call.Args {
				switch x := ast.Unparen(a).(type) {
				case *ast.FuncLit:
					taint(res.Func(x), why)
				case *ast.Ident, *ast.SelectorExpr:
					if fn, ok := typeutil.Callee(ur.info, &ast.CallExpr{Fun: x}).(*types.Func); ok {
						taint(byObj[fn.Origin()], why)
					}
				}
			}
			return true
		})
	}
	return out
}

// waitsOutside returns why running f inline could wait for its
// continuation through code of another package that the analysis does not
// look into, or "": f, or what it calls or declares in the package, calls a
// method of another package's type that takes a context.Context, such as
// semaphore.(*Weighted).Acquire, which waits until a release or a
// cancellation that may come from the continuation. forkjoin assumes such
// calls return; see the notes in the package documentation.
func (ur *unitRewriter) waitsOutside(f *forkjoin.Func) string {
	if ur.waits == nil {
		ur.waits = make(map[*forkjoin.Func]string)
		ur.children = make(map[*forkjoin.Func][]*forkjoin.Func)
		for _, g := range ur.res.Funcs {
			if g.Outer != nil {
				ur.children[g.Outer] = append(ur.children[g.Outer], g)
			}
		}
	}
	if why, ok := ur.waits[f]; ok {
		return why
	}
	ur.waits[f] = "" // cycles: assume not, until found
	why := ""
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			fn, ok := typeutil.Callee(ur.info, n).(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg() == ur.u.pkg.Types || fn.Pkg().Path() == "context" {
				return true
			}
			sig := fn.Signature()
			if sig.Recv() == nil {
				return true
			}
			for p := range sig.Params().Variables() {
				if isContext(p.Type()) {
					why = fmt.Sprintf("calls %s, which takes a context and may wait for the continuation, at %s", ur.calleeName(n.Fun), ur.line(n.Pos()))
					return false
				}
			}
		}
		return true
	})
	for _, c := range f.Calls {
		if why == "" && c.Callee != nil {
			if w := ur.waitsOutside(c.Callee); w != "" {
				why = fmt.Sprintf("calls %s, which %s", c.Callee.Name[strings.LastIndex(c.Callee.Name, "/")+1:], w)
			}
		}
	}
	for _, g := range ur.children[f] {
		if why == "" {
			why = ur.waitsOutside(g)
		}
	}
	ur.waits[f] = why
	return why
}

func isContext(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}
