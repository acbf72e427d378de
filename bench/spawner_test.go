package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// childEnv makes the test binary a child for the runner to run: "ok" exits
// 0 at once, "fail" writes to standard error and exits 3.
const childEnv = "BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(spawnerEnv) != "" {
		os.Exit(spawnerMain())
	}
	switch os.Getenv(childEnv) {
	case "ok":
		fmt.Println("ran")
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "the child failed")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// testRunner returns a runner whose spawner runs the test binary as a child
// in mode child, and the binaries to pass it.
func testRunner(t *testing.T, child string) (*runner, binaries) {
	t.Helper()
	sp, err := startSpawner()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sp.close(); err != nil {
			t.Errorf("closing the spawner: %v", err)
		}
	})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{dir: t.TempDir(), procs: 1, parProcs: 1, env: append(baseEnv(os.Environ()), childEnv+"="+child), sp: sp}
	b := binaries{name: "child", dir: r.dir}
	b.bin[plain] = self
	return r, b
}

// TestSpawnerFloor: a run's peak RSS is its own, not the driver's. The
// driver grows to 256 MiB after starting the spawner; a child started by
// the driver itself would report at least that on Linux (Go starts it with
// vfork, and exec keeps the shared memory's peak), one started by the
// spawner reports the few MiB it uses.
func TestSpawnerFloor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the floor is Linux's ru_maxrss; other systems count it their own way")
	}
	r, b := testRunner(t, "ok")
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}

	direct := exec.Command(b.bin[plain])
	direct.Env = r.env
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	s, stdout, err := r.run(b, plain)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ballast)
	if string(stdout) != "ran\n" {
		t.Errorf("stdout %q, want %q", stdout, "ran\n")
	}
	t.Logf("peak RSS: %d KiB started by the driver, %d KiB by the spawner", maxRSS(direct.ProcessState)>>10, s.maxRSS>>10)
	if s.maxRSS <= 0 || s.maxRSS >= 64<<20 {
		t.Errorf("the spawner's child reports a peak RSS of %d KiB; want it above 0 and below 64 MiB, far from the driver's 256", s.maxRSS>>10)
	}
	if s.wall <= 0 || s.cpu < 0 {
		t.Errorf("wall %v, cpu %v: want a positive wall time", s.wall, s.cpu)
	}
}

// TestSpawnerErrors: a run that fails names its exit and ends with its
// standard error; one that cannot start says so.
func TestSpawnerErrors(t *testing.T) {
	r, b := testRunner(t, "fail")
	_, _, err := r.run(b, plain)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.HasSuffix(err.Error(), "the child failed") {
		t.Errorf("a failing run: error %v, want its exit status and its standard error", err)
	}
	b.bin[plain] = b.bin[plain] + ".missing"
	_, _, err = r.run(b, plain)
	if err == nil || !strings.Contains(err.Error(), ".missing") {
		t.Errorf("a binary that does not exist: error %v, want one naming it", err)
	}
	// The spawner serves the next request after both.
	b.bin[plain] = strings.TrimSuffix(b.bin[plain], ".missing")
	r.env = append(baseEnv(os.Environ()), childEnv+"=ok")
	if _, stdout, err := r.run(b, plain); err != nil || string(stdout) != "ran\n" {
		t.Errorf("a run after the failures: %q, %v", stdout, err)
	}
}
