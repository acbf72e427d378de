package examples_test

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
)

// traced runs `spanprof run -mode trace ./examples/NAME -- ARGS` with env
// added, on one CPU if oneCPU, and reads the profile.
func traced(t *testing.T, env []string, oneCPU bool, name string, args ...string) *spanprofile.Profile {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".pb.gz")
	cmd := exec.Command(spanprofBin, append([]string{"run", "-mode", "trace", "-o", out, "./" + name, "--"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	run := (*exec.Cmd).CombinedOutput
	if oneCPU {
		run = onOneCPU
	}
	if b, err := run(cmd); err != nil {
		t.Fatalf("spanprof run -mode trace ./%s: %v\n%s", name, err, b)
	}
	p, err := spanprofile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "trace" {
		t.Fatalf("mode %q, want trace", p.Mode)
	}
	return p
}

// heldOverCPU returns how much longer the goroutines of a traced run held
// a P than the program used the CPU (its rusage): about 1 when the system
// gave its threads their CPU, more on a busy machine.
func heldOverCPU(p *spanprofile.Profile) float64 {
	return float64(p.Work+p.Trace.Excluded+p.Trace.RuntimeTime) / float64(max(p.Trace.CPU, 1))
}

// maxHeld is the most heldOverCPU of a run that TestTraceModeAgreesWithSerial
// compares with serial mode. On the 2-vCPU VM, quiet, runs read 0.81-0.97
// and agreed with serial mode within 10%; beside two busy loops a matmul
// run that read 1.14 had 2.3 times serial mode's span, and the test failed
// with the bound at 1.25.
const maxHeld = 1.05

// topFunction returns the function holding most of a trace-mode profile's
// critical path in its own frames.
func topFunction(p *spanprofile.Profile) string {
	if f := report.Functions(p); len(f) > 0 {
		return f[0].Func
	}
	return ""
}

// TestTracePipeline is issue 17's test of done: spanprof run -mode trace
// on a three-stage channel pipeline whose stages cost 1, 4 and 2 units per
// item reads a parallelism within 15% of 7/4 = 1.75, with the middle
// stage's function on top of the critical path.
//
// examples/pipeline's defaults give strands of 10 to 40 ms (units of about
// 10 ms), long against the time slices in which a busy machine runs other
// processes, and its 20 items a parallelism of 7·20/(4·20+3) = 1.69 (the
// first item's production and the last one's consumption are on the
// path). On this project's 2-vCPU VM, with other processes taking 55-75%
// of it, single runs read 1.72 to 1.88 (with 25 µs units, 1.26 to 1.65: a
// consumer descheduled for a few milliseconds makes the middle stage wait
// on it, and the trace rightly puts that run's critical path through it).
// A run out of range is run twice more and the median of the three
// judged; the top function is checked in every run.
func TestTracePipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and traces an example")
	}
	const want, tol = 1.75, 0.15
	inRange := func(x float64) bool { return x >= want*(1-tol) && x <= want*(1+tol) }
	var pars []float64
	for run := 1; run <= 3; run++ {
		p := traced(t, nil, false, "pipeline")
		t.Logf("run %d: work %d span %d parallelism %.2f (goroutines held a P %.2fx the CPU time)", run,
			p.Work, p.Span, p.Parallelism(), heldOverCPU(p))
		if top := topFunction(p); !strings.HasPrefix(top, "main.transform") {
			t.Errorf("run %d: %s holds most of the critical path; want the middle stage, main.transform", run, top)
		}
		pars = append(pars, p.Parallelism())
		if run == 1 && inRange(pars[0]) {
			return
		}
	}
	slices.Sort(pars)
	if !inRange(pars[1]) {
		t.Errorf("parallelism %.2f (median of %.2f), want within %.0f%% of %.2f", pars[1], pars, 100*tol, want)
	}
}

