package speedup

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// An Experiment measures the factored speedup of one main package: it
// builds the program, times it at every processor count with its baseline
// and its serial elision, profiles it, and computes the curves. It is
// "spanprof speedup" without the command line and the output.
type Experiment struct {
	Pkg  string   // the main package, as go build takes it
	Name string   // the package in messages: its import path (MainPackage)
	Args []string // the program's arguments

	Procs []int // the processor counts, sorted, each once
	Runs  int   // runs of each configuration, of which the medians count

	// The baseline T_s is the program with BaselineArgs added to Args, or
	// the command line Baseline; without either, T_s = T_1.
	BaselineArgs []string
	Baseline     []string

	// Dir is a directory of the caller's for the binaries and files of the
	// runs, which it removes.
	Dir string

	// Instrument builds Pkg with spanprof's instrumentation into the binary
	// bin, or says in one line why not: the serial elision and the bounds
	// are extras that the curves do without.
	Instrument func(bin string) error

	// ProfileFile is where the span profile goes, and ProfileEnv the
	// environment of the profiled run, which asks for it there.
	ProfileFile string
	ProfileEnv  []string

	// Progress is told what the experiment does as it does it, a line at a
	// time, and Warn what it leaves out and why, the runs that failed among
	// them (a *RunError); either may be nil.
	Progress func(msg string)
	Warn     func(err error)
}

// A Result is what an experiment measured.
type Result struct {
	// Input holds T_s, T_1, T_elision (0 when not measured), the medians
	// at each processor count, and the span profile (nil when there is
	// none, and then no bounds).
	Input  Input
	Points []Point // the curves, one per processor count

	// Busy is the warning that other processes' load disturbed the runs
	// (Load.Warning), or "".
	Busy string
}

// A BuildError is a go build or go list of the program that failed. Its
// message is the first line of the go command's output.
type BuildError struct{ Msg string }

func (e *BuildError) Error() string { return e.Msg }

// A RunError is a run of the program, its baseline or its instrumented
// build that failed. Stderr is what the program wrote to its standard
// error, which the runs otherwise discard: it says why.
type RunError struct {
	Msg    string // what failed and what became of the experiment, one line
	Err    error  // exec's error
	Stderr []byte
}

func (e *RunError) Error() string { return e.Msg }
func (e *RunError) Unwrap() error { return e.Err }

// MainPackage checks with "go list" that pkg is a main package and returns
// its import path, shortened to be relative to its module. The error is a
// *BuildError, or one that says pkg is not a main package.
func MainPackage(pkg string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command("go", "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}", pkg)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", &BuildError{firstOutputLine(errOut.String(), err)}
	}
	fields := strings.Split(strings.TrimSpace(out.String()), "\t")
	if len(fields) != 3 {
		return "", fmt.Errorf("go list %s: unexpected output %q", pkg, out.String())
	}
	name, path, mod := fields[0], fields[1], fields[2]
	if name != "main" {
		return "", fmt.Errorf("package %s is not a main package", path)
	}
	if rel, ok := strings.CutPrefix(path, mod+"/"); ok && mod != "" {
		return rel, nil
	}
	return path, nil
}

// firstOutputLine returns the first line of a tool's output that is not a
// "#" heading, or err's text when there is none.
func firstOutputLine(output string, err error) string {
	for l := range strings.Lines(output) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return strings.TrimPrefix(l, "./")
		}
	}
	return err.Error()
}

// A config is one program and environment that the experiment times.
type config struct {
	label string   // in the progress line: "P=2", "baseline", "elision"
	procs int      // GOMAXPROCS
	argv  []string // the command line
	env   []string // added to the environment
	// lenient configs are spanprof's own (the instrumented binary): their
	// failure drops what they measure instead of stopping everything.
	lenient bool
	failed  bool
	samples []Sample
}

// walls returns the wall-clock times of the config's samples.
func (c *config) walls() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Wall
	}
	return w
}

// others returns the processor time other processes took during each of
// the config's samples, where it was measured.
func (c *config) others() []float64 {
	var w []float64
	for _, s := range c.samples {
		if s.Machine > 0 {
			w = append(w, s.Others)
		}
	}
	return w
}

// waits returns the run delays of the config's samples.
func (c *config) waits() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Delay
	}
	return w
}

// idles returns the idle times of the config's samples.
func (c *config) idles() []float64 {
	w := make([]float64, len(c.samples))
	for i, s := range c.samples {
		w[i] = s.Idle(c.procs)
	}
	return w
}

// run runs the config once and records the sample. On failure it returns
// the error and the program's standard error.
func (c *config) run() ([]byte, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = append(append(os.Environ(), c.env...), "GOMAXPROCS="+strconv.Itoa(c.procs))
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	s, err := Run(cmd)
	if err != nil {
		return errOut.Bytes(), err
	}
	c.samples = append(c.samples, s)
	return nil, nil
}

// quote returns a command line for messages.
func quote(argv []string) string {
	return strings.Join(argv, " ")
}

func (e *Experiment) progress(format string, args ...any) {
	if e.Progress != nil {
		e.Progress(fmt.Sprintf(format, args...))
	}
}

func (e *Experiment) warn(err error) {
	if e.Warn != nil {
		e.Warn(err)
	}
}

