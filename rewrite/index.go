package rewrite

import (
	"go/ast"
	"go/token"
)

// index records every node's parent.
func (ur *unitRewriter) index() {
	for _, file := range ur.u.pkg.Syntax {
		ast.PreorderStack(file, nil, func(n ast.Node, stack []ast.Node) bool {
			if len(stack) > 0 {
				ur.parent[n] = stack[len(stack)-1]
			}
			return true
		})
	}
}

// up returns the parent of n, skipping parentheses.
func (ur *unitRewriter) up(n ast.Node) ast.Node {
	p := ur.parent[n]
	for {
		if _, ok := p.(*ast.ParenExpr); !ok {
			return p
		}
		p = ur.parent[p]
	}
}

// inList reports whether statement s is an element of a statement list,
// where statements can be inserted before and after it.
func (ur *unitRewriter) inList(s ast.Stmt) bool {
	switch ur.parent[s].(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
		return true
	}
	return false
}

// fileOf returns the rewriter of the file containing p, or nil when that
// file is not rewritten.
func (ur *unitRewriter) fileOf(p token.Pos) *fileRewriter {
	for _, fr := range ur.files {
		if fr.ast.FileStart <= p && p < fr.ast.FileEnd {
			return fr
		}
	}
	return nil
}