// TestTraceModeAgreesWithSerial profiles fork/join examples in serial mode
// and in trace mode and checks that they agree: work and span within a
// factor of 2, parallelism within 1.5, and the function holding most of
// serial mode's critical path among trace mode's top three, or where
// others come close to it, one of them (agree; docs/trace-mode.md).
//
// The two modes measure differently. Serial mode runs the program
// instrumented, every spawn inline, measures each strand's CPU time and
// subtracts the instrumentation's cost. Trace mode runs the program as
// written and sees one real schedule: a strand is the time its goroutine
// held a P (CPU samples cut pieces longer than the sampling period to what
// the thread ran), a wait that did not block leaves no edge, and stacks and
// inlined frames differ (quicksort's mix, inlined into checksum, is a
// function of its own). Both run on one CPU, as
// TestParallelModeAgreesWithSerial does (this VM's two vCPUs run one loop in
// 5.9 and 8.4 ms), trace mode at GOMAXPROCS=1, nearest to serial mode's one
// thread: goroutines do not slow each other on sibling hyperthreads, and
// nearly every wait blocks. Unpinned, at the VM's load, one program's CPU
// time varied by 1.5x between runs (quicksort, cutoff 2000: 215 and 322 ms)
// and spans by 1.8x; pinned, three trace runs agreed within 8%. Measured so,
// each the least of three runs, trace against serial: work 0.95 (quicksort),
// 1.07 (matmul), 1.08 (fib); span 0.87, 1.06, 1.13; parallelism 1.09, 1.01,
// 0.95. The inputs make spans of 17 to 32 ms, so that a millisecond's hiccup
// on the critical path does not count. Quicksort's cutoff is 200, not more,
// because its work depends on where the linker puts a loop: with 2000, four
// fifths of it is the insertion sorts inlined in pqsort, and the traced
// build (one file more) ran in 0.16 s of CPU where go build's ran in 0.24 s,
// the same instructions with the inner loop across a 64-byte boundary in the
// slower one; the instrumented build was as slow, and the parallelisms read
// 11.1-11.4 against 8.2-8.4, near the bound.
//
// A busy machine decides a run's numbers, not its mode. Under make test,
// which runs the other packages' tests beside this one, the goroutines of
// a traced run held their P up to 10 times as long as the program used the
// CPU, and work and span read 2 to 6 times serial mode's. The run says so
// itself (its CPU time against the time its goroutines held a P, from the
// program's rusage), so only trace runs in which that ratio is at most
// maxHeld are compared, and with none the comparison is skipped, saying why.
// The CPU's own speed changes too, unseen by any measure of CPU time: with
// another package's tests beside this one, serial mode read a 512x512
// matmul's work as 60M ns (84-109M alone) and quiet trace runs read it as
// 79-103M. So the modes run side by side, one run each per round (serial
// mode with -count 1), and each of work and span is taken as its least
// over each mode's runs, the same estimator for both (noise only adds
// time); where they disagree after three rounds, more rounds run, up to
// six, and the last judgement stands. Even so, a quiet trace run read 1.36
// times its serial neighbour's work and 1.41 times its span, the same
// parallelism (1.79 and 1.85): a change of speed scales work and span
// alike. So parallelism, a ratio, is held within 1.5, and work and span
// within 2. What holds however busy the machine is, is checked on every
// run: at GOMAXPROCS=1 the work is at most the trace's duration (it would
// exceed it if time blocked were counted, as parents wait while their
// children run), and the span at most the work.
func TestTraceModeAgreesWithSerial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and profiles examples")
	}
	const minRounds, maxRounds = 3, 6
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"quicksort", []string{"-n", "1000000", "-cutoff", "200"}},
		{"matmul", []string{"-n", "512", "-cutoff", "256"}},
		{"fib", []string{"-n", "40", "-cutoff", "35"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sers, runs []*spanprofile.Profile
			var held []float64
			var errs []string
			for round := 1; round <= maxRounds; round++ {
				out := filepath.Join(t.TempDir(), "serial.pb.gz")
				cmd := exec.Command(spanprofBin, append([]string{"run", "-count", "1", "-o", out, "./" + tc.name, "--"}, tc.args...)...)
				if b, err := onOneCPU(cmd); err != nil {
					t.Fatalf("spanprof run ./%s: %v\n%s", tc.name, err, b)
				}
				ser, err := spanprofile.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				sers = append(sers, ser)
				p := traced(t, []string{"GOMAXPROCS=1"}, true, tc.name, tc.args...)
				h := heldOverCPU(p)
				t.Logf("round %d: serial: work %d span %d; trace: work %d span %d parallelism %.2f, the goroutines held a P %.2fx the CPU time",
					round, ser.Work, ser.Span, p.Work, p.Span, p.Parallelism(), h)
				if slack := p.Trace.Duration / 100; p.Work > p.Trace.Duration+slack || p.Span > p.Work {
					t.Errorf("trace round %d: work %d, span %d, in %d ns at GOMAXPROCS=1: want span <= work <= duration", round, p.Work, p.Span, p.Trace.Duration)
				}
				held = append(held, h)
				if h <= maxHeld {
					runs = append(runs, p)
				}
				if round < minRounds || len(runs) == 0 {
					continue
				}
				if errs = agree(sers, runs); len(errs) == 0 {
					return
				}
				t.Logf("%d disagreements: %s", len(errs), strings.Join(errs, "; "))
			}
			if len(runs) == 0 {
				t.Skipf("the machine was too busy to compare: in every run the goroutines held a P more than %.2fx the program's CPU time (%.2f)", maxHeld, held)
			}
			for _, e := range errs {
				t.Error(e)
			}
		})
	}
}

