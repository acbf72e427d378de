package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spanprof/spanprof/report"
	"github.com/spanprof/spanprof/spanprofile"
	"github.com/spanprof/spanprof/tracepath"
)

// traceAnalysis documents what trace mode computes, in trace's help, to
// which run's and test's refer.
const traceAnalysis = `
The DAG of the run: its strands are the intervals in which the program's
goroutines execute (running on a P, or in a system call while they keep
it; time runnable or blocked is no strand's); its edges are each
goroutine's order, the creation of a goroutine, and every wake-up of a
blocked goroutine by another (a channel send or close, an unlock, a Done,
a Cond signal: the trace names the goroutine that did it). The runtime's
own goroutines (GC workers, sweeper, scavenger, finalizers, the tracer's)
are left out of the work and wake nothing; GC assists are in the strand
that makes them. A wake-up by a timer or the network is no edge, and a
wait that did not block leaves none: the trace shows one schedule, not
every possible one. A strand's length is the time its goroutine held a P,
which on a busy machine includes time the system ran other processes.

The profile is a span profile (pprof, as from run) whose sites are stack
frames: a strand's time goes to the CPU profile samples taken in it when
the trace has them (a CPU profile ran while tracing; run and test -mode
trace ask for 1000 Hz, as often as the system allows), else to the stack
of the event that ended each piece of it, in the profiled module's code
that led there. Stacks are rooted at the go statement that created the
goroutine, recursion folded. The report adds the functions on the
critical path and, for programs that use runtime/trace tasks, each task
type's latency, work and critical path, and the functions that hold the
critical paths of the slowest tasks. The spanprof repository's
docs/trace-mode.md says what trace mode can and cannot see.
`

var cmdTrace = &command{
	name:  "trace",
	usage: "spanprof trace [-o FILE] TRACEFILE",
	short: "the work, span and critical path of any Go program from its execution trace",
	long: `Trace reads the Go execution trace TRACEFILE (from go test -trace, runtime/trace
or net/http/pprof's trace endpoint), computes the program's work, span,
parallelism and critical path, writes the span profile to FILE (default
spanprof.pb.gz) and prints its report (the top 10 sites) to standard output.
Nothing is built or rewritten. "spanprof run -mode trace" and "spanprof test
-mode trace" record the trace and analyse it in one step.
` + traceAnalysis + `
File names under the module of the current directory are written relative
to its root. A long trace prints its progress to standard error.

Exit status: 0 on success, 2 on a usage error or a TRACEFILE that is not a
complete Go execution trace (one line says why).
`,
	run: runTrace,
}

func runTrace(c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	outFlag := fs.String("o", "", "write the span profile to `file` (default spanprof.pb.gz)")
	if err := parseFlags(c, fs, args); err != nil {
		return finish(stdout, stderr, err)
	}
	if fs.NArg() != 1 {
		return finish(stdout, stderr, usageError(c, "trace takes one TRACEFILE, got %d arguments", fs.NArg()))
	}
	out, err := filepath.Abs(cmp.Or(*outFlag, "spanprof.pb.gz"))
	if err != nil {
		return finish(stdout, stderr, err)
	}
	if err := checkProfileOut(out); err != nil {
		return finish(stdout, stderr, err)
	}
	// Not in a module: file names stay absolute.
	root, _ := moduleRoot(".")
	p, err := analyzeTrace(fs.Arg(0), root, stderr)
	if err != nil {
		return finish(stdout, stderr, err)
	}
	if err := writeTraceProfile(p, out, stdout); err != nil {
		return finish(stdout, stderr, err)
	}
	return exitOK
}

// writeTraceProfile writes p to out and prints its report to w.
func writeTraceProfile(p *spanprofile.Profile, out string, w io.Writer) error {
	if err := spanprofile.WriteFile(out, p); err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "spanprof: profile in %s\n", out)
	if err := report.Text(&buf, p, report.Options{Top: 10}); err != nil {
		return err
	}
	w.Write(buf.Bytes())
	return nil
}

// analyzeTrace analyses the trace file name, printing its progress to
// stderr when it takes long; file names under root are made relative.
func analyzeTrace(name, root string, stderr io.Writer) (*spanprofile.Profile, error) {
	var size int64
	if fi, err := os.Stat(name); err == nil {
		size = fi.Size()
	}
	start := time.Now()
	lastShown := start
	opts := tracepath.Options{Progress: func(events, bytes int64) {
		// Only a long analysis says how far it is, every few seconds.
		if now := time.Now(); now.Sub(lastShown) >= progressPeriod {
			lastShown = now
			fmt.Fprintf(stderr, "spanprof: %s: %s of %s read, %s events, %.0f s\n", name,
				megabytes(bytes), megabytes(size), millions(events), now.Sub(start).Seconds())
		}
	}}
	if root != "" {
		opts.Trim = root + string(filepath.Separator)
	}
	p, err := tracepath.AnalyzeFile(name, opts)
	if err != nil {
		return nil, err
	}
	if d := time.Since(start); d >= progressPeriod {
		fmt.Fprintf(stderr, "spanprof: %s: %s events analysed in %.1f s (%s events/s)\n", name,
			millions(p.Trace.Events), d.Seconds(), millions(int64(float64(p.Trace.Events)/d.Seconds())))
	}
	return p, nil
}

// progressPeriod is how often a long analysis prints its progress.
const progressPeriod = 3 * time.Second

func millions(n int64) string {
	return fmt.Sprintf("%.2fM", float64(n)/1e6)
}

func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
