package shadow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Several runs of one program, each strand at its shortest (-count N).
//
// What noise is left once the cpu measure has removed the time a thread did
// not run is the time it ran slower: a busy sibling hyperthread, a cache
// another process emptied, an interrupt, a hypervisor that steals time the
// guest kernel cannot see. It is heavy-tailed, and the span, a maximum over
// paths, picks it out. But it only ever adds: a strand's shortest length
// over several runs is the closest reading of its undisturbed length. A
// deterministic program produces the same events in the same order in
// every run of serial mode, so strand i of one run is strand i of the next:
// run k reads the minima of runs 1..k-1 from a file, takes the minimum with
// its own reading strand by strand as the strands end, computes its whole
// profile from those, and writes the new minima for run k+1.
//
// Each strand is stored with a tag of the shadow stack where it ended (the
// innermost site and the depth). When a run's tags stop matching (the
// program is not deterministic: a map's order, a timer, the scheduler
// deciding a goroutine site's order), it keeps its own readings from there
// on, stops writing, and its profile says where the runs parted.
//
// The files are a stream of (uvarint length, uvarint tag) pairs, read and
// written through buffers of their own, so a strand costs a few
// nanoseconds more, and nothing at all in a run that merges nothing.

// The environment of a run that is one of several (spanprof run -count).
const (
	// EnvStrands names the directory of the strand files.
	EnvStrands = "SPANPROF_STRANDS"
	// EnvRun is the run's number, from 1.
	EnvRun = "SPANPROF_RUN"
)

// strandBuf is the size of the strand files' buffers.
const strandBuf = 1 << 16

// strands merges the strands of one run with those of the runs before it.
type strands struct {
	in    *os.File
	rbuf  []byte
	rpos  int
	out   *os.File
	wbuf  []byte
	tmp   string // out's name until it is complete
	final string // its name then

	run     int64
	n       int64 // strands seen
	parted  int64 // strand where the runs parted; -1 while they agree
	err     error // why merging stopped, for the note
	noInput bool  // run 1: nothing to merge with
}

// strandFile returns the name of run k's strand file in dir. The program is
// known by its working directory and binary name: go test runs every test
// binary in its package's directory.
func strandFile(dir string, k int) string {
	h := fnv.New64a()
	wd, _ := os.Getwd()
	io.WriteString(h, wd)
	h.Write([]byte{0})
	io.WriteString(h, filepath.Base(os.Args[0]))
	return filepath.Join(dir, fmt.Sprintf("%016x.%d", h.Sum64(), k))
}

// cpuFile names the file where run 1 leaves the CPU that serial mode kept
// its thread on (pinThread), so that the runs after it measure their
// strands on the same CPU and their minima compare like with like.
func cpuFile(dir string) string { return strandFile(dir, 0) + ".cpu" }

// runCPU returns the CPU run 1 was kept on, for a later run of several, or
// -1.
func runCPU() int {
	dir := os.Getenv(EnvStrands)
	if k, _ := strconv.Atoi(os.Getenv(EnvRun)); dir == "" || k < 2 {
		return -1
	}
	b, err := os.ReadFile(cpuFile(dir))
	if err != nil {
		return -1
	}
	cpu, err := strconv.Atoi(string(b))
	if err != nil {
		return -1
	}
	return cpu
}

// recordCPU leaves cpu for the runs after run 1 of several.
func recordCPU(cpu int) {
	dir := os.Getenv(EnvStrands)
	if k, _ := strconv.Atoi(os.Getenv(EnvRun)); dir == "" || k != 1 || cpu < 0 {
		return
	}
	os.WriteFile(cpuFile(dir), []byte(strconv.Itoa(cpu)), 0o644)
}

// openStrands sets up the merge from the environment, or returns nil when
// the run is not one of several.
func openStrands() (*strands, error) {
	dir := os.Getenv(EnvStrands)
	if dir == "" {
		return nil, nil
	}
	k, err := strconv.Atoi(os.Getenv(EnvRun))
	if err != nil || k < 1 {
		return nil, fmt.Errorf("spanprof: %s=%q is not a run number", EnvRun, os.Getenv(EnvRun))
	}
	s := &strands{run: int64(k), parted: -1, final: strandFile(dir, k)}
	if k > 1 {
		f, err := os.Open(strandFile(dir, k-1))
		if err != nil {
			// The previous run wrote none (it parted, or failed): this
			// run stands alone.
			s.err = errors.New("the previous run left no strands to merge with")
			s.parted = 0
			return s, nil
		}
		s.in, s.rbuf = f, make([]byte, 0, strandBuf)
	} else {
		s.noInput = true
	}
	s.tmp = s.final + ".tmp"
	f, err := os.Create(s.tmp)
	if err != nil {
		return nil, fmt.Errorf("spanprof: strand file: %w", err)
	}
	s.out, s.wbuf = f, make([]byte, 0, strandBuf)
	return s, nil
}