// Run runs the experiment. Its error is a *BuildError when the program
// does not build, a *RunError when it or its baseline fails, or the reason
// the curves cannot be computed from what was measured.
func (e *Experiment) Run() (*Result, error) {
	if p := e.Procs[len(e.Procs)-1]; p > runtime.NumCPU() {
		e.progress("P=%d is more than the %d CPUs: the threads' wait for CPUs will show as work inflation", p, runtime.NumCPU())
	}
	e.progress("building %s", e.Name)
	bin := filepath.Join(e.Dir, filepath.Base(e.Name))
	var buildOut bytes.Buffer
	build := exec.Command("go", "build", "-o", bin, e.Pkg)
	build.Stdout, build.Stderr = &buildOut, &buildOut
	if err := build.Run(); err != nil {
		return nil, &BuildError{firstOutputLine(buildOut.String(), err)}
	}
	// The configurations, in the order each round runs them.
	var configs []*config
	var baseline *config
	switch {
	case len(e.BaselineArgs) > 0:
		baseline = &config{label: "baseline", argv: slices.Concat([]string{bin}, e.Args, e.BaselineArgs)}
	case len(e.Baseline) > 0:
		baseline = &config{label: "baseline", argv: e.Baseline}
	}
	if baseline != nil {
		baseline.procs = 1
		configs = append(configs, baseline)
	}
	byProcs := make(map[int]*config)
	for _, p := range slices.Concat([]int{1}, e.Procs) {
		if byProcs[p] == nil {
			byProcs[p] = &config{label: "P=" + strconv.Itoa(p), procs: p, argv: slices.Concat([]string{bin}, e.Args)}
			configs = append(configs, byProcs[p])
		}
	}
	// The instrumented binary is built when the first round gets to the
	// elision, so that a program that fails with these arguments does so
	// before that longer build.
	instr := filepath.Join(e.Dir, "instrumented")
	elision := &config{label: "elision", procs: 1, argv: slices.Concat([]string{instr}, e.Args),
		env: []string{"SPANPROF_MODE=elision", "SPANPROF_OUT=" + filepath.Join(e.Dir, "elision.pb.gz")}, lenient: true}
	configs = append(configs, elision)
	for r := 1; r <= e.Runs; r++ {
		for _, cfg := range configs {
			if cfg == elision && r == 1 {
				e.progress("building %s instrumented, for the serial elision and the span profile", e.Name)
				if err := e.Instrument(instr); err != nil {
					e.progress("no serial elision and no bounds: %v", err)
					instr, elision.failed = "", true
				}
			}
			if cfg.failed {
				continue
			}
			e.progress("%s run %d/%d", cfg.label, r, e.Runs)
			stderr, err := cfg.run()
			switch {
			case err == nil:
			case cfg.lenient:
				e.warn(&RunError{Msg: fmt.Sprintf("the %s (%s) failed: %v; it is left out", cfg.label, quote(cfg.argv), err), Err: err, Stderr: stderr})
				cfg.failed = true
			default:
				what := e.Name
				if cfg == baseline {
					what = "the baseline " + quote(cfg.argv)
				}
				return nil, &RunError{Msg: fmt.Sprintf("%s failed at %s (run %d/%d): %v", what, cfg.label, r, e.Runs, err), Err: err, Stderr: stderr}
			}
		}
	}

	var prof *spanprofile.Profile
	os.Remove(e.ProfileFile) // a profile of an earlier run must not pass for this one's
	if instr != "" {
		e.progress("profiling %s (serial mode)", e.Name)
		prof = e.profile(instr)
	}

	// T_s, T_1 and T_elision, and the measurements at each P.
	one := Median(byProcs[1].walls())
	in := Input{Serial: one, One: one, Profile: prof}
	if baseline != nil {
		in.Serial = Median(baseline.walls())
	}
	if !elision.failed {
		in.Elision = Median(elision.walls())
	}
	for _, p := range e.Procs {
		cfg := byProcs[p]
		in.Runs = append(in.Runs, Measurement{Procs: p, Time: Median(cfg.walls()), Idle: Median(cfg.idles()),
			Others: Median(cfg.others()), Wait: Median(cfg.waits())})
	}
	// Other processes' load over every run, the baseline's and the
	// elision's included: they all set the curves.
	var load Load
	for _, cfg := range configs {
		for _, s := range cfg.samples {
			load.Add(s, cfg.procs, runtime.NumCPU())
		}
	}
	points, err := Factor(in)
	if err != nil {
		return nil, err
	}
	// A fork/join program on one processor has nothing to wait for: idle
	// time there is I/O, sleeps, or other processes' time that the run
	// delay did not catch, and it is in every I_P as well.
	if idle := Median(byProcs[1].idles()); idle > 0.1*in.One {
		e.progress("at P=1 the program was idle %.0f%% of T_1: it waits for something (input, sleeps, another process), or this system does not report run delays and other processes took that time", 100*idle/in.One)
	}
	return &Result{Input: in, Points: points, Busy: load.Warning()}, nil
}

// profile runs the instrumented binary bin once to write its span profile
// to ProfileFile, and reads it; on failure it warns and returns nil.
func (e *Experiment) profile(bin string) *spanprofile.Profile {
	cmd := exec.Command(bin, e.Args...)
	cmd.Env = e.ProfileEnv
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	if err := cmd.Run(); err != nil {
		e.warn(&RunError{Msg: fmt.Sprintf("the profiled run failed: %v; no bounds", err), Err: err, Stderr: errOut.Bytes()})
		return nil
	}
	p, err := spanprofile.ReadFile(e.ProfileFile)
	if err != nil {
		e.warn(fmt.Errorf("no bounds: %w", err))
		return nil
	}
	return p
}
