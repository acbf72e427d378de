package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/rewrite"
	"github.com/spanprof/spanprof/shadow"
	"github.com/spanprof/spanprof/spanprofile"
)

// TestMain lets the test binary run as the spanprof command, so that tests
// run it in the directory of a module of their own.
func TestMain(m *testing.M) {
	if os.Getenv("SPANPROF_TEST_COMMAND") == "1" {
		if os.Getenv("SPANPROF_TEST_BREAK") == "1" {
			testHookRewrite = func(res *rewrite.Result) {
				for _, f := range res.Files {
					if f.Old != nil {
						f.New = append(f.New, "\nfunc broken() { undefinedName() }\n"...)
						return
					}
				}
			}
		}
		if id := os.Getenv("SPANPROF_TEST_TOOLID"); id != "" {
			testHookCache = func(c *rewrite.Cache) { c.ToolID = id }
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// No automatic what-if run, in the tests' spanprof run and in the
	// commands they start (TestRunWhatIf turns it back on): it would
	// double every run's time.
	os.Setenv(shadow.EnvWhatIf, "off")
	// The rewrites the tests make are cached where the user's are not.
	if os.Getenv(rewrite.EnvCache) == "" {
		dir, err := os.MkdirTemp("", "spanprof-cache-test-")
		if err != nil {
			panic(err)
		}
		os.Setenv(rewrite.EnvCache, dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// needGo skips the test when there is no go command.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
}

// offline is the environment of the go command in tests: no network, and
// modules from the module cache.
var offline = []string{"GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOWORK=off"}

// spanprofIn runs the spanprof command in dir as a process with env added.
func spanprofIn(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "SPANPROF_TEST_COMMAND=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("spanprof %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// goIn runs the go command in dir.
func goIn(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// syncSum returns the go.sum lines of golang.org/x/sync from this
// repository's go.sum, and its version.
func syncSum(t *testing.T) (sum, version string) {
	t.Helper()
	data, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for l := range strings.Lines(string(data)) {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "golang.org/x/sync" {
			b.WriteString(l)
			version = strings.TrimSuffix(f[1], "/go.mod")
		}
	}
	if version == "" {
		t.Skip("golang.org/x/sync is not in go.sum")
	}
	return b.String(), version
}

// module writes a module example.com/m that requires golang.org/x/sync
// with files (name → content) into a new temporary directory outside this
// repository.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	sum, version := syncSum(t)
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26.0\n\nrequire golang.org/x/sync " + version + "\n"
	files["go.sum"] = sum
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// burnMain spawns 8 children with errgroup that each do the same fixed
// computation (20 million iterations of a loop): work 8 c, span c,
// parallelism 8.
const burnMain = `package main

import (
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"
)

//go:noinline
func burn(n int) int {
	x := 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	var g errgroup.Group
	counts := make([]int, 8)
	for i := range counts {
		g.Go(func() error {
			counts[i] = burn(20_000_000)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	fmt.Println("children", len(counts))
	switch {
	case len(os.Args) > 1 && os.Args[1] == "exit":
		os.Exit(3)
	case len(os.Args) > 1 && os.Args[1] == "panic":
		panic("boom")
	}
}
`

func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }

// instructionsOpen reports whether this machine counts instructions.
func instructionsOpen() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m, err := perf.Open(perf.Instructions)
	if err != nil {
		return false
	}
	m.Close()
	return true
}

// TestRunEndToEnd profiles a program of a module outside this repository,
// built against the embedded runtime, and checks the work, span and
// parallelism of its known structure.
func TestRunEndToEnd(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": burnMain})
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	// The default measure (cpu, with -count auto) must read the known
	// structure on any machine, busy or not, counters or none: go test
	// ./... runs other test binaries on the same cores meanwhile. Where the
	// hardware counts instructions, the count must read it too.
	measures := []string{""}
	if instructionsOpen() {
		measures = append(measures, "instructions")
	}
	for _, measure := range measures {
		args := []string{"run", "-o", "prof.pb.gz", ".", "--"}
		if measure != "" {
			args = append([]string{"run", "-measure", measure}, args[1:]...)
		}
		code, stdout, stderr := spanprofIn(t, dir, offline, args...)
		if code != exitOK {
			t.Fatalf("spanprof run (measure %q): status %d\n%s", measure, code, stderr)
		}
		if stdout != "children 8\n" {
			t.Errorf("the program printed %q", stdout)
		}
		for _, want := range []string{"1 spawn, 0 calls, 1 join instrumented; 1 call profiled as its spawn", "Parallelism:", "main.burn"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "no spawn in the packages") {
			t.Errorf("a program with a spawn is told it has none:\n%s", stderr)
		}
		p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		want := cmp.Or(measure, perf.Default())
		if p.Spawns != 8 || p.Syncs != 1 || p.Measure != want {
			t.Errorf("spawns %d, syncs %d, measure %s; want 8, 1, %s", p.Spawns, p.Syncs, p.Measure, want)
		}
		child := float64(p.Work) / 8
		if !within(float64(p.Span), child, 0.15) || !within(float64(p.Work)/float64(p.Span), 8, 0.15) {
			t.Errorf("%s: work %d, span %d, parallelism %.2f; want span = work/8 and parallelism 8 within 15%%\n%s",
				p.Measure, p.Work, p.Span, float64(p.Work)/float64(p.Span), stderr)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "go.mod")); !bytes.Equal(got, gomod) {
		t.Errorf("spanprof run changed go.mod:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err != nil {
		t.Error(err)
	}

	// os.Exit in main and a panic: status 1, the program's status shown,
	// and the profile written all the same.
	for _, tc := range []struct{ arg, want string }{{"exit", "exit status 3"}, {"panic", "exit status 2"}} {
		os.Remove(filepath.Join(dir, "prof.pb.gz"))
		code, _, stderr := spanprofIn(t, dir, offline, "run", "-o", "prof.pb.gz", ".", "--", tc.arg)
		if code != exitFailed || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Parallelism:") {
			t.Errorf("spanprof run . -- %s: status %d, stderr\n%s\nwant status 1, %q and the report", tc.arg, code, stderr, tc.want)
		}
		p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
		if err != nil {
			t.Errorf("after %s: %v", tc.arg, err)
		} else if want := map[string]string{"exit": "exit 3", "panic": "panic"}[tc.arg]; p.Ended != want {
			t.Errorf("after %s the profile says the run ended %q, want %s", tc.arg, p.Ended, want)
		}
	}
}

// TestBuild builds an instrumented binary whose defaults come from the
// flags, and runs it.
func TestBuild(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": burnMain})
	bin := filepath.Join(t.TempDir(), "prog")
	code, _, stderr := spanprofIn(t, dir, offline, "build", "-o", bin, "-burden", "3us", ".")
	if code != exitOK {
		t.Fatalf("spanprof build: status %d\n%s", code, stderr)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "SPANPROF_OUT="+filepath.Join(dir, "built.pb.gz"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "built.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spawns != 8 || p.Burden != 3000 {
		t.Errorf("spawns %d, burden %d; want 8 and the -burden of the build, 3000", p.Spawns, p.Burden)
	}
	if code, _, stderr := spanprofIn(t, dir, offline, "build", "."); code != exitUsage || !strings.Contains(stderr, "build needs -o BIN") {
		t.Errorf("spanprof build without -o: status %d, stderr %q", code, stderr)
	}
}

// TestRunRefusals checks the errors of run: a package that is not main,
// one that does not type-check, and a rewrite that does not build (a bug,
// made here by a test hook), whose files are kept.
func TestRunRefusals(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"main.go":     burnMain,
		"lib/lib.go":  "package lib\n\nfunc F() int { return 1 }\n",
		"bad/main.go": "package main\n\nfunc main() {\n\tx := 1\n}\n",
	})
	for _, tc := range []struct {
		args []string
		env  string
		want string // regexp for stderr's last line
	}{
		{[]string{"run", "./lib"}, "", `^spanprof: package example.com/m/lib is not a main package$`},
		{[]string{"run", "./bad"}, "", `^spanprof: bad/main.go:4:2: declared and not used: x$`},
		{[]string{"run", ".", "./lib"}, "", `^Run "spanprof help run" for details.$`},
		{[]string{"run", "-mode", "fast", "."}, "", `^spanprof: unknown -mode "fast"`},
		{[]string{"run", "."}, "SPANPROF_TEST_BREAK=1", `^spanprof: main.go:\d+:\d+: undefined: undefinedName: the instrumented code does not build, a spanprof bug; the rewritten files are kept in (\S+)$`},
	} {
		code, _, stderr := spanprofIn(t, dir, append(slices.Clone(offline), tc.env), tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		m := regexp.MustCompile(tc.want).FindStringSubmatch(lines[len(lines)-1])
		if code != exitUsage || m == nil {
			t.Errorf("spanprof %s: status %d, stderr\n%s\nwant status 2 and a last line matching %s", strings.Join(tc.args, " "), code, stderr, tc.want)
			continue
		}
		if len(m) > 1 {
			kept := m[1]
			if _, err := os.Stat(filepath.Join(kept, "src", "main.go")); err != nil {
				t.Errorf("the rewritten main.go is not kept: %v", err)
			}
			os.RemoveAll(kept)
		}
	}
}

// TestTest profiles the tests of two packages: one with a TestMain of its
// own, which must still run, and one without fork/join code.
func TestTest(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"sum/sum.go": `package sum

import "sync"

func Sum(xs []int) int {
	var wg sync.WaitGroup
	parts := make([]int, 2)
	half := len(xs) / 2
	for i, s := range [][]int{xs[:half], xs[half:]} {
		wg.Go(func() { parts[i] = add(s) })
	}
	wg.Wait()
	return parts[0] + parts[1]
}

func add(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
`,
		"sum/sum_test.go": `package sum

import (
	"os"
	"testing"
)

var setUp bool

func TestMain(m *testing.M) {
	setUp = true
	os.Exit(m.Run())
}

func TestSum(t *testing.T) {
	if !setUp {
		t.Fatal("TestMain did not run")
	}
	if got := Sum([]int{1, 2, 3, 4}); got != 10 {
		t.Fatalf("Sum = %d", got)
	}
}
`,
		"plain/plain.go":      "package plain\n\nfunc Two() int { return 2 }\n",
		"plain/plain_test.go": "package plain_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/plain\"\n)\n\nfunc TestTwo(t *testing.T) {\n\tif plain.Two() != 2 {\n\t\tt.Fatal(\"two\")\n\t}\n}\n",
	})
	code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-o", "t.pb.gz", "./...", "--", "-v")
	if code != exitOK {
		t.Fatalf("spanprof test: status %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "--- PASS: TestSum") || !strings.Contains(stdout, "--- PASS: TestTwo") {
		t.Errorf("go test output:\n%s", stdout)
	}
	for _, name := range []string{"t.sum.pb.gz", "t.plain.pb.gz"} {
		if _, err := spanprofile.ReadFile(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if p, err := spanprofile.ReadFile(filepath.Join(dir, "t.sum.pb.gz")); err == nil && p.Spawns != 2 {
		t.Errorf("the tests of sum made %d spawns, want 2", p.Spawns)
	}

	// A failing test: status 1.
	if err := os.WriteFile(filepath.Join(dir, "plain/fail_test.go"), []byte("package plain\n\nimport \"testing\"\n\nfunc TestFail(t *testing.T) { t.Fatal(\"no\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := spanprofIn(t, dir, offline, "test", "./plain"); code != exitFailed || !strings.Contains(stderr, "go test: exit status 1") {
		t.Errorf("spanprof test of a failing test: status %d, stderr\n%s", code, stderr)
	}
}

// treeHashes returns the hash and mode of every file under dir.
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	hashes := make(map[string]string)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		hashes[rel] = hex.EncodeToString(sum[:]) + " " + info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hashes
}

func diffTrees(a, b map[string]string) []string {
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, k)
		}
	}
	slices.Sort(diffs)
	return diffs
}

// TestRewriteXSync rewrites a copy of golang.org/x/sync in place, runs its
// tests while rewritten and with -spanprofile, checks that rewriting again
// changes nothing, and that -undo restores every file byte for byte.
func TestRewriteXSync(t *testing.T) {
	needGo(t)
	t.Parallel()
	_, version := syncSum(t)
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(cache)), "golang.org/x/sync@"+version)
	if _, err := os.Stat(src); err != nil {
		t.Skip("golang.org/x/sync is not in the module cache:", err)
	}
	dir := filepath.Join(t.TempDir(), "sync")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chmod(p, map[bool]fs.FileMode{true: 0o755, false: 0o644}[d.IsDir()])
		}
		return err
	})
	before := treeHashes(t, dir)
	// go.mod must be complete (no -mod=mod), and the tree builds in the
	// go.work that rewrite -w writes (GOWORK unset).
	env := []string{"GOPROXY=off", "GOFLAGS=", "GOWORK="}

	code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./...")
	if code != exitOK {
		t.Fatalf("spanprof rewrite -w: status %d\n%s", code, stderr)
	}
	t.Log(stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:])
	rewritten := treeHashes(t, dir)
	changed := diffTrees(before, rewritten)
	if !slices.Contains(changed, "go.work") || slices.Contains(changed, "go.mod") || !slices.Contains(changed, filepath.Join("errgroup", "zz_spanprof_test.go")) {
		t.Errorf("rewrite -w changed %v", changed)
	}
	if out, err := exec.Command("gofmt", "-l", dir).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("gofmt -l after rewrite -w: %v\n%s", err, out)
	}
	// Idempotent.
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./..."); code != exitOK || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("rewrite -w again: status %d\n%s", code, stderr)
	}
	if d := diffTrees(rewritten, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("rewriting again changed %v", d)
	}
	// The tests pass while rewritten, and -spanprofile writes a profile.
	if out, err := goIn(t, dir, env, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("go test ./... of the rewritten x/sync: %v\n%s", err, out)
	}
	prof := filepath.Join(dir, "errgroup.pb.gz")
	if out, err := goIn(t, dir, env, "test", "-count=1", "./errgroup", "-spanprofile="+prof); err != nil {
		t.Fatalf("go test -spanprofile: %v\n%s", err, out)
	}
	if p, err := spanprofile.ReadFile(prof); err != nil || p.Spawns == 0 {
		t.Errorf("the profile of errgroup's tests: %v", err)
	}
	os.Remove(prof)
	// Undo restores everything.
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo"); code != exitOK {
		t.Fatalf("spanprof rewrite -undo: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("after -undo these files differ from the original: %v", d)
	}
}

