package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/packages"
)

// The rewrite cache keeps what spanprof run, test and build make of a
// module (the rewritten and generated files, the warnings and the counts),
// keyed by everything that goes into it, so that a second run of an
// unchanged module skips loading, type-checking, the compiler's inlining
// report and the rewrite, which cost more than go test itself on a large
// module (esbuild: 8 s, against 4 s). The key is computed from one "go list
// -deps" and "go env" and the bytes of the local packages' files: 0.3 s on
// esbuild, a tenth of its load.
//
// An entry is one file, written to a temporary name and renamed, so that
// concurrent spanprof processes see a whole entry or none; an entry that
// does not decode, or decodes to another key, is a miss. Entries unused for
// cacheMaxAge, and the least recently used ones past cacheMaxBytes, are
// removed at most once every cacheTrimEvery.

// EnvCache names the environment variable that moves the rewrite cache
// (a directory) or turns it off ("off").
const EnvCache = "SPANPROF_CACHE"

// cacheVersion changes when an entry's form or the key's recipe does.
const cacheVersion = "spanprof rewrite cache 1"

const (
	cacheMaxAge    = 5 * 24 * time.Hour // the go build cache's trim age
	cacheMaxBytes  = 1 << 30
	cacheTrimEvery = 24 * time.Hour
	cacheTouch     = time.Hour // mtime resolution of "recently used"
)

// A Cache is a directory of cached rewrites.
type Cache struct {
	Dir string
	// ToolID identifies the spanprof that rewrites: a rewrite by another
	// build of spanprof is never used. OpenCache sets it to a hash of the
	// running executable, which carries the runtime's source.
	ToolID string
}

// OpenCache returns the rewrite cache: $SPANPROF_CACHE, else spanprof/rewrite
// in the user's cache directory; nil when SPANPROF_CACHE is "off" or no
// cache directory can be made.
func OpenCache() *Cache {
	dir := os.Getenv(EnvCache)
	if dir == "off" {
		return nil
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "spanprof", "rewrite")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	id, err := toolID()
	if err != nil {
		return nil
	}
	return &Cache{Dir: dir, ToolID: id}
}

var toolIDOnce = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The executable's bytes: its rewriter and its embedded runtime. A
	// version string would miss a rebuild from a modified tree.
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

func toolID() (string, error) { return toolIDOnce() }

// A CacheKey is the key of a rewrite, with what Put checks again before it
// stores one.
type CacheKey struct {
	sum   string
	local []fileSum // the files whose bytes went into the key
}

type fileSum struct {
	name string
	sum  [sha256.Size]byte
}

// String returns the key in hex.
func (k *CacheKey) String() string { return k.sum }

// listed is the part of "go list -json" the key reads.
type listed struct {
	Dir      string
	Standard bool

	GoFiles, CgoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles []string
	CFiles, CXXFiles, HFiles                                     []string
}

// listFields are the fields the key's go list prints: all of them go into
// the key (the packages, their files and modules, with versions), and the
// bytes of the files listed of the packages outside GOROOT and the module
// cache.
const listFields = "ImportPath,Name,Dir,ForTest,Standard,Module,Error,DepsErrors," +
	"GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles,CFiles,CXXFiles,HFiles"

