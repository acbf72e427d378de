package shadow

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
)

func TestStackCapFor(t *testing.T) {
	for _, c := range []struct {
		limit int
		want  uintptr
	}{
		{1_000_000_000, 512<<20 - 32<<20}, // the default: stacks of 512 MiB at most
		{1 << 30, 1<<30 - 64<<20},         // a power of two is itself usable
		{1<<30 - 1, 512<<20 - 32<<20},
		{8 << 20, 8<<20 - 512<<10},
		{1 << 20, 1<<20 - 256<<10},      // the margin is at least 256 KiB
		{4_000_000_000, 1<<30 - 64<<20}, // the runtime's ceiling: 2e9
		{512 << 10, ^uintptr(0)},        // no room for a margin: no check
		{0, ^uintptr(0)},
	} {
		if got := stackCapFor(c.limit); got != c.want {
			t.Errorf("stackCapFor(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

// TestTooDeep runs, in a child process, a chain of nested spawns that
// needs more stack than the limit allows, and checks that the run stops
// with one line naming the spawn's site, status 2 and the profile of what
// ran, instead of the runtime's stack overflow.
func TestTooDeep(t *testing.T) {
	if os.Getenv("SHADOW_TOODEEP_CHILD") == "1" {
		debug.SetMaxStack(4 << 20)
		base := register([]SiteInfo{{File: "chain.go", Line: 7, Column: 2, Func: "shadow.chainLink", Caller: "shadow.chainLink", Kind: spanprofile.KindSpawn}})
		o, err := optionsFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if err := start(o); err != nil {
			t.Fatal(err)
		}
		chainLink(base, 1_000_000)
		t.Fatal("a chain of 10⁶ nested spawns ran within a 4 MiB stack")
	}
	if depthOff != 0 {
		t.Skip("depths are not measured here")
	}
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	cmd := exec.Command(os.Args[0], "-test.run=^TestTooDeep$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "SHADOW_TOODEEP_CHILD=1", envOut+"="+out, envMeasure+"="+steadyMeasure())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("child: %v, want exit status 2; stderr:\n%s", err, stderr.String())
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "spanprof: chain.go:7:2: serial mode runs each spawn inline") ||
		!strings.Contains(msg, "4194304 bytes") || strings.Contains(msg, "fatal error") {
		t.Errorf("stderr is not the one line naming the site and the limit:\n%s", msg)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// 4 MiB less the 256 KiB margin, at least 16 bytes a link: fewer than
	// 250,000 spawns ran, but many.
	if p.Ended != "stack" || p.Spawns < 1000 || p.Spawns > 250_000 {
		t.Errorf("profile ended %q after %d spawns, want \"stack\" after 1000 to 250,000", p.Ended, p.Spawns)
	}
}

// chainLink spawns the rest of a chain of n links at site, inline in
// serial mode: a recursion n deep.
//
//go:noinline
func chainLink(site SiteID, n int) {
	if n > 0 {
		Go(site, func() { chainLink(site, n-1) })
	}
}