// TestRewriteCommand checks rewrite -l, -d, -w of one package, the
// -spanprofile flag of the rewritten tests, a partial -undo, and the
// refusals that change nothing.
func TestRewriteCommand(t *testing.T) {
	needGo(t)
	t.Parallel()
	files := map[string]string{
		"fj/fj.go":        "package fj\n\nimport \"sync\"\n\nfunc Twice(f func()) {\n\tvar wg sync.WaitGroup\n\twg.Go(f)\n\twg.Go(func() {})\n\twg.Wait()\n}\n",
		"fj/fj_test.go":   "package fj\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tn := 0\n\tTwice(func() { n++ })\n\tif n != 1 {\n\t\tt.Fatal(n)\n\t}\n}\n",
		"other/o.go":      "package other\n\nfunc One() int { return 1 }\n",
		"other/o_test.go": "package other\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal()\n\t}\n}\n",
	}
	dir := module(t, files)
	env := []string{"GOPROXY=off", "GOFLAGS=", "GOWORK="}
	before := treeHashes(t, dir)

	code, stdout, _ := spanprofIn(t, dir, env, "rewrite", "-l", "./...")
	// Every test function begins by taking the profiler (other's test
	// file has nothing else to instrument).
	want := []string{"fj/fj.go", "fj/fj_test.go", "other/o_test.go", "fj/zz_spanprof.go", "fj/zz_spanprof_test.go", "other/zz_spanprof_test.go", "go.work"}
	if got := strings.Fields(stdout); code != exitOK || !slices.Equal(got, want) {
		t.Errorf("rewrite -l: status %d, %v; want %v", code, got, want)
	}
	if code, stdout, _ := spanprofIn(t, dir, env, "rewrite", "-d", "./fj"); code != exitOK || !strings.Contains(stdout, "+\t_spanprof_shadow.WaitGroupGo(_spanprofSites+1, &wg, func() {})") {
		t.Errorf("rewrite -d: status %d\n%s", code, stdout)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("-l and -d changed %v", d)
	}
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./..."); code != exitOK {
		t.Fatalf("rewrite -w: status %d\n%s", code, stderr)
	}
	for _, pkg := range []string{"fj", "other"} {
		prof := filepath.Join(dir, pkg+".pb.gz")
		if out, err := goIn(t, dir, env, "test", "-count=1", "./"+pkg, "-spanprofile="+prof); err != nil {
			t.Fatalf("go test ./%s -spanprofile: %v\n%s", pkg, err, out)
		}
		if _, err := spanprofile.ReadFile(prof); err != nil {
			t.Error(err)
		}
		os.Remove(prof)
	}
	// Without the flag, a test run writes nothing.
	if out, err := goIn(t, dir, env, "test", "-count=1", "./fj"); err != nil {
		t.Fatalf("go test ./fj: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "fj", "spanprof.pb.gz")); !os.IsNotExist(err) {
		t.Errorf("go test without -spanprofile wrote a profile: %v", err)
	}
	// Undo one package, then the rest.
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo", "./other"); code != exitOK {
		t.Fatalf("rewrite -undo ./other: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); slices.Contains(d, "other/zz_spanprof_test.go") || !slices.Contains(d, "go.work") {
		t.Errorf("after -undo ./other, these differ: %v", d)
	}
	if code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-undo"); code != exitOK {
		t.Fatalf("rewrite -undo: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("after -undo these differ: %v", d)
	}

	// Refusals change nothing.
	if err := os.Chmod(filepath.Join(dir, "fj/fj.go"), 0o444); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./...")
	if code != exitUsage || !strings.Contains(stderr, "fj.go: the file is read-only") {
		t.Errorf("rewrite -w of a read-only file: status %d, stderr\n%s", code, stderr)
	}
	os.Chmod(filepath.Join(dir, "fj/fj.go"), 0o644)
	for name, src := range map[string]string{
		"other/bad.go":   "package other\n\nfunc bad() int { return \"x\" }\n",
		"other/clash.go": "package other\n\nvar _spanprofMine = 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		before := treeHashes(t, dir)
		code, _, stderr := spanprofIn(t, dir, env, "rewrite", "-w", "./...")
		if code != exitUsage || !regexp.MustCompile(`^spanprof: `+regexp.QuoteMeta(name)+`:\d+:\d+: `).MatchString(stderr) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rewrite -w with %s: status %d, stderr\n%s\nwant status 2 and one line naming %s:line:col", name, code, stderr, name)
		}
		if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
			t.Errorf("a refused rewrite changed %v", d)
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// TestRewriteExamples rewrites a copy of this repository's examples, as a
// module of their own that uses spanprof's parlib, runs their tests and
// programs while rewritten (the same output as the originals), and checks
// that -undo restores every file byte for byte.
func TestRewriteExamples(t *testing.T) {
	needGo(t)
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	_, version := syncSum(t)
	dir := t.TempDir()
	names := []string{"quicksort", "fib", "matmul", "stencil", "treesum"}
	for _, name := range names {
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(filepath.Join(root, "examples", name))); err != nil {
			t.Fatal(err)
		}
	}
	gomod := "module example.com/ex\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/spanprof/spanprof v0.0.0-00010101000000-000000000000\n\tgolang.org/x/sync " + version + "\n)\n\nreplace github.com/spanprof/spanprof => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{
		"quicksort": {"-n", "20000"}, "fib": {"-n", "15"}, "matmul": {"-n", "64", "-cutoff", "16"},
		"stencil": {"-rows", "34", "-cols", "34", "-steps", "3"}, "treesum": {"-n", "5000", "-depth", "4"},
	}
	outputs := func(env ...string) map[string]string {
		out := map[string]string{}
		for _, name := range names {
			b, err := goIn(t, dir, env, append([]string{"run", "./" + name}, args[name]...)...)
			if err != nil {
				t.Fatalf("go run ./%s: %v\n%s", name, err, b)
			}
			out[name] = string(b)
		}
		return out
	}
	want := outputs(offline...)
	before := treeHashes(t, dir)
	// The rewritten tree builds in the go.work that rewrite -w writes, with
	// go.mod as it is (no -mod=mod).
	rewritten := []string{"GOPROXY=off", "GOSUMDB=off", "GOFLAGS=", "GOWORK="}

	if code, _, stderr := spanprofIn(t, dir, offline, "rewrite", "-w", "./..."); code != exitOK {
		t.Fatalf("spanprof rewrite -w: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) == 0 {
		t.Fatal("rewrite -w changed nothing")
	}
	if out, err := goIn(t, dir, rewritten, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("go test ./... of the rewritten examples: %v\n%s", err, out)
	}
	// The rewritten programs profile themselves; keep the profile out of
	// the tree that -undo must restore.
	if got := outputs(append(rewritten, "SPANPROF_OUT="+filepath.Join(t.TempDir(), "p.pb.gz"))...); !maps.Equal(got, want) {
		t.Errorf("rewritten programs print %v, the originals %v", got, want)
	}
	if code, _, stderr := spanprofIn(t, dir, offline, "rewrite", "-undo"); code != exitOK {
		t.Fatalf("spanprof rewrite -undo: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("after -undo these files differ from the original: %v", d)
	}
}

// chanPkg is a package whose channel hides, from the analysis of its
// importers, that Take waits for a Put: a spawn that calls Take looks
// elidable and deadlocks inline.
const chanPkg = "package q\n\nvar ch = make(chan int)\n\nfunc Put(v int) { ch <- v }\n\nfunc Take() int { return <-ch }\n"

// TestRunSerialDeadlock profiles a program whose spawned goroutine waits on a
// channel hidden in another package, which the analyzer cannot see, so that
// serial mode's inline run deadlocks: instead of hanging, or of Go's "all
// goroutines are asleep" crash that loses the profile, the run stops with a
// line naming the spawn, writes the profile of what ran, and fails.
func TestRunSerialDeadlock(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"q/q.go": chanPkg,
		"main.go": `package main

import (
	"fmt"
	"sync"

	"example.com/m/q"
)

func main() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fmt.Println(q.Take())
	}()
	q.Put(42)
	wg.Wait()
}
`,
	})
	code, _, stderr := spanprofIn(t, dir, offline, "run", "-o", "prof.pb.gz", ".")
	if code != exitFailed {
		t.Errorf("status %d, want %d", code, exitFailed)
	}
	if want := "main.go:13: the spawned goroutine waits (chan receive) for something only its continuation would do"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz")); err != nil || p.Spawns != 1 {
		t.Errorf("the profile of what ran: %v", err)
	}
}

