package forkjoin_test

import (
	"flag"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/spanprof/spanprof/analysis/forkjoin"
)

var update = flag.Bool("update", false, "rewrite testdata/src/*/result.golden")

// TestResult checks the whole result for each testdata package against
// result.golden beside it: every site with its position, kind, join object
// (by key, so identity shows) and elidability with its reason.
func TestResult(t *testing.T) {
	for _, pkg := range []string{"idioms"} {
		t.Run(pkg, func(t *testing.T) {
			dir := analysistest.TestData()
			results := analysistest.Run(t, dir, forkjoin.Analyzer, pkg)
			if len(results) != 1 {
				t.Fatalf("got %d results, want 1", len(results))
			}
			res := results[0].Result.(*forkjoin.Result)
			got := dump(results[0].Pass.Fset, res)
			golden := filepath.Join(dir, "src", pkg, "result.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("result differs from %s (run with -update to rewrite):\n%s", golden, lineDiff(string(want), got))
			}
		})
	}
}

// dump writes a result as text, one site per line, in source order.
func dump(fset *token.FileSet, r *forkjoin.Result) string {
	var b strings.Builder
	pos := func(p token.Pos) string {
		if !p.IsValid() {
			return "-"
		}
		q := fset.Position(p)
		return fmt.Sprintf("%s:%d:%d", filepath.Base(q.Filename), q.Line, q.Column)
	}
	key := func(j *forkjoin.JoinObject) string {
		if j == nil {
			return "none"
		}
		if !j.Exact {
			return j.Key + " (inexact)"
		}
		return j.Key
	}
	for _, f := range r.Funcs {
		fmt.Fprintf(&b, "func %s %s params=%d\n", pos(f.Node.Pos()), f.Name, len(f.Params))
	}
	for _, s := range r.Spawns {
		callee := "invisible"
		if s.Callee != nil {
			callee = s.Callee.Name
		}
		form := "named"
		if s.Closure {
			form = "closure"
		}
		fmt.Fprintf(&b, "spawn %s %s %s callee=%s join=%s contrib=%q", pos(s.Pos), s.Kind, form, callee, key(s.Join), s.Contrib)
		for _, sig := range s.Signals {
			fmt.Fprintf(&b, " signal=%s", pos(sig.Pos))
		}
		if s.Wait != nil {
			fmt.Fprintf(&b, " wait=%s", pos(s.Wait.Pos))
		}
		if s.Elidable {
			b.WriteString(" elidable\n")
		} else {
			fmt.Fprintf(&b, " not elidable at %s: %s\n", pos(s.ReasonPos), s.Reason)
		}
	}
	for _, s := range r.Signals {
		fmt.Fprintf(&b, "signal %s %s join=%s", pos(s.Pos), s.Kind, key(s.Join))
		if s.Kind == forkjoin.Add {
			if s.DeltaKnown {
				fmt.Fprintf(&b, " delta=%d", s.Delta)
			} else {
				b.WriteString(" delta=?")
			}
		}
		if s.Deferred {
			b.WriteString(" deferred")
		}
		b.WriteString("\n")
	}
	for _, w := range r.Waits {
		fmt.Fprintf(&b, "wait %s %s join=%s", pos(w.Pos), w.Kind, key(w.Join))
		for _, s := range w.Spawns {
			fmt.Fprintf(&b, " spawn=%s", pos(s.Pos))
		}
		b.WriteString("\n")
	}
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "call %s %s -> %s\n", pos(c.Node.Pos()), c.Func.Name, c.Callee.Name)
	}
	for _, j := range r.Objects {
		fmt.Fprintf(&b, "object %s %s name=%s\n", key(j), j.Kind, j.Name())
	}
	return b.String()
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := make(map[string]bool)
		for l := range strings.SplitSeq(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l := range strings.SplitSeq(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "-%s\n", l)
		}
	}
	for l := range strings.SplitSeq(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+%s\n", l)
		}
	}
	return b.String()
}
