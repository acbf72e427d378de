// Package tracepath computes the work, span and critical path of any Go
// program from its execution trace (runtime/trace, go test -trace), with
// no rewriting: spanprof's trace mode (docs/trace-mode.md).
//
// The trace, read with golang.org/x/exp/trace, the Go team's parser, gives
// the DAG of the run:
//
//   - a strand is an interval in which a goroutine of the program is
//     executing: running on a P, or in a system call while it keeps its P.
//     Time runnable or blocked (a system call that lost its P included) is
//     no strand's;
//   - the edges are a goroutine's program order, its creation (from the
//     creator at the go statement), and every unblocking: from the
//     goroutine whose event made a waiting goroutine runnable (a channel
//     send or close, an unlock, a Done, a Cond signal, …; the trace
//     attributes the Waiting->Runnable transition to it) to the waiter's
//     next strand. A goroutine woken by no goroutine (a timer, the network
//     poller) has no edge in, and a wait that did not block leaves none;
//   - the runtime's own goroutines (GC workers, sweeper, scavenger,
//     finalizers, the tracer's and the CPU profiler's) are not the
//     program's: their time is reported, not counted, and what they wake
//     has no edge from them. GC mark assists are part of the assisting
//     goroutine's strand.
//
// A piece of a strand lasts what the trace's clock says, less what the CPU
// profiler's samples show its thread did not run (cpuBound): on a busy
// machine the system runs other processes while a goroutine holds its P.
//
// The span is the longest path, with strands weighted by their length,
// computed in one pass in time order: each goroutine carries the length of
// the longest path ending where it stands, an edge offers its source's to
// the goroutine it wakes, which takes it when it next runs if longer. Each
// path also carries its profile, the time every calling context holds on
// it (a persistent array, shared in O(1) by an edge), so that the critical
// path's profile is known at the end without keeping the DAG: memory is the
// frontier's (live goroutines, pending edges, open tasks) and the distinct
// stacks', not the trace's. runtime/trace tasks get critical paths of their
// own, through their strands (tasks.go).
//
// A strand's time goes to stacks: each piece of it between two events with
// stacks goes to the CPU profile samples taken in it, when the trace has
// them, else to the stack of the event that ended the piece, down to the
// profiled module's code that led there (stacks.go). Stacks are rooted at
// the stack of the go statement that created the goroutine, and recursion
// is folded, as serial mode folds it. The profile is a span profile
// (package spanprofile) whose sites are frames.
package tracepath

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/exp/trace"

	"github.com/spanprof/spanprof/spanprofile"
)

// Options configure an analysis.
type Options struct {
	// Trim is removed from the start of every file name that has it: the
	// root of the profiled module, with its trailing separator, so that
	// sites read as in the other modes.
	Trim string
	// Progress, when set, is called every ProgressEvery events with the
	// events and bytes read so far (bytes 0 when unknown).
	Progress func(events, bytes int64)
}

// ProgressEvery is how many events pass between calls of Options.Progress.
const ProgressEvery = 1 << 18

// Analyze reads an execution trace from r and returns its span profile.
// A trace that is not one, or is corrupt or truncated, is an error of one
// line.
func Analyze(r io.Reader, opts Options) (*spanprofile.Profile, error) {
	cr := &countingReader{r: r}
	tr, err := trace.NewReader(bufio.NewReaderSize(cr, 1<<20))
	if err != nil {
		if msg := oneLine(err); !strings.Contains(msg, "not a Go execution trace") {
			return nil, fmt.Errorf("not a Go execution trace: %s", msg)
		}
		return nil, errors.New("not a Go execution trace")
	}
	a := newAnalyzer(opts.Trim)
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			// The parser says "failed to read full batch" of a trace cut
			// inside a batch, and gives io.ErrUnexpectedEOF elsewhere.
			what := "corrupt"
			if msg := oneLine(err); errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(msg, "failed to read full batch") {
				what = "truncated"
			}
			return nil, fmt.Errorf("%s: the trace fails after %d events, %d bytes read: %s", what, a.events, cr.n, oneLine(err))
		}
		a.event(ev)
		if opts.Progress != nil && a.events%ProgressEvery == 0 {
			opts.Progress(a.events, cr.n)
		}
	}
	if a.events == 0 {
		return nil, errors.New("the trace holds no events")
	}
	a.finish()
	p := a.profile()
	p.Trace.Bytes = cr.n
	return p, nil
}

// AnalyzeFile analyzes the named trace file; its errors name the file.
func AnalyzeFile(name string, opts Options) (*spanprofile.Profile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Analyze(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