// TestTestSerialDeadlock is TestRunSerialDeadlock for a test binary: the
// watchdog follows the engine from test to test, so the second test's
// deadlock inside an inline spawn stops the binary with the one-line
// message, where it used to hang until go test's timeout.
func TestTestSerialDeadlock(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"q/q.go": chanPkg,
		"m.go":   "package m\n\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n",
		"m_test.go": `package m

import (
	"sync"
	"testing"

	"example.com/m/q"
)

func TestFirst(t *testing.T) {
	if Sum(4) != 6 {
		t.Fatal("sum")
	}
}

func TestSecond(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.Log(q.Take())
	}()
	q.Put(42)
	wg.Wait()
}
`,
	})
	start := time.Now()
	code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-o", "prof.pb.gz", ".", "--", "-timeout", "90s")
	if code != exitFailed {
		t.Errorf("status %d, want %d", code, exitFailed)
	}
	if want := "m_test.go:19: the spawned goroutine waits (chan receive) for something only its continuation would do"; !strings.Contains(stdout+stderr, want) {
		t.Errorf("output lacks %q:\n%s\n%s", want, stdout, stderr)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v: the watchdog did not stop the test binary", d)
	}
	// The profile of what ran goes where -o says, as a finished test
	// binary's does, and nowhere else.
	if p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz")); err != nil || p.Spawns != 1 {
		t.Errorf("the profile of what ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "spanprof.pb.gz")); err == nil {
		t.Error("the watchdog wrote spanprof.pb.gz in the package directory")
	}
}

