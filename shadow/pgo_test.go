package shadow

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// The runtime's CPU profile, engine.pgo, which the spanprof command compiles
// this package and perf with (rewrite.Build.Flags).

func readEngineProfile(t *testing.T) *profile.Profile {
	t.Helper()
	data, err := os.ReadFile("engine.pgo")
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatalf("engine.pgo: %v", err)
	}
	return p
}

// TestEngineProfileHoldsOnlyTheRuntime: the profile is a CPU profile of
// the runtime's own frames, with no path of the machine that wrote it.
func TestEngineProfileHoldsOnlyTheRuntime(t *testing.T) {
	p := readEngineProfile(t)
	if len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" {
		t.Fatalf("sample types %v, want samples and cpu", p.SampleType)
	}
	if len(p.Sample) < 100 {
		t.Errorf("%d samples, want 100 or more", len(p.Sample))
	}
	for _, f := range p.Function {
		if !strings.HasPrefix(f.Name, "github.com/spanprof/spanprof/shadow.") && !strings.HasPrefix(f.Name, "github.com/spanprof/spanprof/perf.") {
			t.Errorf("function %s is not the runtime's", f.Name)
		}
		if filepath.IsAbs(f.Filename) || !strings.HasPrefix(f.Filename, "shadow/") && !strings.HasPrefix(f.Filename, "perf/") {
			t.Errorf("function %s: file %q, want a path relative to the repository", f.Name, f.Filename)
		}
	}
	for _, m := range p.Mapping {
		if m.File != "" || m.BuildID != "" {
			t.Errorf("mapping names %q, build ID %q: want neither", m.File, m.BuildID)
		}
	}
}

// TestEngineProfileIsFresh: the compiler matches a profile's calls to the
// source by the caller's name and the call's line within it, so a change
// to the engine leaves the profile's hot calls where the code no longer
// makes them, and the build quietly loses what the profile gave. Of the
// calls that carry 90% of the profile's weight (closures left out: their
// names do not say where they start), at least 95% by weight must still
// be calls to their callee at the same line within the caller; else
// `make pgo` writes a fresh profile. (Two lines added at the top of six
// of the engine's hot functions, tick, tickAt, push, finish, spawnBegin
// and spawnEnd, leave 84%.)
func TestEngineProfileIsFresh(t *testing.T) {
	p := readEngineProfile(t)
	type edge struct {
		caller, callee *profile.Function
		offset         int64
	}
	weight := map[edge]int64{}
	var total int64
	for _, s := range p.Sample {
		var lines []profile.Line // leaf first
		for _, loc := range s.Location {
			lines = append(lines, loc.Line...)
		}
		for i := 0; i+1 < len(lines); i++ {
			callee, caller := lines[i], lines[i+1]
			e := edge{caller.Function, callee.Function, caller.Line - caller.Function.StartLine}
			weight[e] += s.Value[0]
			total += s.Value[0]
		}
	}
	edges := make([]edge, 0, len(weight))
	for e := range weight {
		edges = append(edges, e)
	}
	// Heaviest first; ties by names and offset, so that which calls make
	// the 90% does not depend on map order or addresses.
	sort.Slice(edges, func(i, j int) bool {
		a, b := edges[i], edges[j]
		switch {
		case weight[a] != weight[b]:
			return weight[a] > weight[b]
		case a.caller.Name != b.caller.Name:
			return a.caller.Name < b.caller.Name
		case a.callee.Name != b.callee.Name:
			return a.callee.Name < b.callee.Name
		}
		return a.offset < b.offset
	})
	src := map[string][]string{}
	var hot, matched, seen int64
	var stale []string
	for _, e := range edges {
		if seen >= total*9/10 {
			break
		}
		seen += weight[e]
		decl, ok := declPattern(e.caller.Name)
		callee, ok2 := shortName(e.callee.Name)
		if !ok || !ok2 {
			continue // a closure
		}
		hot += weight[e]
		file := filepath.Join("..", filepath.FromSlash(e.caller.Filename))
		lines, ok := src[file]
		if !ok {
			lines = readLines(t, file)
			src[file] = lines
		}
		start := -1
		for i, l := range lines {
			if decl.MatchString(l) {
				start = i
				break
			}
		}
		if at := start + int(e.offset); start >= 0 && at >= 0 && at < len(lines) && strings.Contains(lines[at], callee) {
			matched += weight[e]
			continue
		}
		stale = append(stale, fmt.Sprintf("%s +%d → %s", e.caller.Name, e.offset, e.callee.Name))
	}
	if hot == 0 {
		t.Fatal("no hot call of the profile names a function")
	}
	if matched*20 < hot*19 {
		t.Errorf("%d%% of engine.pgo's hot calls (by weight) are still where the source makes them, want 95%%: run make pgo. Moved: %s", 100*matched/hot, strings.Join(stale, "; "))
	}
	t.Logf("%d%% of the hot calls' weight matches the source (%d of %d samples); moved: %q", 100*matched/hot, matched, hot, stale)
}

// declPattern returns the pattern of the declaration line of the function
// of a profile's name (package.(*T).m, package.f, package.f[shape]), or
// false for a closure (package.f.func1).
func declPattern(name string) (*regexp.Regexp, bool) {
	if i := strings.Index(name, "["); i >= 0 {
		name = name[:i] // a shape's types hold slashes and dots of their own
	}
	name = name[strings.LastIndex(name, "/")+1:]
	name = name[strings.Index(name, ".")+1:]
	if strings.Contains(name, ".func") {
		return nil, false
	}
	if recv, m, ok := strings.Cut(name, ")."); ok {
		recv = strings.TrimPrefix(strings.TrimPrefix(recv, "("), "*")
		return regexp.MustCompile(`^func \(\w+ \*?` + regexp.QuoteMeta(recv) + `\) ` + regexp.QuoteMeta(m) + `[\[(]`), true
	}
	if strings.Contains(name, ".") {
		return nil, false
	}
	return regexp.MustCompile(`^func ` + regexp.QuoteMeta(name) + `[\[(]`), true
}

// shortName returns how a call of the function of a profile's name reads in
// the source: its name and an opening parenthesis or bracket.
func shortName(name string) (string, bool) {
	if i := strings.Index(name, "["); i >= 0 {
		name = name[:i]
	}
	name = name[strings.LastIndex(name, "/")+1:]
	if strings.Contains(name, ".func") {
		return "", false
	}
	return name[strings.LastIndex(name, ".")+1:], true
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
