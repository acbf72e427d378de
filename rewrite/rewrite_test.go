package rewrite

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata")

// moduleRoot is the root of this repository.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// needGo skips the test when there is no go command.
func needGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
}

// goldenCases lists the directories of testdata that hold a program to
// rewrite.
func goldenCases(t testing.TB) []string {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "fuzz" {
			if _, err := os.Stat(filepath.Join("testdata", e.Name(), "main.go")); err == nil {
				cases = append(cases, e.Name())
			}
		}
	}
	return cases
}

// rewriteCases rewrites the golden cases once, for the tests that need
// them.
var rewriteCases = sync.OnceValues(func() (*Result, error) { return rewriteCasesIn(InPlace) })

// rewriteCasesOverlay rewrites them as spanprof run and test do.
var rewriteCasesOverlay = sync.OnceValues(func() (*Result, error) { return rewriteCasesIn(Overlay) })

func rewriteCasesIn(mode Mode) (*Result, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	var patterns []string
	entries, err := os.ReadDir("testdata")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		c := e.Name()
		if _, err := os.Stat(filepath.Join("testdata", c, "main.go")); err != nil {
			continue
		}
		patterns = append(patterns, "./rewrite/testdata/"+c)
	}
	prog, err := Load(Config{Dir: root, Mode: mode}, patterns)
	if err != nil {
		return nil, err
	}
	if err := prog.Inline(); err != nil {
		return nil, err
	}
	return prog.Rewrite()
}

// normalize replaces the repository's directory in src with $ROOT, so
// golden files do not depend on where the repository lies.
func normalize(src []byte, root string) []byte {
	return bytes.ReplaceAll(src, []byte(root), []byte("$ROOT"))
}

// TestGolden compares the rewritten form of every testdata program, and
// each file the rewrite adds, with the .golden file beside it.
func TestGolden(t *testing.T) {
	needGo(t)
	root := moduleRoot(t)
	res, err := rewriteCases()
	if err != nil {
		t.Fatal(err)
	}
	byDir := make(map[string][]*File)
	for _, f := range res.Files {
		byDir[filepath.Base(filepath.Dir(f.Path))] = append(byDir[filepath.Base(filepath.Dir(f.Path))], f)
	}
	for _, c := range goldenCases(t) {
		t.Run(c, func(t *testing.T) {
			files := byDir[c]
			if len(files) == 0 {
				t.Fatalf("nothing rewritten in testdata/%s", c)
			}
			for _, f := range files {
				golden := f.Path + ".golden"
				got := normalize(f.New, root)
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s (run with -update to rewrite):\n%s", filepath.Base(f.Path), filepath.Base(golden), Diff("want", want, "got", got))
				}
			}
		})
	}
}