// TestTestGoroutineSiteAfterHandOver: in a test binary the engine passes
// from test to test; a goroutine site then turns parallel accounting on,
// which must find the root state under the goroutine of the test that holds
// it, not under the one that started the run. It did not: when the spawn
// came inside an instrumented call, every later event of the binary was
// ignored and the call never ended (found on github.com/alitto/pond).
func TestTestGoroutineSiteAfterHandOver(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"m.go": `package m

import "sync"

//go:noinline
func Start(ch chan int) {
	go func() { ch <- Sum(1000) }()
}

//go:noinline
func Sum(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func Both() int {
	var wg sync.WaitGroup
	var a int
	wg.Go(func() { a = Sum(10) })
	b := Sum(20)
	wg.Wait()
	return a + b
}
`,
		"m_test.go": `package m

import "testing"

func TestA(t *testing.T) {
	ch := make(chan int)
	Start(ch)
	if <-ch != 499500 {
		t.Fatal("sum")
	}
}

func TestB(t *testing.T) {
	if Both() != 235 {
		t.Fatal("both")
	}
}
`,
	})
	code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-o", "prof.pb.gz", ".")
	if code != exitOK {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "not profiled") {
		t.Errorf("events were ignored:\n%s", stderr)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spawns != 2 {
		t.Errorf("%d spawns, want 2: the goroutine site of TestA and the wg.Go of TestB", p.Spawns)
	}
	// Had Start's invocation never ended, TestB's calls would run inside
	// it. (Its work may hold the goroutine it spawned, which belongs to
	// its trace: how much depends on when the goroutine ends.)
	for _, c := range p.Contexts {
		var start, both bool
		for _, i := range c.Stack {
			start = start || p.Sites[i].Func == "example.com/m.Start"
			both = both || p.Sites[i].Func == "example.com/m.Both"
		}
		if start && both {
			t.Errorf("TestB's Both ran inside Start's invocation: it never ended")
		}
	}
}

