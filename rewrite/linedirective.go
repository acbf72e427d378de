package rewrite

import (
	"go/ast"
	"go/token"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"

	"github.com/spanprof/spanprof/rewrite/internal/linedir"
)

// outputComment reports whether decorations hold an example's output
// comment ("// Output:" or "// Unordered output:").
func outputComment(decs dst.Decorations) bool {
	for _, c := range decs {
		if linedir.IsOutputComment(c) {
			return true
		}
	}
	return false
}

// lineDirectives puts //line directives into printed, the printed form of
// restored, which r restored from the file that dec decorated (see package
// linedir). It returns the result and the number of lines whose original
// lines disagree.
func lineDirectives(fset *token.FileSet, fr *fileRewriter, dec *decorator.Decorator, r *decorator.Restorer, restored *ast.File, printed []byte) ([]byte, int, error) {
	orig := make(map[ast.Node]ast.Node, len(r.Ast.Nodes))
	for dn, rn := range r.Ast.Nodes {
		if on := dec.Ast.Nodes[dn]; on != nil {
			orig[rn] = on
		}
	}
	return linedir.Insert(linedir.File{Fset: fset, Orig: fr.ast, Name: fr.name, LineName: fr.lineName, Restored: restored, Original: orig}, printed)
}
