package rewrite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

// TestInlineDecisionsFromReplayedOutput: the go command replays a cached
// compilation's -m output with paths relative to the directory that first
// compiled the package, which need not be the directory spanprof runs in.
// The compiler's decisions must be found either way.
func TestInlineDecisionsFromReplayedOutput(t *testing.T) {
	fset := token.NewFileSet()
	const src = "package main\n\nfunc mix(x uint64) uint64 { return x * 3 }\n\nfunc big() {}\n"
	f, err := parser.ParseFile(fset, "/src/m/examples/matmul/main.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	fn := func(name string) *forkjoin.Func {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Name.Name == name {
				return &forkjoin.Func{Node: d}
			}
		}
		t.Fatalf("no func %s", name)
		return nil
	}
	for _, out := range []string{
		"# example.com/m/examples/matmul\nexamples/matmul/main.go:3:6: can inline mix\n",
		"# example.com/m/examples/matmul\nmatmul/main.go:3:6: can inline mix\n",
		"# example.com/m/examples/matmul\n../matmul/main.go:3:6: can inline mix\n",
		"# example.com/m/examples/matmul\n/src/m/examples/matmul/main.go:3:6: can inline mix\n",
	} {
		p := &Program{cfg: Config{Dir: "/src/m"}, inline: map[funcPos][]string{}}
		p.parseInline([]byte(out))
		if !p.inlinable(fset, fn("mix")) {
			t.Errorf("mix not found inlinable in %q", out)
		}
		if p.inlinable(fset, fn("big")) {
			t.Errorf("big found inlinable in %q", out)
		}
	}
	p := &Program{cfg: Config{Dir: "/src/m"}, inline: map[funcPos][]string{}}
	p.parseInline([]byte("other/main.go:3:6: can inline mix\n"))
	if p.inlinable(fset, fn("mix")) {
		t.Error("a decision about other/main.go was taken for examples/matmul/main.go")
	}
}
