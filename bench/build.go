package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spanprof/spanprof/bench/suite"
)

// A variant is one of the builds of an example, run as it is run: the
// last is the plain build again, at the parallel-mode column's GOMAXPROCS.
type variant int

const (
	plain    variant = iota // go build
	elision                 // spanprof build -mode elision
	profiled                // spanprof build (serial mode, the default measure)
	traced                  // go build with runtime/trace started in init
	parallel                // spanprof build -mode parallel, at -parprocs
	plainPar                // the plain build, at -parprocs
	numVariants
)

var variantNames = [numVariants]string{"plain", "elision", "profiled", "traced", "parallel", "plainpar"}

func (v variant) String() string { return variantNames[v] }

// binaries are the builds of one example.
type binaries struct {
	name string
	dir  string // the example's scratch directory: binaries, profile, trace
	bin  [numVariants]string
	// stress marks a stress case (suite.Stress): the table shows it
	// below its summary rows, out of them.
	stress bool
}

// traceEnv names the file the traced build writes its execution trace to.
const traceEnv = "SPANPROF_BENCH_TRACE"

// traceFile is the file the traced build adds to the example's main package.
// It never calls trace.Stop: the program's main returns or calls os.Exit
// without knowing about it, so the last of the trace's buffers is lost. The
// tracer's cost, which is what the benchmark measures, has been paid by then
// for the whole run; only the final flush (a few buffers) is not counted.
const traceFile = `package main

import (
	"fmt"
	"os"
	"runtime/trace"
)

func init() {
	name := os.Getenv("` + traceEnv + `")
	if name == "" {
		return
	}
	f, err := os.Create(name)
	if err == nil {
		err = trace.Start(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "spanprof bench: runtime/trace:", err)
		os.Exit(2)
	}
}
`

// traceFileName is the name the file gets in the example's directory; it
// exists only in the overlay.
const traceFileName = "zz_spanprof_bench_trace.go"

// buildAll builds spanprof and the binaries of every example under tmp,
// before any run, so that no build competes with a timed run for the CPU.
func buildAll(root, tmp string, examples []suite.Example, p *progress) ([]binaries, error) {
	p.printf("building spanprof")
	spanprof := filepath.Join(tmp, "spanprof")
	if err := goCommand(root, "go", "build", "-o", spanprof, "./cmd/spanprof"); err != nil {
		return nil, err
	}
	var all []binaries
	for i, e := range examples {
		p.printf("%d/%d %s build", i+1, len(examples), e.Name)
		b, err := build(root, tmp, spanprof, e.Name)
		if err != nil {
			return nil, err
		}
		all = append(all, b)
	}
	return all, nil
}

// build builds the binaries of the example in examples/name.
func build(root, tmp, spanprof, name string) (binaries, error) {
	b := binaries{name: name, dir: filepath.Join(tmp, name)}
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		return b, err
	}
	for v := range numVariants {
		b.bin[v] = filepath.Join(b.dir, v.String())
	}
	pkg := "./examples/" + name
	overlay, err := writeOverlay(b.dir, filepath.Join(root, "examples", name))
	if err != nil {
		return b, err
	}
	cmds := [numVariants][]string{
		plain:    {"go", "build", "-o", b.bin[plain], pkg},
		elision:  {spanprof, "build", "-mode", "elision", "-o", b.bin[elision], pkg},
		profiled: {spanprof, "build", "-o", b.bin[profiled], pkg},
		traced:   {"go", "build", "-overlay", overlay, "-o", b.bin[traced], pkg},
		parallel: {spanprof, "build", "-mode", "parallel", "-o", b.bin[parallel], pkg},
	}
	b.bin[plainPar] = b.bin[plain] // the same program, run at another GOMAXPROCS
	for v, args := range cmds {
		if args == nil {
			continue
		}
		if err := goCommand(root, args[0], args[1:]...); err != nil {
			return b, fmt.Errorf("%s (%s build): %w", name, variant(v), err)
		}
	}
	return b, nil
}

// writeOverlay writes the runtime/trace file and the overlay that adds it to
// the package in pkgDir, into dir, and returns the overlay's name.
func writeOverlay(dir, pkgDir string) (string, error) {
	src := filepath.Join(dir, traceFileName)
	if err := os.WriteFile(src, []byte(traceFile), 0o644); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(filepath.Join(pkgDir, traceFileName))
	if err != nil {
		return "", err
	}
	j, err := json.Marshal(map[string]map[string]string{"Replace": {abs: src}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, j, 0o644)
}

// goCommand runs a build command in dir and returns its output in the error
// if it fails.
func goCommand(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), args[0], err, bytes.TrimSpace(out))
	}
	return nil
}
