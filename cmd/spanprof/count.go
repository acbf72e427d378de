package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spanprof/spanprof/shadow"
	"github.com/spanprof/spanprof/spanprofile"
)

// Several runs, each strand at its shortest (-count; shadow/strands.go).
//
// The cpu measure removes the time the profiled thread did not run, but not
// the time it ran slower because of others: a busy sibling hyperthread, a
// cache another process emptied, a hypervisor stealing time the guest cannot
// see. On a 2-core VM with two busy loops beside it, the leaves of a
// fork/join tree of parallelism 64 read up to 3.5 times their usual CPU time
// and one run's parallelism read 18 to 54. Taking each strand's minimum over
// runs removes that: 55-58 after two runs, 56-59 after three.
//
// -count auto (the default) runs once, and again only while the profile
// says the run was disturbed (trust figures: other processes' load, steal,
// the critical path far above its sites' average): up to maxAutoRuns runs,
// stopping when another run shortens neither the span nor the work by
// converged or more and the critical path's strands no longer read far
// above their sites' average. Under two compilers' load (load average 9 to
// 12) a tree of parallelism 64 stopped after three runs at 38.6 when a run
// that shortened the span by less than 3% ended them, one leaf 1.6 times
// its siblings in all three; with 1% and the outliers, 56.4-58.5 in five
// trees of five. The span alone is not enough: a large subtree off the
// critical path (fib's fib(n-1) half) can read 25% long in every run so far
// while the span has settled, and the work and the top-caller ratios are
// wrong until a run measures it undisturbed.

const (
	maxAutoRuns = 5
	converged   = 0.01
	// busyLoad is the share of the machine's CPUs that other processes may
	// take before a run counts as disturbed.
	busyLoad = 0.10
)

// countFlag is the value of -count: a number of runs, or auto (0).
type countFlag struct{ n int }

func (c *countFlag) String() string {
	if c.n == 0 {
		return "auto"
	}
	return strconv.Itoa(c.n)
}

func (c *countFlag) Set(s string) error {
	if s == "auto" {
		c.n = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("want a number of runs of 1 or more, or auto")
	}
	c.n = n
	return nil
}

// max returns the most runs the flag allows.
func (c *countFlag) max() int {
	if c.n == 0 {
		return maxAutoRuns
	}
	return c.n
}

// runs steers the runs of one profiled program.
type runs struct {
	count countFlag
	dir   string // strand files
	k     int    // the run under way, from 1
	span  []int64
	work  []int64
}

// newRuns makes the directory of the strand files, or returns nil when
// there is only one run to make (-count 1, parallel and elision modes).
func newRuns(f *profFlags) (*runs, error) {
	if f.count.n == 1 || f.mode == "parallel" || f.mode == "elision" {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "spanprof-strands-")
	if err != nil {
		return nil, err
	}
	return &runs{count: f.count, dir: dir}, nil
}

// env returns the environment additions of run k.
func (r *runs) env(k int) []string {
	if r == nil {
		return nil
	}
	r.k = k
	return []string{shadow.EnvStrands + "=" + r.dir, shadow.EnvRun + "=" + strconv.Itoa(k)}
}

// close removes the strand files.
func (r *runs) close() {
	if r != nil {
		os.RemoveAll(r.dir)
	}
}

// again decides, from the profiles of the run just made, whether to run
// once more. The notes say why it runs again, or why not when that needs
// saying: lines for printNotes.
func (r *runs) again(profiles []*spanprofile.Profile) (more bool, notes []string) {
	if r == nil || r.k >= r.count.max() || len(profiles) == 0 {
		return false, nil
	}
	var span, work int64
	var why string
	outliers := false
	for _, p := range profiles {
		outliers = outliers || p.Trust != nil && len(p.Trust.Outliers) > 0
		span += p.Span
		work += p.Work
		if p.Trust != nil && p.Trust.RunsNote != "" {
			// The program is not deterministic: more runs merge nothing.
			return false, []string{"no further runs: " + p.Trust.RunsNote}
		}
		if why == "" {
			why = disturbed(p)
		}
	}
	r.span, r.work = append(r.span, span), append(r.work, work)
	if r.count.n == 0 {
		switch n := len(r.span); {
		case n == 1 && why == "":
			return false, nil
		case n >= 2 && settled(r.span[n-2], r.span[n-1]) && settled(r.work[n-2], r.work[n-1]) && !outliers:
			return false, nil
		}
		if len(r.span) == 1 {
			notes = append(notes, why+"; running again to keep each strand's shortest time (-count 1 runs once)")
		}
		notes = append(notes, fmt.Sprintf("run %d of at most %d", r.k+1, r.count.max()))
	} else {
		notes = append(notes, fmt.Sprintf("run %d of %d", r.k+1, r.count.n))
	}
	return true, notes
}

// printNotes prints notes to w, a line each after "spanprof: ".
func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "spanprof: %s\n", n)
	}
}

// settled reports whether a run that took each strand's minimum changed a
// total from before to after by less than converged.
func settled(before, after int64) bool {
	return float64(before-after) < converged*float64(before)
}

// disturbed says how the run of p was disturbed, or "" if it was not.
func disturbed(p *spanprofile.Profile) string {
	t := p.Trust
	if t == nil {
		return ""
	}
	if t.CPUs > 0 && p.DurationNanos > 0 {
		machine := float64(t.CPUs) * float64(p.DurationNanos)
		if load := float64(t.OtherCPU) / machine; load > busyLoad {
			return fmt.Sprintf("the machine was busy (other processes used %.0f%% of its %d CPUs)", 100*load, t.CPUs)
		}
		if steal := float64(t.Steal) / machine; steal > 0.02 {
			return fmt.Sprintf("the hypervisor took %.0f%% of the CPUs' time (steal)", 100*steal)
		}
	}
	if len(t.Outliers) > 0 {
		o := t.Outliers[0]
		return fmt.Sprintf("%d sites on the critical path read far above their average (%s %.1fx)", len(t.Outliers), siteOf(p, o.Context), o.PathMean/math.Max(o.Mean, 1))
	}
	return ""
}

// siteOf names the innermost site of context i.
func siteOf(p *spanprofile.Profile, i int) string {
	if i < 0 || i >= len(p.Contexts) || len(p.Contexts[i].Stack) == 0 {
		return "the root"
	}
	s := p.Sites[p.Contexts[i].Stack[len(p.Contexts[i].Stack)-1]]
	return filepath.Base(s.File) + ":" + strconv.Itoa(s.Line)
}

// readProfiles reads the profiles in files, skipping those missing.
func readProfiles(files ...string) []*spanprofile.Profile {
	var ps []*spanprofile.Profile
	for _, f := range files {
		if p, err := spanprofile.ReadFile(f); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}
