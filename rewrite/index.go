package rewrite

import (
	"go/ast"
	"go/token"
)

// An index is the syntax of a unit that the plan looks up: the files to
// rewrite and every node's syntactic parent.
type index struct {
	files  []*fileRewriter
	parent map[ast.Node]ast.Node
}

// newIndex indexes the package's syntax; files are those to rewrite.
func newIndex(pkg *Package, files []*fileRewriter) *index {
	x := &index{files: files, parent: make(map[ast.Node]ast.Node)}
	for _, file := range pkg.Syntax {
		ast.PreorderStack(file, nil, func(n ast.Node, stack []ast.Node) bool {
			if len(stack) > 0 {
				x.parent[n] = stack[len(stack)-1]
			}
			return true
		})
	}
	return x
}

// up returns the parent of n, skipping parentheses.
func (x *index) up(n ast.Node) ast.Node {
	p := x.parent[n]
	for {
		if _, ok := p.(*ast.ParenExpr); !ok {
			return p
		}
		p = x.parent[p]
	}
}

// inList reports whether statement s is an element of a statement list,
// where statements can be inserted before and after it.
func (x *index) inList(s ast.Stmt) bool {
	switch x.parent[s].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
		return true
	}
	return false
}

// fileOf returns the file containing p, or nil when that file is not
// rewritten.
func (x *index) fileOf(p token.Pos) *fileRewriter {
	for _, fr := range x.files {
		if fr.ast.FileStart <= p && p < fr.ast.FileEnd {
			return fr
		}
	}
	return nil
}