// merge returns the length of strand n, whose own reading is d and whose tag
// is tag: the shortest over this run and the runs before, while the runs
// agree.
func (s *strands) merge(d int64, tag uint64) int64 {
	if s.parted >= 0 {
		return d
	}
	n := s.n
	s.n++
	if !s.noInput {
		pd, ptag, ok := s.next()
		if !ok || ptag != tag {
			s.part(n, ok)
			return d
		}
		if pd < d {
			d = pd
		}
	}
	if d < 0 {
		d = 0
	}
	s.wbuf = binary.AppendUvarint(s.wbuf, uint64(d))
	s.wbuf = binary.AppendUvarint(s.wbuf, tag)
	if len(s.wbuf) > strandBuf-32 {
		s.flush()
	}
	return d
}

// next reads the previous runs' strand.
func (s *strands) next() (d int64, tag uint64, ok bool) {
	if len(s.rbuf)-s.rpos < 2*binary.MaxVarintLen64 && s.in != nil {
		s.fill()
	}
	v, k := binary.Uvarint(s.rbuf[s.rpos:])
	if k <= 0 {
		return 0, 0, false
	}
	t, j := binary.Uvarint(s.rbuf[s.rpos+k:])
	if j <= 0 {
		return 0, 0, false
	}
	s.rpos += k + j
	return int64(v), t, true
}

//go:noinline
func (s *strands) fill() {
	rest := copy(s.rbuf[:cap(s.rbuf)], s.rbuf[s.rpos:])
	n, err := io.ReadFull(s.in, s.rbuf[rest:cap(s.rbuf)])
	s.rbuf, s.rpos = s.rbuf[:rest+n], 0
	if err != nil {
		s.in.Close()
		s.in = nil
	}
}

//go:noinline
func (s *strands) flush() {
	if s.out == nil {
		s.wbuf = s.wbuf[:0]
		return
	}
	if _, err := s.out.Write(s.wbuf); err != nil {
		s.fail(fmt.Errorf("writing strands: %w", err))
	}
	s.wbuf = s.wbuf[:0]
}

// part stops merging at strand n: the runs' events differ there (or the
// previous run's file ended early, when more is false).
//
//go:noinline
func (s *strands) part(n int64, more bool) {
	s.parted = n
	if more {
		s.err = fmt.Errorf("the runs' events differ from event %d on (the program is not deterministic)", n)
	} else {
		s.err = fmt.Errorf("this run has more events than the one before (from event %d on; the program is not deterministic)", n)
	}
	s.discard()
}

// stopAt ends merging because the run went where strands cannot be matched
// (a goroutine running for real).
func (s *strands) stopAt(why string) {
	if s.parted < 0 {
		s.parted = s.n
		s.err = errors.New(why)
		s.discard()
	}
}

func (s *strands) fail(err error) {
	s.parted = s.n
	s.err = err
	s.discard()
}

// discard drops the output: a later run must not merge with strands that no
// longer follow the program's events.
func (s *strands) discard() {
	if s.out != nil {
		s.out.Close()
		os.Remove(s.tmp)
		s.out = nil
	}
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}

// close completes the run's strand file and says how the merge went: the
// number of runs merged into the profile, and why fewer than this run's
// number, if so.
func (s *strands) close() (runs int64, note string) {
	if s.parted < 0 && !s.noInput {
		// The run ended before the runs before it did.
		if _, _, ok := s.next(); ok {
			s.parted = s.n
			s.err = fmt.Errorf("this run has fewer events than the one before (%d; the program is not deterministic)", s.n)
			s.discard()
		}
	}
	if s.parted >= 0 {
		if s.parted > 0 && s.run > 1 {
			return 1, fmt.Sprintf("%s; its first %d strands are the shortest over %d runs, the rest this run's own", s.err, s.parted, s.run)
		}
		return 1, s.err.Error()
	}
	s.flush()
	if s.out != nil {
		err := s.out.Close()
		s.out = nil
		if err == nil {
			err = os.Rename(s.tmp, s.final)
		}
		if err != nil {
			os.Remove(s.tmp)
			return s.run, "writing strands: " + err.Error()
		}
	}
	if s.in != nil {
		s.in.Close()
	}
	return s.run, ""
}