// TestRunNoSpawnSaysWhy: a program whose goroutines all start in another
// module (a worker-pool library) has no spawn to rewrite; run says so
// before the profile that shows no parallelism, and only then.
func TestRunNoSpawnSaysWhy(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"main.go": "package main\n\nimport \"fmt\"\n\n//go:noinline\nfunc work() int { return 42 }\n\nfunc main() { fmt.Println(work()) }\n",
	})
	code, stdout, stderr := spanprofIn(t, dir, offline, "run", "-o", "prof.pb.gz", ".")
	if code != exitOK || !strings.Contains(stdout, "42") {
		t.Fatalf("status %d, stdout %q\n%s", code, stdout, stderr)
	}
	if want := "spanprof: no spawn in the packages of module example.com/m: spawns in other modules"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestRunDashDashFirst: the program's arguments may follow "--" with no
// package before it, as the usage line allows ([PKG] [-- ARGS...]); flag
// parsing used to take that "--" as its own and the arguments for packages.
func TestRunDashDashFirst(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Println(os.Args[1:]) }\n",
	})
	for _, args := range [][]string{
		{"run", "-o", "prof.pb.gz", "--", "-n", "5"},
		{"run", "--", "-n", "5"},
		{"run", "-o", "prof.pb.gz", ".", "--", "-n", "5"},
	} {
		code, stdout, stderr := spanprofIn(t, dir, offline, args...)
		if code != exitOK || stdout != "[-n 5]\n" {
			t.Errorf("spanprof %s: status %d, stdout %q, want 0 and %q\n%s", strings.Join(args, " "), code, stdout, "[-n 5]\n", stderr)
		}
	}
}

