package examples_test

import (
	"cmp"
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
// compares with serial mode.
const maxHeld = 1.25

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
// and in trace mode and checks that they agree: work within a factor of 2,
// span within 1.5, parallelism within 2, and the function holding most of
// serial mode's critical path among trace mode's top three
// (docs/trace-mode.md).
//
// The two modes measure differently. Serial mode runs the program
// instrumented, every spawn inline, measures each strand's CPU time, takes
// its shortest over up to 5 runs (-count auto) and subtracts the
// instrumentation's cost. Trace mode runs the program as written and sees
// one real schedule: a strand is the time its goroutine held a P (CPU
// samples cut pieces longer than the sampling period to what the thread
// ran), a wait that did not block leaves no edge, and stacks and inlined
// frames differ (quicksort's mix, inlined into randomInts, is a function of
// its own). Both run on one CPU, as TestParallelModeAgreesWithSerial does
// (this VM's two vCPUs run one loop in 5.9 and 8.4 ms), trace mode at
// GOMAXPROCS=1, nearest to serial mode's one thread: goroutines do not
// slow each other on sibling hyperthreads, and nearly every wait blocks.
// Unpinned, at the VM's load, one program's CPU time varied by 1.5x between
// runs (quicksort 215 and 322 ms) and spans by 1.8x; pinned, three trace
// runs agreed within 8%, and each of work and span is taken as its least
// over them, as -count does for serial mode (noise only adds time).
// Measured so, trace against serial: work 0.65 (quicksort: its instrumented
// build does not inline partition's helpers, 35.7 ms of partition against
// 11 as written), 1.04 (matmul), 1.03 (fib); span 0.89, 1.10, 1.05;
// parallelism 0.73, 0.95, 0.99. The inputs make spans of 30 to 50 ms, so
// that a millisecond's hiccup on the critical path does not count.
//
// A busy machine decides a traced run's numbers, not trace mode: under
// make test, which runs the other packages' tests beside this one, the
// goroutines held their P 3 to 10 times as long as the program used the
// CPU, and work and span read 2 to 6 times serial mode's. The run says so
// itself (its CPU time against the time its goroutines held a P, from the
// program's rusage), so only runs in which that ratio is at most 1.25 are
// compared, and with none the comparison is skipped, saying why. What holds
// however busy the machine is, is checked on every run: at GOMAXPROCS=1
// the work is at most the trace's duration (it would exceed it if time
// blocked were counted, as parents wait while their children run), and
// the span at most the work.
func TestTraceModeAgreesWithSerial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and profiles examples")
	}
	const tolWork, tolSpan, tolPar = 2.0, 1.5, 2.0
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"quicksort", []string{"-n", "1000000", "-cutoff", "2000"}},
		{"matmul", []string{"-n", "512", "-cutoff", "256"}},
		{"fib", []string{"-n", "40", "-cutoff", "35"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "serial.pb.gz")
			cmd := exec.Command(spanprofBin, append([]string{"run", "-o", out, "./" + tc.name, "--"}, tc.args...)...)
			if b, err := onOneCPU(cmd); err != nil {
				t.Fatalf("spanprof run ./%s: %v\n%s", tc.name, err, b)
			}
			ser, err := spanprofile.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// As -count does for serial mode: noise only adds time, so
			// each of work and span is its least over the quiet runs.
			var runs []*spanprofile.Profile
			var held []float64
			for i := range 3 {
				p := traced(t, []string{"GOMAXPROCS=1"}, true, tc.name, tc.args...)
				h := heldOverCPU(p)
				t.Logf("trace run %d: work %d span %d parallelism %.2f; the goroutines held a P %.2fx the CPU time", i+1, p.Work, p.Span, p.Parallelism(), h)
				if slack := p.Trace.Duration / 100; p.Work > p.Trace.Duration+slack || p.Span > p.Work {
					t.Errorf("trace run %d: work %d, span %d, in %d ns at GOMAXPROCS=1: want span <= work <= duration", i+1, p.Work, p.Span, p.Trace.Duration)
				}
				held = append(held, h)
				if h <= maxHeld {
					runs = append(runs, p)
				}
			}
			if len(runs) == 0 {
				t.Skipf("the machine was too busy to compare: in every run the goroutines held a P more than %.2fx the program's CPU time (%.2f)", maxHeld, held)
			}
			tr := slices.MinFunc(runs, func(a, b *spanprofile.Profile) int { return cmp.Compare(a.Work, b.Work) })
			work := float64(tr.Work)
			span := float64(slices.MinFunc(runs, func(a, b *spanprofile.Profile) int { return cmp.Compare(a.Span, b.Span) }).Span)
			t.Logf("serial: work %d span %d parallelism %.2f; trace: work %.0f span %.0f parallelism %.2f",
				ser.Work, ser.Span, ser.Parallelism(), work, span, work/span)
			for _, c := range []struct {
				what string
				t, s float64
				tol  float64
			}{
				{"work", work, float64(ser.Work), tolWork},
				{"span", span, float64(ser.Span), tolSpan},
				{"parallelism", work / span, ser.Parallelism(), tolPar},
			} {
				if r := c.t / c.s; r < 1/c.tol || r > c.tol {
					t.Errorf("%s: trace mode %.4g, serial mode %.4g (ratio %.2f), want within a factor of %.1f", c.what, c.t, c.s, r, c.tol)
				}
			}
			// Serial mode's sites are calls and spawns named by the
			// function they call; its local span on span is that
			// function's own time on the critical path.
			own := map[string]int64{}
			for _, s := range ser.BySite() {
				own[s.Site.Func] += s.OnSpan.Local.Span
			}
			serTop := ""
			for f, v := range own {
				if serTop == "" || v > own[serTop] || v == own[serTop] && f < serTop {
					serTop = f
				}
			}
			funcs := report.Functions(slices.MinFunc(runs, func(a, b *spanprofile.Profile) int { return cmp.Compare(a.Span, b.Span) }))
			var top []string
			for i := 0; i < len(funcs) && i < 3; i++ {
				top = append(top, funcs[i].Func)
			}
			if !slices.Contains(top, serTop) {
				t.Errorf("serial mode's critical path is mostly %s; trace mode's top three are %v", serTop, top)
			}
		})
	}
}
