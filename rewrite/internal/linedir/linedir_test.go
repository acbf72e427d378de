package linedir

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// insert runs Insert on printed, the original with the given lines (of
// printed) inserted: nodes on them are the rewrite's own, and every other
// node of printed maps to the original node in the same place of the
// preorder.
func insert(t *testing.T, orig, printed string, inserted ...int) (string, int) {
	t.Helper()
	const name = "/src/p/p.go"
	fset := token.NewFileSet()
	of, err := parser.ParseFile(fset, name, orig, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	rfset := token.NewFileSet()
	rf, err := parser.ParseFile(rfset, name, printed, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	isInserted := func(n ast.Node) bool {
		l := rfset.Position(n.Pos()).Line
		for _, i := range inserted {
			if l == i {
				return true
			}
		}
		return false
	}
	var kept []ast.Node
	for _, n := range preorder(rf) {
		if !isInserted(n) {
			kept = append(kept, n)
		}
	}
	on := preorder(of)
	if len(on) != len(kept) {
		t.Fatalf("%d original nodes, %d printed ones not inserted", len(on), len(kept))
	}
	m := make(map[ast.Node]ast.Node)
	for i, n := range kept {
		m[n] = on[i]
	}
	out, conflicts, err := Insert(File{Fset: fset, Orig: of, Name: name, LineName: "p.go", Restored: rf, Original: m}, []byte(printed))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), conflicts
}

// checkLines checks that every identifier of orig, each named once there,
// has its original line in out, with out's //line directives applied.
func checkLines(t *testing.T, orig, out string) {
	t.Helper()
	lines := func(src string, adjusted bool) map[string]int {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "/src/p/p.go", src, parser.ParseComments)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		m := make(map[string]int)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				m[id.Name] = fset.PositionFor(id.Pos(), adjusted).Line
			}
			return true
		})
		return m
	}
	want, got := lines(orig, false), lines(out, true)
	for name, l := range want {
		if got[name] != l {
			t.Errorf("%s is on line %d, want %d, in\n%s", name, got[name], l, out)
		}
	}
}

func TestInsertInBody(t *testing.T) {
	orig := `package p

func f() {
	a()
	b()
}

func a() {}

func b() {}
`
	printed := `package p

func f() {
	a()
	x()
	b()
}

func a() {}

func b() {}
`
	out, conflicts := insert(t, orig, printed, 5)
	if conflicts != 0 {
		t.Errorf("%d conflicts", conflicts)
	}
	if !strings.Contains(out, "//line p.go:5:1\n") {
		t.Errorf("no directive for line 5 in\n%s", out)
	}
	checkLines(t, orig, out)
}

func TestInsertAtTopLevel(t *testing.T) {
	// A directive that touches a doc comment joins it: it goes above the
	// comment, between blank lines.
	orig := `package p

var v = 1

// f does nothing.
func f() {}
`
	printed := `package p

var v = 1

var w = 2

// f does nothing.
func f() {}
`
	out, _ := insert(t, orig, printed, 5)
	if !strings.Contains(out, "\n\n//line p.go:4:1\n\n// f does nothing.") {
		t.Errorf("the directive is not above the doc comment, between blank lines:\n%s", out)
	}
	checkLines(t, orig, out)
}

func TestUnchanged(t *testing.T) {
	src := `package p

func f() {
	a()
}

func a() {}
`
	out, _ := insert(t, src, src)
	if out != src {
		t.Errorf("directives added to an unchanged file:\n%s", out)
	}
}

func TestIsDirective(t *testing.T) {
	for c, want := range map[string]bool{
		"//line a.go:1":      true,
		"//go:noinline":      true,
		"//export f":         true,
		"//extern f":         true,
		"//go:build linux":   true,
		"// go:noinline":     false,
		"// comment":         false,
		"//Go:x":             false,
		"//nolint:errcheck":  true,
		"/*line a.go:1*/":    false,
		"//lint:ignore a b":  true,
		"//:x":               false,
		"//x:":               false,
		"//line":             false,
		"//NOTE: not a word": false,
	} {
		if got := IsDirective(c); got != want {
			t.Errorf("IsDirective(%q) = %v, want %v", c, got, want)
		}
	}
}

func TestIsOutputComment(t *testing.T) {
	for c, want := range map[string]bool{
		"// Output:":               true,
		"// Output: 42":            true,
		"//output:":                true,
		"// Unordered output:":     true,
		"// The output: is wrong":  false,
		"// Outputs are discarded": false,
	} {
		if got := IsOutputComment(c); got != want {
			t.Errorf("IsOutputComment(%q) = %v, want %v", c, got, want)
		}
	}
}
