package waitcycle

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"

	"golang.org/x/tools/go/analysis"

	"github.com/spanprof/spanprof/analysis/forkjoin"
	"github.com/spanprof/spanprof/analysis/internal/analyzerdoc"
)

//go:embed doc.go
var doc string

var Analyzer = &analysis.Analyzer{
	Name:     "waitcycle",
	Doc:      analyzerdoc.MustExtract(doc, "waitcycle"),
	URL:      "https://pkg.go.dev/github.com/spanprof/spanprof/analysis/waitcycle",
	Requires: []*analysis.Analyzer{forkjoin.Analyzer},
	Run:      run,
}

// maxDepth bounds how many calls deep the analyzer follows a spawned
// function's callees.
const maxDepth = 3

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[forkjoin.Analyzer].(*forkjoin.Result)
	reported := make(map[token.Pos]bool)
	for _, s := range res.Spawns {
		if s.Join == nil || !s.Join.Exact || s.Callee == nil {
			continue
		}
		if s.Contrib != forkjoin.AtReturn && s.Contrib != forkjoin.DeferredDone {
			continue
		}
		// The implicit group of a parlib.Do or For call belongs to that
		// call; nothing else can wait on it.
		if s.Kind == forkjoin.ParlibDo || s.Kind == forkjoin.ParlibFor {
			continue
		}
		c := &cycle{pass: pass, spawn: s, reported: reported}
		c.search(s.Callee, s.Map, nil, 0)
	}
	return nil, nil
}

// A cycle searches one spawned function for waits on the spawn's join object.
type cycle struct {
	pass     *analysis.Pass
	spawn    *forkjoin.Spawn
	reported map[token.Pos]bool
}

// search looks for waits in f (and what it inlines), translating join
// objects to the spawner's terms with toSpawner; via is the call in the
// spawned function through which f was reached, nil for the function itself.
func (c *cycle) search(f *forkjoin.Func, toSpawner func(*forkjoin.JoinObject) *forkjoin.JoinObject, via *forkjoin.Call, depth int) {
	s := c.spawn
	for _, g := range append([]*forkjoin.Func{f}, f.Inlined()...) {
		for _, w := range g.Waits {
			if w.Kind == forkjoin.ParlibImplicit {
				continue
			}
			if j := toSpawner(w.Join); j == nil || j.Key != s.Join.Key {
				continue
			}
			pos, what := w.Pos, "waits on "+types.ExprString(w.Recv)
			if via != nil {
				pos = via.Node.Pos()
				what = fmt.Sprintf("calls %s, which waits on %s (at %s)", types.ExprString(via.Node.Fun), s.Join.Name(), shortLine(c.pass.Fset, w.Pos))
			}
			if c.reported[pos] {
				continue
			}
			c.reported[pos] = true
			c.pass.Report(analysis.Diagnostic{
				Pos: pos,
				End: endOf(w.Node, via),
				Message: fmt.Sprintf("%s spawned onto %s at %s %s: the Wait cannot return before %s itself returns (deadlock)",
					subject(s), s.Join.Name(), shortLine(c.pass.Fset, s.Pos), what, pronoun(s)),
			})
		}
		if depth >= maxDepth {
			continue
		}
		for _, call := range g.Calls {
			if call.Callee == f {
				continue // recursion: f's own waits are already being checked
			}
			if _, lit := ast.Unparen(call.Node.Fun).(*ast.FuncLit); lit {
				continue // a literal called in place: searched as inlined
			}
			next := via
			if next == nil {
				next = call
			}
			c.search(call.Callee, func(j *forkjoin.JoinObject) *forkjoin.JoinObject {
				return toSpawner(call.Map(j))
			}, next, depth+1)
		}
	}
}

func endOf(wait *ast.CallExpr, via *forkjoin.Call) token.Pos {
	if via != nil {
		return via.Node.End()
	}
	return wait.End()
}

// subject names the spawned function for a message.
func subject(s *forkjoin.Spawn) string {
	if s.Closure {
		return "function"
	}
	return types.ExprString(s.Fun)
}

func pronoun(s *forkjoin.Spawn) string {
	if s.Closure {
		return "the function"
	}
	return types.ExprString(s.Fun)
}

func shortLine(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}