// agree compares serial and trace runs of one program as
// TestTraceModeAgreesWithSerial says, and returns the disagreements.
func agree(sers, runs []*spanprofile.Profile) []string {
	const tolWork, tolSpan, tolPar = 2.0, 2.0, 1.5
	least := func(ps []*spanprofile.Profile, v func(*spanprofile.Profile) int64) *spanprofile.Profile {
		return slices.MinFunc(ps, func(a, b *spanprofile.Profile) int { return cmp.Compare(v(a), v(b)) })
	}
	work := func(p *spanprofile.Profile) int64 { return p.Work }
	span := func(p *spanprofile.Profile) int64 { return p.Span }
	sw, ss := float64(least(sers, work).Work), float64(least(sers, span).Span)
	tw, ts := float64(least(runs, work).Work), float64(least(runs, span).Span)
	var errs []string
	for _, c := range []struct {
		what string
		t, s float64
		tol  float64
	}{
		{"work", tw, sw, tolWork},
		{"span", ts, ss, tolSpan},
		{"parallelism", tw / ts, sw / ss, tolPar},
	} {
		if r := c.t / c.s; r < 1/c.tol || r > c.tol {
			errs = append(errs, fmt.Sprintf("%s: trace mode %.4g, serial mode %.4g (ratio %.2f), want within a factor of %.1f", c.what, c.t, c.s, r, c.tol))
		}
	}
	// The leaders are compared in serial mode's units. Its sites are calls
	// and spawns named by the function they call, and a site's local span
	// on span is that call's time on the critical path, its callees' but
	// for those of other sites. A piece of trace mode's critical path goes
	// the same way, to the innermost function on its stack that serial
	// mode names, so that, say, quicksort's math/rand frames count as
	// randomInts'.
	ser := least(sers, span)
	own := map[string]int64{} // every site's function, on the path or not
	for _, s := range ser.BySite() {
		own[s.Site.Func] += s.OnSpan.Local.Span
	}
	tr := least(runs, span)
	traced := map[string]int64{}
	for _, c := range tr.Contexts {
		for i := len(c.Stack) - 1; i >= 0; i-- {
			f := tr.Sites[c.Stack[i]].Func
			if _, ok := own[f]; ok {
				traced[f] += c.OnSpan.Local.Span
				break
			}
		}
	}
	byShare := func(m map[string]int64) []string {
		fs := slices.Collect(maps.Keys(m))
		slices.SortFunc(fs, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
		return fs
	}
	serTop, top := byShare(own), byShare(traced)
	top = top[:min(3, len(top))]
	// Serial mode's leader must be among trace mode's top three, or, where
	// other functions hold within 1/leaderMargin of its share, one of them:
	// which of two such functions leads is decided by what differs between
	// the modes. Quicksort's partition (8.2 ms in serial mode on the VM)
	// and randomInts (6.2-7.2 ms) are so; trace mode gives the partitions
	// too short to hold a CPU sample to pqsort, whose event ends their
	// pieces, and reads partition at about 3 ms.
	const leaderMargin = 1.5
	var leaders []string
	for _, f := range serTop {
		if own[f] == 0 || float64(own[f])*leaderMargin < float64(own[serTop[0]]) {
			break
		}
		leaders = append(leaders, f)
	}
	switch {
	case len(leaders) == 0:
		errs = append(errs, "serial mode's profile has no site on the critical path")
	case !slices.ContainsFunc(leaders, func(f string) bool { return slices.Contains(top, f) }):
		errs = append(errs, fmt.Sprintf("serial mode's critical path is mostly %s (the functions within a factor of %.1f of it: %v); trace mode's top three are %v",
			leaders[0], leaderMargin, leaders, top))
	}
	return errs
}