// TestTestPackageWithoutTests: as with go test, a package without test
// files is "[no test files]" and gets no profile; a generated TestMain used
// to make it a test binary that wrote an empty one (found on
// github.com/golang/groupcache, whose generated protobuf packages have no
// tests).
func TestTestPackageWithoutTests(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"a/a.go":      "package a\n\n//go:noinline\nfunc Two() int { return 2 }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(\"two\")\n\t}\n}\n",
		"b/b.go":      "package b\n\n//go:noinline\nfunc Three() int { return 3 }\n",
	})
	code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-o", "prof.pb.gz", "./...")
	if code != exitOK {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	if !regexp.MustCompile(`\?\s+example.com/m/b\s+\[no test files\]`).MatchString(stdout) {
		t.Errorf("go test's output does not say b has no test files:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "prof.a.pb.gz")); err != nil {
		t.Errorf("no profile for a: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "prof.b.pb.gz")); err == nil {
		t.Error("a profile for b, which has no tests")
	}
}

// burnTests runs the 8-way errgroup of burnMain in each of two tests: a
// test binary hands the engine from the TestMain goroutine to each test's.
const burnTests = `package m

import (
	"testing"

	"golang.org/x/sync/errgroup"
)

func burn(n int) int {
	x := 0
	for i := range n {
		x += i ^ (x >> 3)
	}
	return x
}

func fan() int {
	var g errgroup.Group
	counts := make([]int, 8)
	for i := range counts {
		g.Go(func() error {
			counts[i] = burn(10_000_000)
			return nil
		})
	}
	g.Wait()
	return counts[0]
}

func TestA(t *testing.T) { fan() }

func TestB(t *testing.T) { fan() }
`

// TestTestPerThreadMeasures checks that a measure of one OS thread counts
// the goroutine that runs each test: opened on the TestMain goroutine's
// thread and never rebound, task-clock read 373 µs of work where the tests
// ran 420 ms, almost every site 0.
func TestTestPerThreadMeasures(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"m.go": "package m\n", "m_test.go": burnTests})
	measures := []string{perf.CPU, perf.TaskClock}
	if instructionsOpen() {
		measures = append(measures, perf.Instructions)
	}
	for _, measure := range measures {
		if measure == perf.TaskClock {
			runtime.LockOSThread()
			m, err := perf.Open(measure)
			runtime.UnlockOSThread()
			if err != nil {
				t.Logf("%s: %v", measure, err)
				continue
			}
			m.Close()
		}
		// Two fans of 8 equal children, one after the other: span two
		// children, parallelism 8. A loaded machine can stretch one burn
		// of a fan by a fifth, which moves the parallelism as much (the
		// semaphore test saw 6.64 for 8 once), so up to three runs: the
		// parallelism must come within 15% in one, the rest hold in each.
		for run := 1; ; run++ {
			code, _, stderr := spanprofIn(t, dir, offline, "test", "-measure", measure, "-o", "prof.pb.gz", ".")
			if code != exitOK {
				t.Fatalf("spanprof test -measure %s: status %d\n%s", measure, code, stderr)
			}
			p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
			if err != nil {
				t.Fatal(err)
			}
			if p.Spawns != 16 {
				t.Errorf("%s: %d spawns, want 16", measure, p.Spawns)
			}
			if measure != perf.Instructions && p.Work < int64(20*time.Millisecond) {
				t.Errorf("%s: work %v for 16 loops of 10 million iterations: the tests' threads were not measured", measure, time.Duration(p.Work))
			}
			if within(p.Parallelism(), 8, 0.15) {
				break
			}
			if run == 3 {
				t.Errorf("%s: work %d, span %d, parallelism %.2f in the third run; want 8 within 15%%\n%s",
					measure, p.Work, p.Span, p.Parallelism(), stderr)
				break
			}
			t.Logf("%s: parallelism %.2f in run %d, want 8 within 15%%; running again", measure, p.Parallelism(), run)
		}
	}
}

