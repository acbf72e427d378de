package rewrite

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// manyFiles returns the source of a package main of n files besides
// main.go, each with a spawn, a join, calls of functions of its own and of
// the next file's, a spawn that stays a goroutine (a warning) and a
// function that time.AfterFunc runs: sites and warnings in every file,
// whose order shows any order of the files.
func manyFiles(n int) map[string]string {
	files := make(map[string]string)
	var calls []string
	for i := range n {
		next := (i + 1) % n
		files[fmt.Sprintf("f%02d.go", i)] = fmt.Sprintf(`package main

import (
	"sync"
	"time"
)

// leaf%02[1]d is recursive, so the compiler does not inline it.
func leaf%02[1]d(n int) int {
	if n < 2 {
		return n
	}
	return leaf%02[1]d(n-1) + leaf%02[2]d(n-2)
}

func par%02[1]d(n int) int {
	var wg sync.WaitGroup
	var a int
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = leaf%02[1]d(n)
	}()
	b := leaf%02[2]d(n - 1)
	wg.Wait()
	return a + b
}

// pipe%02[1]d's spawn ranges over a channel that its continuation
// fills: it stays a goroutine, with a warning.
func pipe%02[1]d(xs []int) int {
	ch := make(chan int)
	var wg sync.WaitGroup
	s := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for x := range ch {
			s += x
		}
	}()
	for _, x := range xs {
		ch <- x
	}
	close(ch)
	wg.Wait()
	return s
}

// later%02[1]d's function runs on a goroutine the runtime does not know.
func later%02[1]d() *time.Timer {
	return time.AfterFunc(time.Hour, func() { _ = leaf%02[1]d(3) })
}
`, i, next)
		calls = append(calls, fmt.Sprintf("\ttotal += par%02d(%d)\n\ttotal += pipe%02d([]int{1, 2, %d})\n\tlater%02d().Stop()\n", i, 5+i%3, i, i, i))
	}
	files["main.go"] = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\ttotal := 0\n" + strings.Join(calls, "") + "\tfmt.Println(total)\n}\n"
	files["main_test.go"] = "package main\n\nimport \"testing\"\n\nfunc TestPar(t *testing.T) {\n\tif par00(6) != leaf00(6)+leaf01(5) {\n\t\tt.Fatal(\"par00\")\n\t}\n}\n"
	return files
}

// resultText is everything a rewrite outputs, as one text: the files, the
// warnings and the summary.
func resultText(res *Result, root string) string {
	var b strings.Builder
	for _, f := range res.Files {
		fmt.Fprintf(&b, "== %s\n", f.Path)
		b.Write(f.New)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	fmt.Fprintf(&b, "stats: %s\n", res.Stats)
	return strings.ReplaceAll(b.String(), root, "$DIR")
}

// TestRewriteIndependentOfParseOrder rewrites a package of 13 files parsed
// in different orders, which gives the files different bases in the file
// set (a parallel loader parses them in any order): the output must not
// change, and the site table lists the sites by file name, then offset.
func TestRewriteIndependentOfParseOrder(t *testing.T) {
	needGo(t)
	t.Parallel()
	files := manyFiles(12)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if n != "main_test.go" && !yield(n) {
				return
			}
		}
	})
	delete(files, "main_test.go")
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	rotated := append(slices.Clone(names[5:]), names[:5]...)
	var first string
	for i, order := range [][]string{names, reversed, rotated} {
		dir := t.TempDir()
		res, err := rewriteFilesParsed(t, dir, files, false, order)
		if err != nil {
			t.Fatal(err)
		}
		got := resultText(res, dir)
		if i == 0 {
			first = got
			gen := rewritten(res)[genFile]
			if !checkTableOrder(t, gen) {
				t.Logf("%s:\n%s", genFile, gen)
			}
			continue
		}
		if got != first {
			t.Errorf("parsed in the order %v, the rewrite differs from parsing in name order:\n%s", order, Diff("name order", []byte(first), "other", []byte(got)))
		}
	}
}

// checkTableOrder checks that the rows of a generated site table are in
// order of file name, then line and column, and reports whether they are.
func checkTableOrder(t *testing.T, gen string) bool {
	t.Helper()
	type row struct {
		file      string
		line, col int
	}
	var rows []row
	for l := range strings.Lines(gen) {
		if strings.TrimSpace(l) == "})" {
			break // the site table's end: the left-out calls follow
		}
		var r row
		if _, err := fmt.Sscanf(strings.TrimSpace(l), "{File: %q, Line: %d, Column: %d,", &r.file, &r.line, &r.col); err == nil {
			rows = append(rows, r)
		}
	}
	if len(rows) < 20 {
		t.Errorf("the site table has %d rows, want at least 20", len(rows))
		return false
	}
	ok := slices.IsSortedFunc(rows, func(a, b row) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		if a.line != b.line {
			return a.line - b.line
		}
		return a.col - b.col
	})
	if !ok {
		t.Errorf("the site table is not in order of file, line and column")
	}
	return ok
}

// TestRewriteRepeatable loads and rewrites a module of a 14-file package
// (with a test file) ten times, as `spanprof rewrite -d` does, and checks
// that every output is byte for byte the first. go/packages parses the
// files in parallel, so their bases in the file set differ from load to
// load.
func TestRewriteRepeatable(t *testing.T) {
	needGo(t)
	if testing.Short() {
		t.Skip("loads a module ten times")
	}
	dir := t.TempDir()
	files := manyFiles(12)
	files["go.mod"] = "module example.com/many\n\ngo 1.24\n"
	writeTree(t, dir, files)
	const runs = 10
	outputs := make(map[string]int)
	var first string
	for i := range runs {
		prog, err := Load(Config{Dir: dir, Mode: InPlace, Tests: true}, []string{"./..."})
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Inline(); err != nil {
			t.Fatal(err)
		}
		res, err := prog.Rewrite()
		if err != nil {
			t.Fatal(err)
		}
		got := resultText(res, dir)
		if i == 0 {
			first = got
			if n := strings.Count(got, "_spanprof_shadow.Go("); n != 24 {
				t.Errorf("%d spawns rewritten, want 24", n)
			}
			if n := strings.Count(got, "spawn runs as a goroutine in serial mode too"); n != 12 {
				t.Errorf("%d warnings of spawns that stay goroutines, want 12", n)
			}
		}
		outputs[got]++
	}
	if len(outputs) != 1 {
		for got := range outputs {
			if got != first {
				t.Errorf("%d different outputs in %d runs; one differs from the first:\n%s", len(outputs), runs, Diff("first", []byte(first), "other", []byte(got)))
				break
			}
		}
	}
}
