package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/shadow"
	"github.com/spanprof/spanprof/spanprofile"
)

// autoTargets is how many sites run's what-if profile takes when -whatif
// names none.
const autoTargets = 5

// topSites returns the what-if targets run takes by default: the top sites
// of the span profile p, in the report's default order, as file:line:column
// (one site each, even where a line has several).
func topSites(p *spanprofile.Profile, n int) []string {
	var out []string
	for _, m := range report.TopSites(p, n) {
		t := m.Site.File + ":" + strconv.Itoa(m.Site.Line)
		if m.Site.Column > 0 {
			t += ":" + strconv.Itoa(m.Site.Column)
		}
		out = append(out, t)
	}
	return out
}

// autoWhatIf makes run's what-if profile of the top sites when -whatif
// names no target: the sites are known only once a run has ended, so the
// program runs once more, with them as targets, its input none and its
// output discarded, as a later run of -count (k is its number, for the
// strand files: its strands are merged with the runs before). Its profile
// replaces the first run's only if it completes.
func autoWhatIf(in *interrupts, bin string, progArgs []string, pf *profFlags, runs *runs, k int, out string, stderr io.Writer) error {
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		return nil // printProfile says so
	}
	targets := topSites(p, autoTargets)
	if len(targets) == 0 || p.Partial() {
		return nil
	}
	fmt.Fprintf(stderr, "spanprof: what-if: running again to estimate the top %d sites of the span profile faster (-whatif off skips this run)\n", len(targets))
	tmp := out + ".whatif"
	defer os.Remove(tmp)
	cmd := exec.Command(bin, progArgs...)
	cmd.Env = append(append(pf.env(tmp), runs.env(k)...), shadow.EnvWhatIf+"="+strings.Join(targets, ","))
	var later bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &later
	if err := in.run(cmd, false); err != nil {
		stderr.Write(later.Bytes())
		return err
	}
	if _, err := spanprofile.ReadFile(tmp); err != nil {
		return fmt.Errorf("what-if run: no profile: %w", err)
	}
	return os.Rename(tmp, out)
}
