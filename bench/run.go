package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spanprof/spanprof/spanprofile"
)

// A sample is what one run of one binary measured.
type sample struct {
	wall   time.Duration // from Start to Wait, as the spawner sees it
	cpu    time.Duration // user + system time of the process
	maxRSS int64         // peak resident set, bytes (0 where unknown)
	shadow int64         // profiled runs: the shadow runtime's peak bytes
	trace  int64         // traced runs: bytes of execution trace written
}

// on returns the time the sample measured on clock c.
func (s sample) on(c clock) time.Duration {
	if c == cpuClock {
		return s.cpu
	}
	return s.wall
}

// A round is one run of each variant, in the order of the variants.
type round [numVariants]sample

// runner runs the binaries with a fixed environment.
type runner struct {
	dir      string   // working directory of the runs
	procs    int      // GOMAXPROCS of the runs
	parProcs int      // GOMAXPROCS of the parallel-mode runs and their plain runs
	env      []string // the driver's environment without the variables it sets
	sp       *spawner // starts the runs (spawner.go)
}

// procsOf returns the GOMAXPROCS that variant v runs with.
func (r *runner) procsOf(v variant) int {
	if v == parallel || v == plainPar {
		return r.parProcs
	}
	return r.procs
}

// baseEnv drops from env the variables the runs must not inherit: the
// driver sets GOMAXPROCS itself, and a SPANPROF_ variable would change what
// the profiled binary measures (or make the elision binary write a profile).
func baseEnv(env []string) []string {
	var keep []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMAXPROCS=") || strings.HasPrefix(kv, "SPANPROF_") {
			continue
		}
		keep = append(keep, kv)
	}
	return keep
}

// measure runs b's binaries runs times, interleaved (plain, elision,
// profiled, traced, parallel, plain at -parprocs, plain, ...), so that the
// two sides of every ratio run close together in time, under the same
// load. Where -parprocs is -procs the plain run serves both. It checks that
// every run exits 0 and prints what the plain program printed in the first
// round.
func (r *runner) measure(b binaries, runs int, progress func(round int)) ([]round, error) {
	var (
		rounds []round
		want   []byte
	)
	for i := range runs {
		progress(i + 1)
		var rd round
		for v := range numVariants {
			if v == plainPar && r.parProcs == r.procs {
				rd[v] = rd[plain]
				continue
			}
			s, stdout, err := r.run(b, v)
			if err != nil {
				return nil, fmt.Errorf("%s (%s, run %d of %d): %w", b.name, v, i+1, runs, err)
			}
			if i == 0 && v == plain {
				want = stdout
			} else if !bytes.Equal(stdout, want) {
				return nil, fmt.Errorf("%s (%s, run %d of %d) printed %q, the plain program %q", b.name, v, i+1, runs, stdout, want)
			}
			rd[v] = s
		}
		rounds = append(rounds, rd)
	}
	return rounds, nil
}

// run runs one binary of b on its default input and returns what it
// measured and printed on standard output.
func (r *runner) run(b binaries, v variant) (sample, []byte, error) {
	env := append(r.env[:len(r.env):len(r.env)], "GOMAXPROCS="+strconv.Itoa(r.procsOf(v)))
	var out string
	switch v {
	case profiled, parallel:
		out = filepath.Join(b.dir, "profile.pb.gz")
		env = append(env, "SPANPROF_OUT="+out)
	case traced:
		out = filepath.Join(b.dir, "trace.out")
		env = append(env, traceEnv+"="+out)
	}
	if out != "" {
		// A file left by an earlier run must not pass for this one's.
		if err := os.Remove(out); err != nil && !os.IsNotExist(err) {
			return sample{}, nil, err
		}
		defer os.Remove(out)
	}
	rep, err := r.sp.run(spawnRequest{Bin: b.bin[v], Dir: r.dir, Env: env})
	if err != nil {
		return sample{}, nil, err
	}
	if rep.Err != "" {
		if !rep.Started {
			return sample{}, nil, errors.New(rep.Err)
		}
		return sample{}, nil, fmt.Errorf("%s\n%s", rep.Err, lastLines(rep.Stderr, 20))
	}
	s := sample{wall: duration(rep.Wall), cpu: duration(rep.CPU), maxRSS: rep.MaxRSS}
	switch v {
	case profiled, parallel:
		p, err := spanprofile.ReadFile(out)
		if err != nil {
			return s, nil, err
		}
		if p.Work <= 0 {
			return s, nil, fmt.Errorf("the profile says work %d", p.Work)
		}
		if v == profiled {
			s.shadow = p.ShadowBytes
		}
	case traced:
		fi, err := os.Stat(out)
		if err != nil {
			return s, nil, fmt.Errorf("no execution trace: %w", err)
		}
		s.trace = fi.Size()
	}
	return s, rep.Stdout, nil
}

// duration converts seconds, as speedup.Sample holds them, to a duration.
func duration(seconds float64) time.Duration {
	return time.Duration(math.Round(seconds * float64(time.Second)))
}

// lastLines returns at most the last n lines of b, for an error message.
func lastLines(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = append([][]byte{[]byte("...")}, lines[len(lines)-n:]...)
	}
	return bytes.Join(lines, []byte("\n"))
}

// progress shows one line of state on a terminal, rewritten in place, or
// one line per step elsewhere (a log keeps every step).
type progress struct {
	w    io.Writer
	tty  bool
	used bool
}

func newProgress(f *os.File) *progress {
	fi, err := f.Stat()
	return &progress{w: f, tty: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) printf(format string, args ...any) {
	msg := "bench: " + fmt.Sprintf(format, args...)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", msg)
	} else {
		fmt.Fprintln(p.w, msg)
	}
	p.used = true
}

// done clears the line on a terminal, so that what follows starts clean.
func (p *progress) done() {
	if p.tty && p.used {
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.used = false
}