// Key computes the key of the rewrite of patterns under cfg; extra is what
// else the caller's rewrite depends on (a test's profile names). It runs
// "go list -deps" and "go env" with the environment Load uses, and reads
// the files of the packages outside GOROOT and the module cache: the
// main module's, a workspace's, a local replacement's and vendored ones.
func (c *Cache) Key(cfg Config, patterns []string, extra ...string) (*CacheKey, error) {
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Dir = wd
	}
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	env := (&Program{cfg: cfg}).env()
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = cfg.Dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go %s: %v: %s", args[0], err, firstLines(stderr.String()))
		}
		return out, nil
	}
	var (
		goEnv    []byte
		goEnvErr error
		wg       sync.WaitGroup
	)
	wg.Go(func() { goEnv, goEnvErr = goCmd("env", "-json") })
	args := []string{"list", "-e", "-deps", "-json=" + listFields}
	if cfg.Tests {
		args = append(args, "-test")
	}
	list, err := goCmd(append(append(args, cfg.BuildFlags...), append([]string{"--"}, patterns...)...)...)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if goEnvErr != nil {
		return nil, goEnvErr
	}
	var vars map[string]string
	if err := json.Unmarshal(goEnv, &vars); err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	// GOGCCFLAGS names a new temporary directory every time; what else
	// it says follows from CC and the platform.
	delete(vars, "GOGCCFLAGS")

	h := sha256.New()
	field := func(name string, vs ...string) {
		fmt.Fprintf(h, "%s %d\n", name, len(vs))
		for _, v := range vs {
			fmt.Fprintf(h, "%d %s\n", len(v), v)
		}
	}
	field("version", cacheVersion)
	field("tool", c.ToolID)
	field("dir", cfg.Dir)
	field("mode", fmt.Sprint(cfg.Mode), fmt.Sprint(cfg.Tests), fmt.Sprint(cfg.Deps))
	field("buildflags", cfg.BuildFlags...)
	field("patterns", patterns...)
	field("extra", extra...)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		field("goenv", k, vars[k])
	}
	field("golist", string(list))

	// The files: go.mod, go.sum, go.work and go.work.sum, vendor's
	// list, and the files the packages list, outside GOROOT and the
	// module cache, whose contents the versions in the list name.
	var names []string
	if vars["GOMOD"] != "" && vars["GOMOD"] != os.DevNull {
		dir := filepath.Dir(vars["GOMOD"])
		names = append(names, vars["GOMOD"], filepath.Join(dir, "go.sum"), filepath.Join(dir, "vendor", "modules.txt"))
	}
	if vars["GOWORK"] != "" && vars["GOWORK"] != "off" {
		names = append(names, vars["GOWORK"], vars["GOWORK"]+".sum")
	}
	under := func(dir, root string) bool {
		return root != "" && (dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)))
	}
	dec := json.NewDecoder(bytes.NewReader(list))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		if p.Standard || p.Dir == "" || under(p.Dir, vars["GOROOT"]) || under(p.Dir, vars["GOMODCACHE"]) {
			continue
		}
		for _, fs := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles, p.TestGoFiles, p.XTestGoFiles, p.CFiles, p.CXXFiles, p.HFiles} {
			for _, f := range fs {
				names = append(names, filepath.Join(p.Dir, f))
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names) // a package and its test variant list the same files
	key := &CacheKey{}
	for _, name := range names {
		sum, err := hashFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			field("absent", name)
			continue
		}
		if err != nil {
			return nil, err
		}
		key.local = append(key.local, fileSum{name, sum})
		field("file", name, string(sum[:]))
	}
	key.sum = hex.EncodeToString(h.Sum(nil))
	return key, nil
}

func hashFile(name string) (sum [sha256.Size]byte, err error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return sum, err
	}
	return sha256.Sum256(data), nil
}

// unchanged reports whether the files that went into the key still hold
// what they held.
func (k *CacheKey) unchanged() bool {
	for _, f := range k.local {
		if sum, err := hashFile(f.name); err != nil || sum != f.sum {
			return false
		}
	}
	return true
}

// covers reports whether every file of the packages rewritten went into
// the key: a file added while the program loaded did not.
func (k *CacheKey) covers(p *Program) bool {
	in := make(map[string]bool, len(k.local))
	for _, f := range k.local {
		in[f.name] = true
	}
	for _, u := range p.units {
		for _, f := range u.pkg.GoFiles {
			if !in[f] {
				return false
			}
		}
	}
	return true
}

