package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
)

// prepareMain prepares serially (prepare: os.Args[1] iterations of a
// loop) and then runs 8 equal children in parallel (2 million iterations
// each).
const prepareMain = `package main

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sync/errgroup"
)

//go:noinline
func burn(n int) int {
	x := 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func prepare(n int) int { return burn(n) }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	seed := prepare(n)
	var g errgroup.Group
	counts := make([]int, 8)
	for i := range counts {
		g.Go(func() error {
			counts[i] = burn(2_000_000) + seed
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	fmt.Println("children", len(counts))
}
`

// TestRunWhatIf: spanprof run -whatif main.prepare on a program with a
// serial prepare and then parallel work prints the parallelism at each
// factor, and the reports of its file carry them in every format; the
// estimate for ÷2 matches the parallelism measured with prepare really
// doing half the work, within 10%; without -whatif, a second run
// estimates the top sites; a bad target is a one-line usage error.
func TestRunWhatIf(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := module(t, map[string]string{"main.go": prepareMain})
	code, _, stderr := spanprofIn(t, dir, offline, "run", "-whatif", "main.prepare", "-o", "full.pb.gz", ".", "--", "8000000")
	if code != exitOK {
		t.Fatalf("spanprof run -whatif main.prepare: status %d\n%s", code, stderr)
	}
	row := regexp.MustCompile(`(?m)^main\.prepare +main\.go:\d+ +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$`).FindStringSubmatch(stderr)
	if row == nil {
		t.Fatalf("the report has no what-if row for main.prepare:\n%s", stderr)
	}
	full, err := spanprofile.ReadFile(filepath.Join(dir, "full.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(full.WhatIf) != 4 || full.WhatIf[0].Target != "main.prepare" || full.WhatIf[0].Factor != 2 || full.WhatIf[0].Sites != 1 {
		t.Fatalf("the profile's what-if estimates: %+v", full.WhatIf)
	}
	for i, w := range full.WhatIf {
		if got, _ := strconv.ParseFloat(row[1+i], 64); got != round2(w.Parallelism()) {
			t.Errorf("the text report's %s estimate %s, the file's %.2f", factorLabel(w.Factor), row[1+i], w.Parallelism())
		}
		if i > 0 && w.Parallelism() <= full.WhatIf[i-1].Parallelism() {
			t.Errorf("the parallelism does not grow with the factor: %+v", full.WhatIf)
		}
	}

	// The prediction against the program with half the preparation.
	code, _, stderr = spanprofIn(t, dir, offline, "run", "-whatif", "off", "-o", "half.pb.gz", ".", "--", "4000000")
	if code != exitOK {
		t.Fatalf("spanprof run -whatif off: status %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "What if") || strings.Contains(stderr, "what-if") {
		t.Errorf("-whatif off made a what-if profile:\n%s", stderr)
	}
	half, err := spanprofile.ReadFile(filepath.Join(dir, "half.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run %.2f; ÷2 predicts %.2f; half the preparation measures %.2f", full.Parallelism(), full.WhatIf[0].Parallelism(), half.Parallelism())
	if predicted := full.WhatIf[0].Parallelism(); !within(predicted, half.Parallelism(), 0.10) {
		t.Errorf("÷2 predicts parallelism %.2f (run %.2f); with half the preparation it measures %.2f: more than 10%% apart",
			predicted, full.Parallelism(), half.Parallelism())
	}

	// The file alone gives every format its estimates.
	for _, format := range report.Formats {
		code, out, errOut := spanprofIn(t, dir, nil, "report", "-format", format, "full.pb.gz")
		if code != exitOK {
			t.Fatalf("report -format %s: status %d: %s", format, code, errOut)
		}
		switch format {
		case "text":
			if !strings.Contains(out, "4) What if") || !strings.Contains(out, row[0]) {
				t.Errorf("report -format text lacks the what-if row %q:\n%s", row[0], out)
			}
		case "json":
			var s struct {
				WhatIf []struct {
					Target      string  `json:"target"`
					Func        string  `json:"func"`
					Factor      int64   `json:"factor"`
					Parallelism float64 `json:"parallelism"`
				} `json:"what_if"`
			}
			if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.WhatIf) != 4 || s.WhatIf[3].Factor != 0 ||
				s.WhatIf[0].Func != "main.prepare" || s.WhatIf[0].Parallelism != full.WhatIf[0].Parallelism() {
				t.Errorf("report -format json: what_if %+v (%v)", s.WhatIf, err)
			}
		case "html":
			if !strings.Contains(out, `id="what-if-chart"`) {
				t.Errorf("report -format html has no what-if chart")
			}
		}
	}

	// No -whatif: a second run estimates the top sites.
	code, _, stderr = spanprofIn(t, dir, append(offline, "SPANPROF_WHATIF="), "run", "-o", "auto.pb.gz", ".", "--", "1000000")
	if code != exitOK || !strings.Contains(stderr, "what-if: running again to estimate the top") || !strings.Contains(stderr, "4) What if") {
		t.Fatalf("spanprof run without -whatif: status %d, no automatic what-if:\n%s", code, stderr)
	}
	auto, err := spanprofile.ReadFile(filepath.Join(dir, "auto.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	top := report.TopSites(auto, autoTargets)
	if len(auto.WhatIf) == 0 || len(top) == 0 || auto.WhatIf[0].Func != top[0].Site.Func {
		t.Errorf("the automatic what-if's first target is %+v, want the top site %+v", auto.WhatIf, top)
	}

	// A target that is no site, function or region: usage error, one line.
	code, _, stderr = spanprofIn(t, dir, offline, "run", "-whatif", "main.go:0", ".", "--", "1")
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "main.go:0") {
		t.Errorf("-whatif main.go:0: status %d, stderr %q; want 2 and one line naming it", code, stderr)
	}
}

func round2(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	return v
}

func factorLabel(f int64) string {
	if f == 0 {
		return "∞"
	}
	return "÷" + strconv.FormatInt(f, 10)
}