// TestGoldenRun builds every testdata program as it is and rewritten as
// spanprof run builds it, runs both, and checks that they print the same
// (positions included: testdata/positions prints runtime.Caller's and
// panics' files and lines) and that the rewritten one writes a profile with
// the spawns and syncs the program makes. The codemod's //line directives
// name files by base name instead (TestGoldenPositions checks its lines).
func TestGoldenRun(t *testing.T) {
	needGo(t)
	root := moduleRoot(t)
	res, err := rewriteCasesOverlay()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	for i, f := range res.Files {
		name := filepath.Join(tmp, fmt.Sprintf("%d-%s", i, filepath.Base(f.Path)))
		if err := os.WriteFile(name, f.New, 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[f.Path] = name
	}
	ov, _ := json.Marshal(map[string]any{"Replace": overlay})
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := goldenCases(t)
	var pkgs []string
	for _, c := range cases {
		pkgs = append(pkgs, "./rewrite/testdata/"+c)
	}
	build := func(dir string, extra ...string) {
		t.Helper()
		args := append(append([]string{"build", "-o", dir + "/"}, extra...), pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	build(filepath.Join(tmp, "orig"))
	build(filepath.Join(tmp, "new"), "-overlay", ovFile)
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			run := func(bin string, env ...string) string {
				cmd := exec.Command(bin)
				cmd.Env = append(os.Environ(), env...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v\n%s", bin, err, stderr.Bytes())
				}
				return string(out)
			}
			prof := filepath.Join(tmp, c+".pb.gz")
			want := run(filepath.Join(tmp, "orig", c))
			got := run(filepath.Join(tmp, "new", c), "SPANPROF_OUT="+prof)
			if got != want {
				t.Errorf("the rewritten program prints\n%s\nthe original\n%s", got, want)
			}
			p, err := spanprofile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if p.Work <= 0 || p.Span <= 0 || p.Span > p.Work {
				t.Errorf("profile: work %d, span %d", p.Work, p.Span)
			}
			wantCounts, err := os.ReadFile(filepath.Join("testdata", c, "profile.txt"))
			if err != nil {
				t.Fatal(err)
			}
			gotCounts := fmt.Sprintf("spawns %d\nsyncs %d\n", p.Spawns, p.Syncs)
			if gotCounts != string(wantCounts) {
				t.Errorf("profile counts:\n%swant\n%s", gotCounts, wantCounts)
			}
			if c == "args" {
				checkArgs(t, p)
			}
			// stacks.txt, where a case has one, lists the calling
			// contexts of the profile: which invocation runs inside
			// which.
			stacks := filepath.Join("testdata", c, "stacks.txt")
			wantStacks, err := os.ReadFile(stacks)
			if os.IsNotExist(err) {
				return
			}
			gotStacks := contextStacks(p)
			if *update {
				if err := os.WriteFile(stacks, []byte(gotStacks), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if gotStacks != string(wantStacks) {
				t.Errorf("calling contexts differ from %s:\n%s", stacks, Diff("want", wantStacks, "got", []byte(gotStacks)))
			}
		})
	}
}

// checkArgs checks the profile of testdata/args, where consume (cheap) is
// called with arguments that make calls and joins: consume(work(1_000_000))
// at line 57 and consume(t.Wait()) at line 75, t's child doing the same
// work. The program evaluates the arguments in main before consume runs,
// so neither the work nor the child's span is consume's.
func checkArgs(t *testing.T, p *spanprofile.Profile) {
	t.Helper()
	find := func(fn string, line int) spanprofile.SiteMeasurement {
		for _, s := range p.BySite() {
			if s.Site.Func == fn && s.Site.Line == line {
				return s
			}
		}
		t.Fatalf("no site of %s at line %d", fn, line)
		return spanprofile.SiteMeasurement{}
	}
	work := find("main.work", 57).OnWork.TopCallSite
	if got := find("main.consume", 57).OnWork.TopCallSite; got.Work > work.Work/10 {
		t.Errorf("consume(work(n)): consume's top-call-site work %d, work's %d: the argument is charged to consume", got.Work, work.Work)
	}
	child := find("main.work", 74).OnWork.TopCallSite // the spawn, named by the call it is made of
	if got := find("main.consume", 75).OnWork.TopCallSite; got.Span > child.Span/10 {
		t.Errorf("consume(t.Wait()): consume's top-call-site span %d, the child's %d: the join is charged to consume", got.Span, child.Span)
	}
}

// contextStacks lists the calling contexts of p, one a line, sorted: each
// the sites of its stack, root first, as function:line:column.
func contextStacks(p *spanprofile.Profile) string {
	var lines []string
	for _, c := range p.Contexts {
		var sites []string
		for _, i := range c.Stack {
			s := p.Sites[i]
			sites = append(sites, fmt.Sprintf("%s:%d:%d", s.Func, s.Line, s.Column))
		}
		lines = append(lines, strings.Join(append([]string{"root"}, sites...), " ")+"\n")
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// TestGoldenStats checks what the rewrite of the testdata programs counts
// and warns about.
func TestGoldenStats(t *testing.T) {
	needGo(t)
	res, err := rewriteCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if filepath.Base(f.Path) == "gen.go" {
			t.Errorf("the generated file %s was rewritten", f.Path)
		}
	}
	if res.Stats.LineConflicts != 0 {
		t.Errorf("%d output lines join original lines", res.Stats.LineConflicts)
	}
	if res.Stats.CallsSkipped[skipInlined] == 0 || res.Stats.CallsSkipped[skipDeferred] == 0 {
		t.Errorf("calls skipped: %v; want some inlined and deferred", res.Stats.CallsSkipped)
	}
	// testdata/fuse has 18 spawned literals made of one call (fuse_test.go
	// checks which), testdata/glue 8; the other cases 15.
	if res.Stats.CallsFused != 41 {
		t.Errorf("%d calls profiled as their spawns, want 41", res.Stats.CallsFused)
	}
	if !strings.Contains(res.Stats.String(), "; 41 calls profiled as their spawns;") {
		t.Errorf("summary %q does not count the calls profiled as their spawns", res.Stats.String())
	}
	var warned []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "nonelidable/main.go:") {
			warned = append(warned, w)
		}
	}
	want := []string{"rewrite/testdata/nonelidable/main.go:25: spawn runs as a goroutine in serial mode too: ranges over channel jobs at main.go:27"}
	if !slices.Equal(warned, want) {
		t.Errorf("warnings for nonelidable:\n%s\nwant\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}
}

// replacedNames are the identifiers that rewriting removes from the code:
// the methods whose calls become calls of the runtime (a region's End
// among them), and TestMain.
var replacedNames = map[string]bool{
	"Go": true, "TryGo": true, "Done": true, "Add": true, "Wait": true, "Spawn": true, "Sync": true,
	"Do": true, "For": true, "ForRange": true, "ForEach": true, "TestMain": true, "SetLimit": true,
	"End": true,
}

// identLines returns, for each identifier of src, the lines where it
// occurs, as the compiler sees them (after //line directives).
func identLines(t *testing.T, name string, src []byte) map[string][]int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// The qualifier of parlib.Do and the type of a method expression
	// such as (*sync.WaitGroup).Done go away with the call.
	gone := make(map[*ast.Ident]bool)
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && replacedNames[sel.Sel.Name] {
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "parlib" || x.Name == "errgroup") || sel.X != nil && isParen(sel.X) {
				ast.Inspect(sel.X, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						gone[id] = true
					}
					return true
				})
			}
		}
		return true
	})
	lines := make(map[string][]int)
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !gone[id] {
			p := fset.Position(id.Pos())
			if p.Filename == name {
				lines[id.Name] = append(lines[id.Name], p.Line)
			}
		}
		return true
	})
	return lines
}

// TestGoldenPositions checks that every identifier of every testdata
// program keeps its line in the rewritten program, as the compiler reads
// it: the //line directives make every position true. (TestGoldenRun
// checks the same through runtime.Caller and panics.)
func TestGoldenPositions(t *testing.T) {
	needGo(t)
	res, err := rewriteCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Old == nil {
			continue
		}
		orig := identLines(t, f.Path, f.Old)
		got := identLines(t, f.Path, f.New)
		for name, lines := range orig {
			if replacedNames[name] {
				continue
			}
			have := slices.Clone(got[name])
			for _, l := range lines {
				i := slices.Index(have, l)
				if i < 0 {
					t.Errorf("%s: %s at line %d is at lines %v after rewriting", filepath.Base(filepath.Dir(f.Path)), name, l, got[name])
					continue
				}
				have = slices.Delete(have, i, i+1)
			}
		}
	}
}

func isParen(e ast.Expr) bool {
	_, ok := e.(*ast.ParenExpr)
	return ok
}
