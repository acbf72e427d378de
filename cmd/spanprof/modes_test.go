package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

// Programs whose goroutines talk to each other are not serially elidable:
// run inline, a consumer waits for a producer that its continuation would
// start. Serial mode must finish them (running such spawns as goroutines)
// and parallel mode must profile them sensibly (docs/modes.md).
var talkingPrograms = map[string]string{
	"prodcons": `package main

import (
	"fmt"
	"sync"
)

func produce(ch chan<- int, n int) {
	for i := range n {
		ch <- i * i
	}
	close(ch)
}

func main() {
	ch := make(chan int)
	var wg sync.WaitGroup
	sum := 0
	wg.Add(2)
	go func() { defer wg.Done(); produce(ch, 1000) }()
	go func() {
		defer wg.Done()
		for v := range ch {
			sum += v
		}
	}()
	wg.Wait()
	fmt.Println("sum", sum)
}
`,
	"workerpool": `package main

import (
	"fmt"
	"sync"
)

func square(x int) int { return x * x }

func main() {
	jobs := make(chan int)
	results := make(chan int, 100)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for j := range jobs {
				results <- square(j)
			}
		})
	}
	for i := range 100 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	fmt.Println("sum", sum)
}
`,
	"siblings": `package main

import (
	"fmt"
	"sync"
)

func main() {
	ready := make(chan struct{})
	var wg sync.WaitGroup
	got := 0
	wg.Add(2)
	go func() { defer wg.Done(); <-ready; got++ }()
	go func() { defer wg.Done(); close(ready) }()
	wg.Wait()
	fmt.Println("got", got)
}
`,
}

func TestTalkingGoroutinesInBothModes(t *testing.T) {
	for name, src := range talkingPrograms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := module(t, map[string]string{"main.go": src})
			want := map[string]string{"prodcons": "sum 332833500", "workerpool": "sum 328350", "siblings": "got 1"}[name]
			out := filepath.Join(t.TempDir(), "p.pb.gz")
			if code, stdout, stderr := spanprofIn(t, dir, []string{"GOFLAGS=", "GOWORK=off"}, "run", "-mode", "elision", "-o", out, "."); code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stderr, "wrote no profile") {
				// Elision writes no profile, which run says after the
				// program's own output; that is no failure.
				t.Errorf("elision mode: status %d, stdout %q, want 0, %q and no profile\n%s", code, stdout, want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("elision mode wrote %s", out)
			}
			for _, mode := range []string{"serial", "parallel"} {
				out := filepath.Join(t.TempDir(), "p.pb.gz")
				code, stdout, stderr := spanprofIn(t, dir, []string{"GOFLAGS=", "GOWORK=off"}, "run", "-mode", mode, "-o", out, ".")
				if code != exitOK || !strings.Contains(stdout, want) {
					t.Fatalf("%s mode: status %d, stdout %q, want %q\n%s", mode, code, stdout, want, stderr)
				}
				p, err := spanprofile.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if p.Work <= 0 || p.Span <= 0 || p.Span > p.Work || p.Spawns < 2 {
					t.Errorf("%s mode: work %d, span %d, %d spawns: want 0 < span <= work and every goroutine counted", mode, p.Work, p.Span, p.Spawns)
				}
				if p.Mode != mode {
					t.Errorf("profile says mode %q, want %s", p.Mode, mode)
				}
			}
		})
	}
}
