package rewrite

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// cacheModule writes a module whose package p spawns, with a test file, a
// file built only with the tag extra, and a dependency replaced by a local
// directory, and returns the module's directory.
func cacheModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"dep/go.mod": "module example.com/dep\n\ngo 1.22\n",
		"dep/dep.go": "package dep\n\nfunc Half(n int) int { return n / 2 }\n",
		"m/go.mod":   "module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n",
		"m/p/p.go": `package p

import (
	"sync"

	"example.com/dep"
)

func Sum(xs []int) int {
	var wg sync.WaitGroup
	var a, b int
	h := dep.Half(len(xs))
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
`,
		"m/p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum([]int{1, 2, 3}) != 6 {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n",
		"m/p/extra.go":  "//go:build extra\n\npackage p\n\nfunc Extra() int { return 1 }\n",
	})
	return filepath.Join(root, "m")
}

// TestCacheKey: the key is the same for the same inputs, run after run (a
// go env value that names a new temporary directory each time made every
// key new), and changes with any input: a file's bytes, one of a local
// replacement's, a build tag, GOFLAGS, go.mod, spanprof's identity, tests
// or not, the caller's extra inputs; and it comes back with the bytes.
func TestCacheKey(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := cacheModule(t)
	c := &Cache{Dir: t.TempDir(), ToolID: "tool-1"}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	cfg := Config{Dir: dir, Env: env, Tests: true, Mode: Overlay, Deps: true}
	key := func(c *Cache, cfg Config, extra ...string) string {
		t.Helper()
		k, err := c.Key(cfg, []string{"./..."}, extra...)
		if err != nil {
			t.Fatal(err)
		}
		return k.String()
	}
	base := key(c, cfg)
	if again := key(c, cfg); again != base {
		t.Fatalf("the same inputs gave two keys: %s, %s", base, again)
	}
	edit := func(name, from, to string) func() {
		t.Helper()
		old, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, bytes.Replace(old, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.WriteFile(name, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	differs := func(what string, got string) {
		t.Helper()
		if got == base {
			t.Errorf("%s: the key did not change", what)
		}
	}
	sameAgain := func(what string) {
		t.Helper()
		if got := key(c, cfg); got != base {
			t.Errorf("%s undone: the key %s is not the first, %s", what, got, base)
		}
	}

	for _, e := range []struct{ what, file, from, to string }{
		{"a package file", "p/p.go", "t := 0", "t := 0 // sum"},
		{"a test file", "p/p_test.go", "1, 2, 3", "3, 2, 1"},
		{"a file built only with a tag", "p/extra.go", "return 1", "return 2"},
		{"a local replacement's file", "../dep/dep.go", "n / 2", "(n + 1) / 2"},
		{"go.mod", "go.mod", "go 1.22", "go 1.23"},
	} {
		undo := edit(filepath.Join(dir, e.file), e.from, e.to)
		differs(e.what, key(c, cfg))
		undo()
		sameAgain(e.what)
	}

	tagged := cfg
	tagged.BuildFlags = []string{"-tags=extra"}
	differs("-tags=extra", key(c, tagged))
	goflags := cfg
	goflags.Env = append(slices.Clone(env), "GOFLAGS=-mod=mod -tags=extra")
	differs("GOFLAGS=-tags=extra", key(c, goflags))
	differs("another spanprof", key(&Cache{Dir: c.Dir, ToolID: "tool-2"}, cfg))
	noTests := cfg
	noTests.Tests = false
	differs("no tests", key(c, noTests))
	differs("another profile name", key(c, cfg, "/elsewhere/p.pb.gz"))
	sameAgain("all")
}

// TestCacheGetPut: what Put stores, Get returns; Put stores nothing when a
// file changed between the key and the store (the rewrite may have read
// the new bytes under the old key); an entry that does not decode, or is
// another key's, is a miss.
func TestCacheGetPut(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := cacheModule(t)
	c := &Cache{Dir: t.TempDir(), ToolID: "tool"}
	cfg := Config{Dir: dir, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"), Tests: true, Mode: Overlay, Deps: true}
	k, err := c.Key(cfg, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Get(k); ok {
		t.Fatal("a hit in an empty cache")
	}
	prog, err := Load(cfg, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prog.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Put(k, prog, res); !ok || err != nil {
		t.Fatalf("Put: %v, %v", ok, err)
	}
	gotProg, gotRes, ok := c.Get(k)
	if !ok {
		t.Fatal("Get after Put: a miss")
	}
	if resultText(gotRes, dir) != resultText(res, dir) {
		t.Errorf("Get returned another rewrite:\n%s", Diff("put", []byte(resultText(res, dir)), "got", []byte(resultText(gotRes, dir))))
	}
	if gotProg.Module != prog.Module || gotProg.Signals != prog.Signals || len(gotProg.Roots) != len(prog.Roots) || gotProg.Roots[0].PkgPath != prog.Roots[0].PkgPath || gotProg.Roots[0].Name != prog.Roots[0].Name {
		t.Errorf("Get returned the program %+v %v, want %+v %v", gotProg.Module, gotProg.Roots, prog.Module, prog.Roots)
	}

	// Another key's entry under this key's name, and a truncated one.
	other, err := c.Key(cfg, []string{"./..."}, "other")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.file(k))
	if err != nil {
		t.Fatal(err)
	}
	for what, bad := range map[string][]byte{"another key's entry": data, "a truncated entry": data[:len(data)/2]} {
		if err := os.WriteFile(c.file(other), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := c.Get(other); ok {
			t.Errorf("%s: a hit", what)
		}
	}

	// A file changed after the key: nothing stored.
	k2, err := c.Key(cfg, []string{"./..."}, "second")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "p", "p.go")
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, append(src, "\n// edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Put(k2, prog, res); ok || err != nil {
		t.Errorf("Put after a file changed: stored %v, %v; want nothing stored", ok, err)
	}
	if _, _, ok := c.Get(k2); ok {
		t.Error("Get after a refused Put: a hit")
	}
}

// TestCacheTrim: entries unused for cacheMaxAge go, and the least recently
// used past cacheMaxBytes; a temporary file of a process that died goes;
// files that are not entries stay (SPANPROF_CACHE may name any directory).
// The trim runs at most once every cacheTrimEvery.
func TestCacheTrim(t *testing.T) {
	t.Parallel()
	c := &Cache{Dir: t.TempDir()}
	now := time.Now()
	name := func(b byte) string { return string(bytes.Repeat([]byte{"0123456789abcdef"[b]}, 64)) }
	files := []struct {
		name string
		age  time.Duration
		size int
		kept bool
	}{
		{name(1), time.Hour, 10, true},
		{name(2), cacheMaxAge + time.Hour, 10, false},
		{name(3), 2 * time.Hour, cacheMaxBytes - 15, true},
		{name(4), 3 * time.Hour, 10, false}, // past the size limit, the oldest
		{"tmp-123", 2 * time.Hour, 10, false},
		{"tmp-456", time.Minute, 10, true}, // another process writing
		{"notes.txt", 30 * 24 * time.Hour, 10, true},
	}
	for _, f := range files {
		p := filepath.Join(c.Dir, f.name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, int64(f.size)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	c.trim(now)
	for _, f := range files {
		_, err := os.Stat(filepath.Join(c.Dir, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s (%v old): kept %v, want %v", f.name[:min(len(f.name), 8)], f.age, kept, f.kept)
		}
	}
	// Once a day: an old entry written now stays until the next trim.
	p := filepath.Join(c.Dir, name(5))
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-2 * cacheMaxAge)
	os.Chtimes(p, old, old)
	c.trim(now.Add(time.Hour))
	if _, err := os.Stat(p); err != nil {
		t.Errorf("a trim an hour after the last removed an entry")
	}
	c.trim(now.Add(cacheTrimEvery + time.Hour))
	if _, err := os.Stat(p); err == nil {
		t.Errorf("a trim a day after the last kept an entry unused for %v", 2*cacheMaxAge)
	}
}
