package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spanprof/spanprof/spanprofile"
)

// loopProgram prints "3 3 3" when its module's go line is below 1.22, where
// a for loop's variable is shared by its iterations, and "0 1 2" from 1.22.
const loopProgram = `package main

import "fmt"

func call(f func()) { f() }

func main() {
	var fs []func()
	for i := 0; i < 3; i++ {
		fs = append(fs, func() { fmt.Print(i, " ") })
	}
	for _, f := range fs {
		call(f)
	}
	fmt.Println()
}
`

// writeFiles writes files (name → content) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plainGo is the environment of the plain go command in a rewritten tree:
// no network, go.mod as it is, and the go.work that rewrite -w wrote.
var plainGo = []string{"GOPROXY=off", "GOFLAGS=", "GOWORK="}

// TestLanguageVersionKept: the profiled program means what the program
// means. A module that declares go 1.21 prints "3 3 3" under go run; it
// printed "0 1 2" under spanprof run and after rewrite -w, which raised its
// go line to the runtime's. Now go.mod stays as it is, rewrite -w writes
// a go.work with relative paths only (the rewritten tree builds anywhere:
// a copy of it builds too), and the rewritten program run without a
// profile request writes no profile.
//
// A module below go1.18 cannot call the runtime's generic functions: the
// rewrite adds go1.18 to the build constraint of each file it instruments
// (folding a "// +build" line into it), and the program still means what
// it meant. A package doc comment on the file's first line, below the
// added constraint, failed the rewrite ("formatting the rewritten file moved
// its lines": gofmt moved the //line directive above it to its end).
func TestLanguageVersionKept(t *testing.T) {
	needGo(t)
	t.Parallel()
	for _, c := range []struct{ goLine, header, want string }{
		{"1.21", "", "3 3 3"},
		{"1.22", "//go:build !nothing\n\n// Command loop.\n", "0 1 2"},
		{"1.16", "// +build !nothing\n\n", "3 3 3"},
		{"1.20", "// +build !nothing\n\n", "3 3 3"},
		{"1.13", "// Command loop prints\n// what its closures saw.\n", "3 3 3"},
	} {
		t.Run("go"+c.goLine, func(t *testing.T) {
			t.Parallel()
			languageVersionKept(t, c.goLine, c.header, c.want)
		})
	}
}

