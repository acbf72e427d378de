package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/spanprof/spanprof/perf"
	"github.com/spanprof/spanprof/shadow"
)

// The checks that run, test and build make before anything is loaded,
// rewritten, built or run (docs/cli.md): a measure that does not open on this
// machine, or an -o where no file can be written, would otherwise show only
// after the whole build and run, with the profile lost.

// openMeasure opens a measure for probeMeasure; tests replace it to make a
// measure fail on any machine.
var openMeasure = perf.Open

// probeMeasure reports whether the named measure opens on this machine, as
// the instrumented program will open it: on a goroutine locked to its OS
// thread, since per-thread counters count the thread that opens them. The
// measure is closed at once. The error is perf's one-line message (an
// *perf.OpenError names the measure to use instead).
func probeMeasure(name string) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine, and whatever
		// the open left in it with the thread.
		runtime.LockOSThread()
		m, err := openMeasure(name)
		if err == nil {
			err = m.Close()
		}
		errc <- err
	}()
	return <-errc
}

// runMeasure returns the measure an instrumented program run by run or
// test opens: -measure, else $SPANPROF_MEASURE, which the program inherits,
// else the default; and where it comes from, for messages.
func (f *profFlags) runMeasure() (name, from string) {
	if f.measure != "" {
		return f.measure, "-measure " + f.measure
	}
	if m := os.Getenv("SPANPROF_MEASURE"); m != "" {
		return m, "SPANPROF_MEASURE=" + m
	}
	mode := f.mode
	if mode == "" {
		mode = os.Getenv("SPANPROF_MODE")
	}
	d := shadow.DefaultMeasure(mode)
	return d, "the default measure " + d
}

// checkMeasure probes the measure named, coming from from, and returns why it
// does not open.
func checkMeasure(name, from string) error {
	err := probeMeasure(name)
	if err == nil {
		return nil
	}
	var oe *perf.OpenError
	if errors.As(err, &oe) && strings.HasPrefix(from, "-measure") {
		// perf's message names the measure and the fallback already.
		return failure(exitUsage, "%v", err)
	}
	return failure(exitUsage, "%s: %v", from, err)
}

// checkWritable reports, as a one-line error naming -o, why no file can be
// created in directory dir, by creating a file there and removing it: no
// file already in dir is touched, the profile of an earlier run included.
func checkWritable(out, dir string) error {
	f, err := os.CreateTemp(dir, ".spanprof-probe-")
	if err == nil {
		name := f.Name()
		f.Close()
		return os.Remove(name)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("-o %s: %v", out, err)
	}
	switch {
	case errors.Is(errno, fs.ErrNotExist):
		return fmt.Errorf("-o %s: directory %s does not exist", out, dir)
	case errno == syscall.ENOTDIR:
		return fmt.Errorf("-o %s: %s is not a directory", out, dir)
	}
	return fmt.Errorf("-o %s: cannot create a file in %s: %v", out, dir, errno)
}

// checkProfileOut checks that the profile file out (absolute) can be
// written: it is not a directory and its directory takes a new file.
func checkProfileOut(out string) error {
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("-o %s is a directory: want the profile's file name", out)
	}
	return checkWritable(out, filepath.Dir(out))
}

// checkBinaryOut checks that go build can write the binary bin (absolute):
// into bin when it is a directory, as go build does, else into its
// directory.
func checkBinaryOut(bin string) error {
	if fi, err := os.Stat(bin); err == nil && fi.IsDir() {
		return checkWritable(bin, bin)
	}
	return checkWritable(bin, filepath.Dir(bin))
}

// preflight makes the checks of run and test, whose profile goes to out
// (absolute), and returns the first that fails.
func preflight(pf *profFlags, out string) error {
	if pf.mode == "elision" {
		return nil // it opens no measure and writes no profile
	}
	// Trace mode opens no measure: the trace's clock is the runtime's.
	if name, from := pf.runMeasure(); pf.mode != "trace" {
		if err := checkMeasure(name, from); err != nil {
			return err
		}
	}
	if err := checkProfileOut(out); err != nil {
		return failure(exitUsage, "%v", err)
	}
	return nil
}

// orList returns names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// tailWriter passes writes through to w and keeps the last line written,
// so that run can tell the instrumented program's refusal to start from a
// failure of the program itself.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte // the end of what was written, at most tailMax bytes
}

const tailMax = 4096

func (t *tailWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.mu.Lock()
	t.tail = append(t.tail, p[:n]...)
	if len(t.tail) > tailMax {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailMax:]...)
	}
	t.mu.Unlock()
	return n, err
}

// lastLine returns the last non-empty line written.
func (t *tailWriter) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return lastLine(string(t.tail))
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// startRefused reports whether an instrumented program that exited with
// status code, writing no profile, and whose standard error ended with
// last, refused to start profiling: the runtime then prints one line, perf's
// or its own, and exits with status 2 before the program's main runs (or,
// after it, when it cannot write the profile). That is spanprof's error,
// status 2, not the program's failure. A program that exits 2 itself (the
// flag package does on a bad flag) ends with a line of its own.
func startRefused(code int, last string) bool {
	return code == exitUsage && (strings.HasPrefix(last, "perf: ") || strings.HasPrefix(last, "spanprof: "))
}
