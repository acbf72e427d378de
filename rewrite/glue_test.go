package rewrite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestGlue checks the rewrite of testdata/glue (whose golden file
// TestGolden keeps equal to the rewrite, and TestGoldenRun runs): every
// function named glued... has a glued call end or a last Done, and every
// function named kept... (a near miss: code between the call and the wait,
// an assignment that may panic, a wait on an operand that calls, a Done
// not deferred first, a child whose end signals a group) has neither.
func TestGlue(t *testing.T) {
	src, err := os.ReadFile("testdata/glue/main.go.golden")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go.golden", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	glued, kept := 0, 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		body := string(src[fset.Position(fd.Body.Pos()).Offset:fset.Position(fd.Body.End()).Offset])
		has := strings.Contains(body, rtLeaveGlue+"(") || strings.Contains(body, rtCallEndGlue+"(") || strings.Contains(body, rtWaitGroupDoneLast+"(")
		name := fd.Name.Name
		switch {
		case strings.HasPrefix(name, "glued"):
			glued++
			if !has {
				t.Errorf("%s: nothing glued:\n%s", name, body)
			}
		case strings.HasPrefix(name, "kept"):
			kept++
			if has {
				t.Errorf("%s: glued:\n%s", name, body)
			}
		}
	}
	if glued < 5 || kept < 6 {
		t.Errorf("%d glued and %d kept functions, want 5 and 6", glued, kept)
	}
}
