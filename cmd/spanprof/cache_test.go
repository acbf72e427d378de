package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/rewrite"
	"github.com/spanprof/spanprof/spanprofile"
)

const cachedSum = `package sum

import "sync"

func Sum(xs []int) int {
	var wg sync.WaitGroup
	var a, b int
	h := len(xs) / 2
	wg.Go(func() { a = add(xs[:h]) })
	b = add(xs[h:])
	wg.Wait()
	return a + b
}

func add(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
`

// TestRewriteCached: a second spanprof test of an unchanged module takes
// the rewrite from the cache (it says so) and profiles as the first did; a
// change to a file's bytes, a build tag, another spanprof, or -a rewrites
// anew; going back to the old bytes finds the old rewrite; and
// SPANPROF_CACHE=off writes no entry.
func TestRewriteCached(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{
		"sum/sum.go":      cachedSum,
		"sum/sum_test.go": "package sum\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum([]int{1, 2, 3, 4}) != 10 {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n",
		"sum/extra.go":    "//go:build extra\n\npackage sum\n\nimport \"sync\"\n\nfunc Extra() {\n\tvar wg sync.WaitGroup\n\twg.Go(func() {})\n\twg.Wait()\n}\n",
	})
	cache := t.TempDir()
	entries := func() int {
		t.Helper()
		des, err := os.ReadDir(cache)
		if err != nil {
			t.Fatal(err)
		}
		return len(slices.DeleteFunc(des, func(d os.DirEntry) bool { return len(d.Name()) != 64 }))
	}
	stats := regexp.MustCompile(`(?m)^spanprof: (\d+ spawns?), .* instrumented.*$`)
	// step runs spanprof test and checks whether the rewrite came from
	// the cache and how many spawn sites it instrumented.
	step := func(what string, cached bool, spawns string, env []string, flags ...string) {
		t.Helper()
		// The same -o each time: the profile's name is written into the
		// generated TestMain, and so is part of the key.
		out := filepath.Join(dir, "p.pb.gz")
		os.Remove(out)
		args := append(append([]string{"test", "-count", "1", "-o", out}, flags...), "./sum")
		code, stdout, stderr := spanprofIn(t, dir, append(append(slices.Clone(offline), rewrite.EnvCache+"="+cache), env...), args...)
		if code != exitOK {
			t.Fatalf("%s: status %d\n%s\n%s", what, code, stdout, stderr)
		}
		m := stats.FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("%s: no summary of the rewrite in\n%s", what, stderr)
		}
		if got := strings.HasSuffix(m[0], "(rewrite cached)"); got != cached || m[1] != spawns {
			t.Errorf("%s: %q; want cached %v, %s", what, m[0], cached, spawns)
		}
		if _, err := spanprofile.ReadFile(out); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	step("first run", false, "1 spawn", nil)
	if n := entries(); n != 1 {
		t.Errorf("after the first run the cache has %d entries, want 1", n)
	}
	step("second run", true, "1 spawn", nil)

	name := filepath.Join(dir, "sum", "sum.go")
	edited := strings.Replace(cachedSum, "\tb = add(xs[h:])\n", "\twg.Go(func() { b = add(xs[h:]) })\n", 1)
	if err := os.WriteFile(name, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	step("a file edited", false, "2 spawns", nil)
	step("the edited file again", true, "2 spawns", nil)
	if err := os.WriteFile(name, []byte(cachedSum), 0o644); err != nil {
		t.Fatal(err)
	}
	step("the file as it was", true, "1 spawn", nil)

	tagged := []string{"GOFLAGS=-mod=mod -tags=extra"}
	step("-tags=extra", false, "2 spawns", tagged)
	step("-tags=extra again", true, "2 spawns", tagged)
	step("another spanprof", false, "1 spawn", []string{"SPANPROF_TEST_TOOLID=other"})
	step("-a", false, "1 spawn", nil, "-a")
	step("after -a", true, "1 spawn", nil)

	before := entries()
	if err := os.WriteFile(name, []byte(cachedSum+"\n// not cached\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("SPANPROF_CACHE=off", false, "1 spawn", []string{rewrite.EnvCache + "=off"})
	if n := entries(); n != before {
		t.Errorf("SPANPROF_CACHE=off: the cache went from %d entries to %d", before, n)
	}
}