// limitedMain runs eight equal tasks in an errgroup that lets two run at
// once, then eight under a limit of one.
const limitedMain = `package main

import (
	"fmt"

	"golang.org/x/sync/errgroup"
)

func burn(n int) int {
	x := 0
	for i := range n {
		x += i ^ (x >> 3)
	}
	return x
}

func fan(limit int) int {
	var g errgroup.Group
	g.SetLimit(limit)
	counts := make([]int, 8)
	for i := range counts {
		g.Go(func() error {
			counts[i] = burn(5_000_000)
			return nil
		})
	}
	g.Wait()
	return counts[0]
}

func main() { fmt.Println(fan(LIMIT)) }
`

// TestRunGroupLimit (issue 15): an errgroup's SetLimit bounds its
// parallelism, and serial mode, which runs the tasks one after another,
// models it: eight equal tasks read a parallelism of 2 under SetLimit(2)
// (5.4 to 7.8 before) and 1 under SetLimit(1) (3.9 before).
func TestRunGroupLimit(t *testing.T) {
	needGo(t)
	t.Parallel()
	for _, c := range []struct {
		limit string
		par   float64
	}{{"2", 2}, {"1", 1}} {
		dir := module(t, map[string]string{"main.go": strings.Replace(limitedMain, "LIMIT", c.limit, 1)})
		code, _, stderr := spanprofIn(t, dir, offline, "run", "-o", "prof.pb.gz", ".")
		if code != exitOK {
			t.Fatalf("SetLimit(%s): status %d\n%s", c.limit, code, stderr)
		}
		p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Spawns != 8 || !within(p.Parallelism(), c.par, 0.15) {
			t.Errorf("SetLimit(%s): spawns %d, work %d, span %d, parallelism %.2f; want 8 spawns and parallelism %.0f within 15%%\n%s",
				c.limit, p.Spawns, p.Work, p.Span, p.Parallelism(), c.par, stderr)
		}
	}
}

