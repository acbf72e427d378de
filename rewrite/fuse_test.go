package rewrite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFuse checks the site table of testdata/fuse (whose golden file
// TestGolden keeps equal to the rewrite) against the comment at each
// spawn: "fused F..." wants the spawn's site (one per function of a
// parlib.Do) named by the callee F and no call site in the literal;
// "kept F...: why" wants the spawn named by its literal and the call
// sites F... in it, in order.
func TestFuse(t *testing.T) {
	src, err := os.ReadFile("testdata/fuse/main.go")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("testdata/fuse/zz_spanprof.go.golden")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		line, col  int
		fn, caller string
		kind       string
	}
	var rows []row
	re := regexp.MustCompile(`\{File: "rewrite/testdata/fuse/main.go", Line: (\d+), Column: (\d+), Func: "([^"]+)", Caller: "([^"]+)", Kind: "(\w+)"(, [^}]*)?\}`)
	for _, m := range re.FindAllStringSubmatch(string(table), -1) {
		if strings.Contains(m[6], "Why:") {
			continue // a call left out: no site
		}
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		rows = append(rows, row{line, col, m[3], m[4], m[5]})
	}
	if len(rows) == 0 {
		t.Fatal("no sites in the golden table")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	// The literals that start on each line, and the lines they span.
	lits := make(map[int][][2]int)
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.FuncLit); ok {
			from := fset.Position(lit.Pos()).Line
			lits[from] = append(lits[from], [2]int{from, fset.Position(lit.End()).Line})
		}
		return true
	})
	checked := map[string]int{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			text := strings.TrimPrefix(c.Text, "// ")
			verdict, rest, _ := strings.Cut(text, " ")
			if verdict != "fused" && verdict != "kept" {
				continue
			}
			line := fset.Position(c.Pos()).Line
			names, _, _ := strings.Cut(rest, ":")
			want := strings.Fields(names)
			var spawns []string
			for _, r := range rows {
				if r.line == line && r.kind == "spawn" {
					spawns = append(spawns, r.fn)
				}
			}
			if len(spawns) == 0 || len(lits[line]) != len(spawns) {
				t.Errorf("line %d: spawn sites %q for %d literals", line, spawns, len(lits[line]))
				continue
			}
			from, to := lits[line][0][0], lits[line][len(lits[line])-1][1]
			var calls []string
			for _, r := range rows {
				if r.kind == "call" && r.line >= from && r.line <= to {
					calls = append(calls, r.fn)
				}
			}
			checked[verdict]++
			if verdict == "fused" {
				if !slices.Equal(spawns, want) || len(calls) > 0 {
					t.Errorf("line %d: spawn sites %q and call sites %q in the literal; want spawns %q and no call site", line, spawns, calls, want)
				}
				continue
			}
			for _, s := range spawns {
				if !regexp.MustCompile(`\.func\d+$`).MatchString(s) {
					t.Errorf("line %d: spawn site named %s, want the literal's name", line, s)
				}
			}
			slices.Sort(calls)
			slices.Sort(want)
			if !slices.Equal(calls, want) {
				t.Errorf("line %d: call sites %q in the literal, want %q", line, calls, want)
			}
		}
	}
	if checked["fused"] < 15 || checked["kept"] < 12 {
		t.Errorf("checked %v spawns; want all the comments of testdata/fuse read", checked)
	}
}
