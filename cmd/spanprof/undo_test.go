package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// undoPkg is a package to rewrite: a constant on a line the rewrite keeps,
// and instrumented calls.
const undoPkg = `package fj

import "sync"

const N = 10

func fib(k int) int {
	if k < 2 {
		return k
	}
	return fib(k-1) + fib(k-2)
}

func Par() int {
	var wg sync.WaitGroup
	var a, b int
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = fib(N)
	}()
	b = fib(N - 1)
	wg.Wait()
	return a + b
}
`

// TestRewriteUndoKeepsEdits is the data loss of issue 12: rewrite -w, edit
// a rewritten file, rewrite -undo. An edit apart from the rewrite's lines
// is carried over to the original; one of a line the rewrite changed
// leaves the file as it is, with a line naming it and status 1; and a tree
// reverted without -undo (git checkout), edited and rewritten again gives
// back the edit, not the stale backup.
func TestRewriteUndoKeepsEdits(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"fj/fj.go": undoPkg})
	env := []string{"GOPROXY=off", "GOFLAGS=", "GOWORK=off"}
	fj := filepath.Join(dir, "fj", "fj.go")
	before := treeHashes(t, dir)
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	origFiles := map[string]string{"go.mod": read(filepath.Join(dir, "go.mod")), "go.sum": read(filepath.Join(dir, "go.sum"))}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewriteW := func() {
		t.Helper()
		if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./..."); code != exitOK {
			t.Fatalf("rewrite -w: status %d\n%s", code, stderr)
		}
	}

	// An edit apart from the rewrite's lines is carried over.
	rewriteW()
	write(fj, strings.Replace(read(fj), "const N = 10", "const N = 12", 1))
	code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo")
	if want := "spanprof: restored 3 files (1 with your changes carried over)\n"; code != exitOK || stderr != want {
		t.Errorf("rewrite -undo after an edit: status %d, stderr\n%swant status 0 and\n%s", code, stderr, want)
	}
	if got, want := read(fj), strings.Replace(undoPkg, "const N = 10", "const N = 12", 1); got != want {
		t.Errorf("fj.go after -undo:\n%s\nwant the original with the edit:\n%s", got, want)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) != 1 || d[0] != filepath.Join("fj", "fj.go") {
		t.Errorf("after -undo these differ from the original: %v; want only fj/fj.go", d)
	}
	write(fj, undoPkg)

	// An edit of a line the rewrite changed is not.
	rewriteW()
	edited := strings.Replace(read(fj), "fib(N-1))", "fib(N-2))", 1)
	if edited == read(fj) {
		t.Fatalf("no instrumented fib(N-1) in\n%s", edited)
	}
	write(fj, edited)
	rewritten := treeHashes(t, dir)
	code, _, stderr = spanprofIn(t, dir, env, "rewrite", "-undo")
	if lines := strings.Split(stderr, "\n"); code != exitFailed || lines[0] != "spanprof: fj/fj.go: changed since spanprof rewrite -w; left as it is" {
		t.Errorf("rewrite -undo after an edit of an instrumented line: status %d, stderr\n%swant status 1, and first a line naming fj/fj.go", code, stderr)
	}
	if d := diffTrees(rewritten, treeHashes(t, dir)); len(d) != 0 {
		t.Errorf("a refused -undo changed %v", d)
	}
	// With the edit undone by hand, -undo restores everything.
	write(fj, strings.Replace(edited, "fib(N-2))", "fib(N-1))", 1))
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo"); code != exitOK || stderr != "spanprof: restored 3 files\n" {
		t.Errorf("rewrite -undo: status %d, stderr\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) != 0 {
		t.Errorf("after -undo these differ from the original: %v", d)
	}

	// Reverted without -undo, as git checkout and git clean do with
	// .spanprof/ ignored, then edited and rewritten again: -undo gives
	// back the edit, not the stale backup.
	revert := func(clean bool) string {
		t.Helper()
		for _, name := range []string{"go.mod", "go.sum"} {
			write(filepath.Join(dir, name), origFiles[name])
		}
		edited := strings.Replace(undoPkg, "const N = 10", "const N = 13", 1)
		write(fj, edited)
		if clean {
			gen, _ := filepath.Glob(filepath.Join(dir, "fj", "zz_spanprof*.go"))
			for _, name := range gen {
				if err := os.Remove(name); err != nil {
					t.Fatal(err)
				}
			}
		}
		return edited
	}
	rewriteW()
	edited = revert(true)
	rewriteW()
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo"); code != exitOK {
		t.Errorf("rewrite -undo: status %d, stderr\n%s", code, stderr)
	}
	if got := read(fj); got != edited {
		t.Errorf("fj.go after a revert, an edit, rewrite -w and -undo:\n%s\nwant the edit:\n%s", got, edited)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) != 1 || d[0] != filepath.Join("fj", "fj.go") {
		t.Errorf("after -undo these differ from the original: %v; want only fj/fj.go", d)
	}
	write(fj, undoPkg)

	// Reverted as git checkout alone does, which leaves the generated
	// files, then edited: -undo removes those and keeps the edit.
	rewriteW()
	edited = revert(false)
	// The generated files and go.work are still there: rewrite -w must
	// not touch the edit, whatever it makes of the package.
	spanprofIn(t, dir, env, "rewrite", "-w", "./...")
	if got := read(fj); got != edited {
		t.Errorf("rewrite -w of a half-reverted tree changed the edited fj.go:\n%s", got)
	}
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo"); code != exitOK {
		t.Errorf("rewrite -undo: status %d, stderr\n%s", code, stderr)
	}
	if got := read(fj); got != edited {
		t.Errorf("fj.go after a revert, an edit and -undo:\n%s\nwant the edit:\n%s", got, edited)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) != 1 || d[0] != filepath.Join("fj", "fj.go") {
		t.Errorf("after -undo these differ from the original: %v; want only fj/fj.go", d)
	}
}
