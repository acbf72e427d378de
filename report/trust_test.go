package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/spanprofile/spanprofiletest"
)

// TestTrust checks the Trust section and each warning the trust figures
// call for, and that a quiet run gets none of them.
func TestTrust(t *testing.T) {
	const dur = 1_450_000_000 // the profile's duration
	leaf := 1                 // a context of the test profile with a site
	for _, tc := range []struct {
		name    string
		measure string
		trust   spanprofile.Trust
		lines   []string // in the text report
		warn    []string // substrings of the one warning expected
	}{
		{name: "quiet", measure: "cpu",
			trust: spanprofile.Trust{CPUs: 2, OtherCPU: dur / 50, Checks: 900},
			lines: []string{"Machine:               other processes used 1% of 2 CPUs", "Not running:"}},
		{name: "clock on a busy machine", measure: "clock",
			trust: spanprofile.Trust{CPUs: 2, OtherCPU: dur, RunDelay: dur / 2},
			lines: []string{"other processes used 50% of 2 CPUs", "Waited for a CPU:      725.00ms, 50% of the run"},
			warn:  []string{"waited 725.00ms (50% of the run) for a CPU, and the clock counted that as work"}},
		{name: "one run of cpu on a busy machine", measure: "cpu",
			trust: spanprofile.Trust{CPUs: 2, OtherCPU: dur},
			warn:  []string{"other processes used 50% of the machine", "-count 3"}},
		{name: "merged runs", measure: "cpu",
			trust: spanprofile.Trust{CPUs: 2, OtherCPU: dur, Runs: 3},
			lines: []string{"Runs:                  3, each strand its shortest time over them"}},
		{name: "runs parted", measure: "cpu",
			trust: spanprofile.Trust{Runs: 1, RunsNote: "the runs' events differ from event 12 on"},
			lines: []string{"Runs:                  1 (the runs' events differ from event 12 on)"}},
		{name: "outlier", measure: "cpu",
			trust: spanprofile.Trust{Outliers: []spanprofile.Outlier{{Context: leaf, PathMean: 3000, Mean: 1000, StdDev: 100}}},
			warn:  []string{"read 3.0x the average", "-count 3, or on a quiet machine"}},
		{name: "counter given up", measure: "clock",
			trust: spanprofile.Trust{CPUs: 2, TSCGivenUp: true},
			warn:  []string{"time-stamp counter", "parted from the kernel's clock", "profile again"}},
		{name: "outlier where counters open", measure: "cpu",
			trust: spanprofile.Trust{Counters: true, Outliers: []spanprofile.Outlier{{Context: leaf, PathMean: 3000, Mean: 1000, StdDev: 100}}},
			warn:  []string{"-measure instructions (this machine counts them)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := spanprofiletest.Profile()
			p.Measure = tc.measure
			tr := tc.trust
			p.Trust = &tr
			var out bytes.Buffer
			if err := Text(&out, p, Options{}); err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.lines {
				if !strings.Contains(out.String(), l) {
					t.Errorf("text lacks %q:\n%s", l, out.String())
				}
			}
			ws := trustWarnings(p)
			if (len(ws) == 0) != (len(tc.warn) == 0) || len(ws) > 1 {
				t.Errorf("warnings %q, want one with %q", ws, tc.warn)
			}
			for _, w := range tc.warn {
				if !strings.Contains(strings.Join(ws, "\n"), w) {
					t.Errorf("warnings %q lack %q", ws, w)
				}
			}
			s, err := Summarize(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Trust == nil || !reflect.DeepEqual(*s.Trust, tr) {
				t.Errorf("JSON trust %+v, want %+v", s.Trust, tr)
			}
		})
	}
}