// entry is what the cache keeps of a rewrite: what run, test and build use
// of the Program and the Result.
type entry struct {
	Key       string
	Module    Module
	Roots     []root
	Signals   bool
	Files     []cachedFile
	Warnings  []string
	Stats     Stats
	Rewritten []string
}

type root struct{ ID, PkgPath, Name string }

type cachedFile struct {
	Path string
	New  []byte
}

// isKey reports whether name is a key in hex, the name of an entry.
func isKey(name string) bool {
	b, err := hex.DecodeString(name)
	return err == nil && len(b) == sha256.Size
}

func (c *Cache) file(k *CacheKey) string { return filepath.Join(c.Dir, k.sum) }

// Get returns the program and rewrite cached under k, or false.
func (c *Cache) Get(k *CacheKey) (*Program, *Result, bool) {
	f, err := os.Open(c.file(k))
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	var e entry
	if err := gob.NewDecoder(f).Decode(&e); err != nil || e.Key != k.sum {
		return nil, nil, false
	}
	if st, err := f.Stat(); err == nil && time.Since(st.ModTime()) > cacheTouch {
		now := time.Now()
		os.Chtimes(f.Name(), now, now) // most recently used, for the trim
	}
	p := &Program{Module: e.Module, Signals: e.Signals}
	for _, r := range e.Roots {
		p.Roots = append(p.Roots, &packages.Package{ID: r.ID, PkgPath: r.PkgPath, Name: r.Name})
	}
	res := &Result{Warnings: e.Warnings, Stats: e.Stats, Rewritten: e.Rewritten}
	for _, cf := range e.Files {
		res.Files = append(res.Files, &File{Path: cf.Path, New: cf.New})
	}
	return p, res, true
}

// Put stores the program's rewrite under k, unless a file that went into
// the key changed since (the rewrite may have read the new bytes). It
// returns whether it stored it.
func (c *Cache) Put(k *CacheKey, p *Program, res *Result) (bool, error) {
	if !k.unchanged() || !k.covers(p) {
		return false, nil
	}
	e := entry{Key: k.sum, Module: p.Module, Signals: p.Signals, Warnings: res.Warnings, Stats: res.Stats, Rewritten: res.Rewritten}
	for _, r := range p.Roots {
		e.Roots = append(e.Roots, root{r.ID, r.PkgPath, r.Name})
	}
	for _, f := range res.Files {
		e.Files = append(e.Files, cachedFile{f.Path, f.New})
	}
	tmp, err := os.CreateTemp(c.Dir, "tmp-")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(&e); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), c.file(k)); err != nil {
		return false, err
	}
	c.trim(time.Now())
	return true, nil
}

// trim removes the entries unused for cacheMaxAge and, oldest first, those
// past cacheMaxBytes, and temporary files left by a process that died, at
// most once every cacheTrimEvery.
func (c *Cache) trim(now time.Time) {
	stamp := filepath.Join(c.Dir, "trim.txt")
	if st, err := os.Stat(stamp); err == nil && now.Sub(st.ModTime()) < cacheTrimEvery {
		return
	}
	if err := os.WriteFile(stamp, []byte(now.Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return
	}
	des, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type ent struct {
		name string
		size int64
		mod  time.Time
	}
	var keep []ent
	for _, d := range des {
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || d.Name() == "trim.txt" {
			continue
		}
		name := filepath.Join(c.Dir, d.Name())
		age := now.Sub(info.ModTime())
		switch {
		case strings.HasPrefix(d.Name(), "tmp-"):
			if age > time.Hour {
				os.Remove(name)
			}
		case !isKey(d.Name()):
			// Not ours: $SPANPROF_CACHE may name a directory with
			// other files in it.
		case age > cacheMaxAge:
			os.Remove(name)
		default:
			keep = append(keep, ent{name, info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(keep, func(a, b ent) int { return b.mod.Compare(a.mod) })
	var total int64
	for _, e := range keep {
		total += e.size
		if total > cacheMaxBytes {
			os.Remove(e.name)
		}
	}
}