func languageVersionKept(t *testing.T, goLine, header, want string) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/loop\n\ngo " + goLine + "\n", "main.go": header + loopProgram})
	if out, err := goIn(t, dir, plainGo, "run", "."); err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("go run: %v, %q; want %s", err, out, want)
	}
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	if code, stdout, stderr := spanprofIn(t, dir, offline, "run", "-o", out, "."); code != exitOK || strings.TrimSpace(stdout) != want {
		t.Errorf("spanprof run: status %d, stdout %q, want %s\n%s", code, stdout, want, stderr)
	}

	before := treeHashes(t, dir)
	if code, _, stderr := spanprofIn(t, dir, offline, "rewrite", "-w", "."); code != exitOK {
		t.Fatalf("rewrite -w: status %d\n%s", code, stderr)
	}
	changed := diffTrees(before, treeHashes(t, dir))
	if slices.Contains(changed, "go.mod") || slices.Contains(changed, "go.sum") || !slices.Contains(changed, "go.work") {
		t.Errorf("rewrite -w changed %v: want go.work added, go.mod and go.sum as they were", changed)
	}
	work, err := os.ReadFile(filepath.Join(dir, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := os.UserCacheDir()
	if bytes.Contains(work, []byte(dir)) || cache != "" && bytes.Contains(work, []byte(cache)) ||
		!bytes.Contains(work, []byte("\t.\n\t./.spanprof/runtime\n")) || !bytes.Contains(work, []byte("godebug default=go"+goLine)) {
		t.Errorf("go.work names a path of this machine, or lacks the module, the runtime or its GODEBUG defaults:\n%s", work)
	}
	// The rewritten tree, here and copied elsewhere: the program's
	// meaning, and no profile unless asked for.
	elsewhere := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(elsewhere, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, elsewhere} {
		if out, err := goIn(t, d, plainGo, "run", "."); err != nil || strings.TrimSpace(out) != want {
			t.Errorf("go run of the rewritten tree in %s: %v, %q; want %s", d, err, out, want)
		}
		if _, err := os.Stat(filepath.Join(d, "spanprof.pb.gz")); err == nil {
			t.Errorf("go run of the rewritten program wrote a profile nobody asked for")
		}
		if out, err := goIn(t, d, plainGo, "vet", "./..."); err != nil {
			t.Errorf("go vet of the rewritten tree: %v\n%s", err, out)
		}
	}
	if code, _, stderr := spanprofIn(t, dir, offline, "rewrite", "-undo"); code != exitOK {
		t.Fatalf("rewrite -undo: status %d\n%s", code, stderr)
	}
	if d := diffTrees(before, treeHashes(t, dir)); len(d) > 0 {
		t.Errorf("after -undo these differ: %v", d)
	}
}

// TestRewrittenTestsRunAsWritten: after rewrite -w, a plain go test (no
// -spanprofile) runs the tests as written: spawns are goroutines, parallel
// tests run in parallel, nothing is profiled. Before, the tests ran in
// serial mode: a spawn whose wait the analyzer cannot see deadlocked inline
// and the watchdog stopped the tests, and two parallel tests that meet each
// other could never both run. An example whose last statement is an
// instrumented call statement keeps its "// Output:" block last (the CallEnd and a
// //line directive went below it, and go test's vet refused to build:
// conc's pool and stream tests), and the test runs under spanprof test too.
func TestRewrittenTestsRunAsWritten(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"q/q.go": chanPkg,
		"m.go":   "package m\n\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n\nvar sink int\n\n//go:noinline\nfunc Twice(n int) int { return 2 * n }\n\n//go:noinline\nfunc Keep(n int) { sink = n }\n",
		"example_test.go": `package m

import "fmt"

func ExampleTwice() {
	fmt.Println(Twice(2))
	Keep(3) // a call without results: CallBegin and CallEnd around it
	// Output:
	// 4
}
`,
		"m_test.go": `package m

import (
	"sync"
	"testing"

	"example.com/m/q"
)

func TestHiddenChannel(t *testing.T) {
	var wg sync.WaitGroup
	got := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		got = q.Take() + Sum(3)
	}()
	q.Put(42)
	wg.Wait()
	if got != 45 {
		t.Fatal(got)
	}
}

var meet = make(chan int)

func TestPing(t *testing.T) {
	t.Parallel()
	meet <- 1
}

func TestPong(t *testing.T) {
	t.Parallel()
	<-meet
}
`,
	})
	if code, stdout, stderr := spanprofIn(t, dir, offline, "test", "-count", "1", "-o", filepath.Join(t.TempDir(), "p.pb.gz"), ".", "--", "-run", "Example", "-v"); code != exitOK || !strings.Contains(stdout, "--- PASS: ExampleTwice") {
		t.Errorf("spanprof test of the example: status %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := spanprofIn(t, dir, offline, "rewrite", "-w", "./..."); code != exitOK {
		t.Fatalf("rewrite -w: status %d\n%s", code, stderr)
	}
	env := append(slices.Clone(plainGo), "GOMAXPROCS=4") // -parallel 4
	if out, err := goIn(t, dir, env, "test", "-count=1", "-timeout=60s", "./..."); err != nil {
		t.Fatalf("go test of the rewritten tests: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "spanprof.pb.gz")); err == nil {
		t.Error("go test without -spanprofile wrote a profile")
	}
}

// spanprofTimed runs spanprof as spanprofIn does, killed after a minute: a
// run that hangs fails the test instead of hanging it.
func spanprofTimed(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "SPANPROF_TEST_COMMAND=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("spanprof %s hung (killed after %v)\n%s", strings.Join(args, " "), took, errOut.String())
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("spanprof %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String(), took
}

// deadlockProgram deadlocks by itself: Go stops it with "all goroutines
// are asleep" and status 2.
const deadlockProgram = `package main

import (
	"fmt"
	"sync"
)

func work(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func main() {
	fmt.Println(work(1000))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		work(10)
	}()
	wg.Wait()
}
`

// TestRunProgramDeadlock: a program that deadlocks by itself stops under
// spanprof run as Go stops it, in both modes, with Go's message, the
// program's status 2 shown, and the profile of what ran, marked deadlock.
// It hung forever: the watchdog's timer kept Go's detector from firing.
func TestRunProgramDeadlock(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": deadlockProgram})
	for _, mode := range []string{"serial", "parallel"} {
		out := filepath.Join(t.TempDir(), "p.pb.gz")
		code, stdout, stderr, took := spanprofTimed(t, dir, offline, "run", "-mode", mode, "-o", out, ".")
		t.Logf("%s mode: status %d after %v (building included)", mode, code, took.Round(time.Millisecond))
		if code != exitFailed || !strings.Contains(stdout, "499500") {
			t.Errorf("%s mode: status %d, stdout %q; want %d and the program's output", mode, code, stdout, exitFailed)
		}
		for _, want := range []string{"fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [sync.WaitGroup.Wait", "main.main()", "exit status 2"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s mode: stderr lacks %q:\n%s", mode, want, stderr)
			}
		}
		if strings.Contains(stderr, "shadow.watch") {
			t.Errorf("%s mode: the goroutines printed include spanprof's watchdog:\n%s", mode, stderr)
		}
		p, err := spanprofile.ReadFile(out)
		if err != nil {
			t.Errorf("%s mode: no profile: %v", mode, err)
			continue
		}
		if p.Ended != "deadlock" || p.Spawns != 1 {
			t.Errorf("%s mode: profile ended %q with %d spawns, want deadlock and 1", mode, p.Ended, p.Spawns)
		}
	}
}

// TestRunTimerIsNoDeadlock: a program whose goroutines all wait for a timer
// is not deadlocked, and runs to its end.
func TestRunTimerIsNoDeadlock(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": `package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	var wg sync.WaitGroup
	done := make(chan bool)
	wg.Go(func() { <-done })
	time.AfterFunc(1500*time.Millisecond, func() { close(done) })
	wg.Wait()
	fmt.Println("woke")
}
`})
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	code, stdout, stderr, _ := spanprofTimed(t, dir, offline, "run", "-mode", "parallel", "-o", out, ".")
	if code != exitOK || !strings.Contains(stdout, "woke") {
		t.Fatalf("status %d, stdout %q; want 0 and woke\n%s", code, stdout, stderr)
	}
	if p, err := spanprofile.ReadFile(out); err != nil {
		t.Error(err)
	} else if p.Partial() {
		t.Errorf("profile ended %q; want a complete run", p.Ended)
	}
}

// TestRunInterrupted: SIGINT or SIGTERM to spanprof run or test reaches the
// program, which writes the profile of what ran (marked signal SIGINT or
// SIGTERM) and dies of it; spanprof removes its temporary directories (the
// build's and the strand files') and exits with 130 or 143.
func TestRunInterrupted(t *testing.T) {
	needGo(t)
	t.Parallel()
	const loop = `
func work(n int) int {
	s := 0
	for i := range n {
		s += i * i % 7
	}
	return s
}

func loop() {
	fmt.Println("ready")
	for {
		var wg sync.WaitGroup
		wg.Go(func() { work(100000) })
		work(1000)
		wg.Wait()
		time.Sleep(time.Millisecond)
	}
}
`
	const imports = "import (\n\t\"fmt\"\n\t\"sync\"\n\t\"time\"\n)\n"
	dir := module(t, map[string]string{
		"main.go":     "package main\n\n" + imports + loop + "\nfunc main() { loop() }\n",
		"t/t.go":      "package t\n\n" + imports + loop,
		"t/t_test.go": "package t\n\nimport \"testing\"\n\nfunc TestLoop(t *testing.T) { loop() }\n",
	})
	for _, c := range []struct {
		args []string
		sig  syscall.Signal
		name string
		code int
	}{
		{[]string{"run", "."}, syscall.SIGINT, "SIGINT", 130},
		{[]string{"test", "./t", "--", "-v"}, syscall.SIGINT, "SIGINT", 130},
		{[]string{"run", "."}, syscall.SIGTERM, "SIGTERM", 143},
		{[]string{"test", "./t", "--", "-v"}, syscall.SIGTERM, "SIGTERM", 143},
	} {
		args := c.args
		t.Run(args[0]+"/"+c.name, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(t.TempDir(), "p.pb.gz")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], append([]string{args[0], "-o", out}, args[1:]...)...)
			cmd.Dir = dir
			cmd.Env = append(append(os.Environ(), "SPANPROF_TEST_COMMAND=1", "TMPDIR="+tmp), offline...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ready := make(chan bool)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if sc.Text() == "ready" {
						close(ready)
						break
					}
				}
				for sc.Scan() {
				}
			}()
			select {
			case <-ready:
			case <-ctx.Done():
				t.Fatalf("the program never got ready\n%s", stderr.String())
			}
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(c.sig)
			cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("spanprof %s hung after %s\n%s", args[0], c.name, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("status %d, want %d\n%s", code, c.code, stderr.String())
			}
			if p, err := spanprofile.ReadFile(out); err != nil {
				t.Errorf("no profile: %v\n%s", err, stderr.String())
			} else if p.Ended != "signal "+c.name || p.Spawns == 0 {
				t.Errorf("profile ended %q with %d spawns; want what ran, marked signal %s", p.Ended, p.Spawns, c.name)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "spanprof-*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestRunExitEnded: a program that ends with os.Exit(3) in an instrumented
// package gets its profile, which says so.
func TestRunExitEnded(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": "package main\n\nimport (\n\t\"os\"\n\t\"sync\"\n)\n\nfunc main() {\n\tvar wg sync.WaitGroup\n\twg.Go(func() {})\n\twg.Wait()\n\tos.Exit(3)\n}\n"})
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	code, _, stderr, _ := spanprofTimed(t, dir, offline, "run", "-o", out, ".")
	if code != exitFailed || !strings.Contains(stderr, "exit status 3") || !strings.Contains(stderr, "the run did not complete (exit 3)") {
		t.Errorf("status %d, want %d, the program's status and the report's warning\n%s", code, exitFailed, stderr)
	}
	if p, err := spanprofile.ReadFile(out); err != nil || p.Ended != "exit 3" {
		t.Errorf("profile: %v; want it to say exit 3", err)
	}
}
