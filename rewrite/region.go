package rewrite

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// RegionPath is the import path of the region API (package region), whose
// calls the rewriter turns into the runtime's regions.
const RegionPath = SpanprofModule + "/region"

// planRegions instruments the region API in the package's functions
// (region/region.go, shadow/emit_region.go): each region.Begin and
// region.Do is a site of kind region whose Func is the region's name (its
// constant value, else the expression as written), in the function that
// names it:
//
//	region.Begin(name)   EnterAfter(region.Begin(name), S)
//	r.End()              RegionEnd(r)
//	region.Do(name, f)   RegionDo(S, region.Do, name, f)
//
// in any position, a deferred End included: the region ends when the
// function does. A call in code that runs on goroutines serial mode does
// not follow is left alone, as its calls are; so is a go statement's own
// call, which is a spawn, and an End reached through embedded fields.
func (pl *planner) planRegions() {
	for _, f := range pl.res.Funcs {
		fr := pl.fileOf(f.Node.Pos())
		if f.Body == nil || fr == nil {
			continue
		}
		spawned := make(map[*ast.CallExpr]bool)
		ast.Inspect(f.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // a Func of its own
			case *ast.GoStmt:
				spawned[n.Call] = true
			case *ast.CallExpr:
				if !spawned[n] {
					pl.planRegion(f, fr, n)
				}
			}
			return true
		})
	}
}

// planRegion instruments call if it is one of the region API's.
func (pl *planner) planRegion(f *forkjoin.Func, fr *fileRewriter, call *ast.CallExpr) {
	what, direct := pl.regionCall(call)
	if what == "" {
		return
	}
	if why := pl.unprofiled(f); why != "" || !direct {
		pl.skipRegion()
		return
	}
	switch what {
	case "End":
		pl.edits[call] = helperCall{helper: rt(rtRegionEnd), recv: &receiverPath{}}
		return
	}
	if _, taken := pl.enterAfter[call]; taken && what == "Begin" {
		// The last event of another call's operands begins that call.
		pl.skipRegion()
		return
	}
	pl.stats.Regions++
	site := pl.addSite(fr, call.Pos(), pl.regionName(call.Args[0]), f.Name, "region")
	if what == "Begin" {
		pl.enterAfter[call] = site
		return
	}
	pl.edits[call] = helperCall{helper: rt(rtRegionDo), site: site, fun: true}
}

// skipRegionWhy is why a call of the region API is not instrumented.
const skipRegionWhy = "a region call where none can be profiled"

// skipRegion counts a call of the region API not instrumented.
func (pl *planner) skipRegion() {
	if pl.stats.CallsSkipped == nil {
		pl.stats.CallsSkipped = make(map[string]int)
	}
	pl.stats.CallsSkipped[skipRegionWhy]++
}

// regionCall says which of the region API's functions call calls, "Begin",
// "Do" or "End", or "", and whether it names it directly (not End through
// an embedded field, not a method expression).
func (pl *planner) regionCall(call *ast.CallExpr) (string, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	fn, ok := pl.info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != RegionPath {
		return "", false
	}
	recv := fn.Type().(*types.Signature).Recv() != nil
	switch {
	case !recv && (fn.Name() == "Begin" || fn.Name() == "Do") && len(call.Args) > 0:
		return fn.Name(), true
	case recv && fn.Name() == "End":
		s := pl.info.Selections[sel]
		return "End", s != nil && s.Kind() == types.MethodVal && len(s.Index()) == 1
	}
	return "", false
}

// regionName is a region's name: the constant value of its name argument,
// or the expression as written.
func (pl *planner) regionName(arg ast.Expr) string {
	if tv, ok := pl.info.Types[arg]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value)
	}
	return fmt.Sprint(types.ExprString(arg))
}