// inlinedQuicksort sorts with a partition, an insertion sort and an input
// fill that the compiler inlines: each has a loop.
const inlinedQuicksort = `package main

import (
	"fmt"
	"sync"
)

func partition(a []int) int {
	p := a[len(a)-1]
	i := 0
	for j := range len(a) - 1 {
		if a[j] < p {
			a[i], a[j] = a[j], a[i]
			i++
		}
	}
	a[i], a[len(a)-1] = a[len(a)-1], a[i]
	return i
}

func insertion(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func pqsort(a []int) {
	if len(a) <= 32 {
		insertion(a)
		return
	}
	m := partition(a)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pqsort(a[:m])
	}()
	pqsort(a[m+1:])
	wg.Wait()
}

func fill(a []int) {
	x := uint64(1)
	for i := range a {
		x = x*6364136223846793005 + 1442695040888963407
		a[i] = int(x >> 33)
	}
}

func main() {
	a := make([]int, 1_000_000)
	fill(a)
	pqsort(a)
	for i := 1; i < len(a); i++ {
		if a[i] < a[i-1] {
			panic("not sorted")
		}
	}
	fmt.Println("sorted", len(a))
}
`

// TestRunInlinedCalleeNamed (issue 15): a callee the compiler inlines is
// instrumented all the same when it loops, so the line that bounds the
// span stays in the profile. Before, a quicksort whose partition is inlined
// named pqsort's own strands, 13.7% of the span, and partition nowhere;
// now partition is the sort's top site by local span on span. (The input's
// fill, mostly page faults on its first touch, is the set-up's.)
func TestRunInlinedCalleeNamed(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": inlinedQuicksort})
	code, _, stderr := spanprofIn(t, dir, offline, "run", "-o", "prof.pb.gz", ".")
	if code != exitOK {
		t.Fatalf("status %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "inlines the callee") {
		t.Errorf("a looping callee was left out because the compiler inlines it:\n%s", stderr)
	}
	p, err := spanprofile.ReadFile(filepath.Join(dir, "prof.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var top spanprofile.SiteMeasurement
	for _, s := range p.BySite() {
		if s.Site.Kind == spanprofile.KindRoot || s.Site.Func == "main.fill" {
			continue
		}
		if s.OnSpan.Local.Span > top.OnSpan.Local.Span {
			top = s
		}
	}
	if top.Site.Func != "main.partition" {
		t.Errorf("the sort's top site by local span on span is %s (%d of span %d), want main.partition\n%s", top.Site.Func, top.OnSpan.Local.Span, p.Span, stderr)
	}
}
