package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spanprof/spanprof/spanprofile"
)

// TestRunDiesWithSpanprof: when spanprof run is killed outright (SIGKILL,
// as a CI runner's timeout does), the program it runs gets SIGTERM, writes
// the profile of what ran and exits. Before, it ran on, orphaned: a looping
// test program left by a killed spanprof burned a CPU for 18 minutes.
func TestRunDiesWithSpanprof(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": `package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

func work(n int) int {
	s := 0
	for i := range n {
		s += i * i % 7
	}
	return s
}

func main() {
	fmt.Println("pid", os.Getpid())
	for {
		var wg sync.WaitGroup
		wg.Go(func() { work(100000) })
		work(1000)
		wg.Wait()
		time.Sleep(time.Millisecond)
	}
}
`})
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "run", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "SPANPROF_TEST_COMMAND=1"), offline...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
				n, _ := strconv.Atoi(p)
				pids <- n
			}
		}
	}()
	var pid int
	select {
	case pid = <-pids:
	case <-ctx.Done():
		t.Fatalf("the program never started\n%s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the program (pid %d) outlived spanprof by 20 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p, err := spanprofile.ReadFile(out); err != nil {
		t.Errorf("no profile: %v", err)
	} else if p.Ended != "signal SIGTERM" {
		t.Errorf("profile ended %q, want signal SIGTERM", p.Ended)
	}
}
