// Pgo writes shadow/engine.pgo, the CPU profile that the spanprof command
// compiles the runtime's packages shadow and perf with: Go's
// profile-guided optimization, which inlines the hot calls among the
// engine's functions (docs/benchmarks.md, "The runtime's profile").
//
// Usage:
//
//	go run ./bench/pgo [-only fib,stencil] [-o shadow/engine.pgo]
//	go run ./bench/pgo -flags
//
// It builds each example of the suite (examples/suite.txt, stress cases
// left out) with spanprof build and the build tag spanprof_pgo, under
// which a profiled run writes a CPU profile of itself (shadow/pgo.go);
// runs it on its default input in serial mode at GOMAXPROCS=1, as the
// benchmark's profiled column does; and merges the profiles, keeping only
// the frames of shadow and perf: the programs' own code is none of the
// runtime's business, and the go command compiles only those two packages
// with the profile. Source files are named relative to the repository and
// times are zeroed, so the file holds no trace of the machine it came
// from. `make pgo` runs it; rerun it after changing the engine, which
// TestEngineProfileIsFresh asks for once the profile's hot calls no
// longer match the source.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/spanprof/spanprof/bench/suite"
	"github.com/spanprof/spanprof/rewrite"
)

// runtimeFrames matches the functions of the packages compiled with the
// profile.
var runtimeFrames = regexp.MustCompile(`^github\.com/spanprof/spanprof/(shadow|perf)\.`)

func main() {
	only := flag.String("only", "", "comma-separated examples to run (default: the suite's)")
	out := flag.String("o", filepath.Join("shadow", "engine.pgo"), "the profile to write")
	printFlags := flag.Bool("flags", false, "print the go command's flags that compile the runtime with the profile as it is, and write nothing")
	flag.Parse()
	if *printFlags {
		// For make microbench: the flags spanprof's builds give, which
		// name a copy of the profile by its content (rewrite.EnginePGO).
		pgo, err := rewrite.EnginePGO(".")
		if err == nil && pgo == "" {
			err = fmt.Errorf("no shadow/engine.pgo here: run in the spanprof module")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pgo:", err)
			os.Exit(1)
		}
		fmt.Println(strings.Join(rewrite.PGOFlags(pgo), " "))
		return
	}
	if err := run(*only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "pgo:", err)
		os.Exit(1)
	}
}

func run(only, out string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	examples, err := suite.ParseFile(filepath.Join(root, "examples", "suite.txt"))
	if err != nil {
		return err
	}
	var names []string
	for _, e := range suite.Ready(examples) {
		if !e.Stress {
			names = append(names, e.Name)
		}
	}
	if only != "" {
		want := strings.Split(only, ",")
		for _, w := range want {
			if !slices.Contains(names, w) {
				return fmt.Errorf("-only: %q is not in examples/suite.txt", w)
			}
		}
		names = want
	}
	tmp, err := os.MkdirTemp("", "spanprof-pgo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sp := filepath.Join(tmp, "spanprof")
	if err := command(root, nil, "go", "build", "-o", sp, "./cmd/spanprof"); err != nil {
		return err
	}
	env := append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -tags=spanprof_pgo"))
	var profs []*profile.Profile
	for _, name := range names {
		bin := filepath.Join(tmp, name)
		fmt.Fprintf(os.Stderr, "pgo: %s\n", name)
		if err := command(filepath.Join(root, "examples"), env, sp, "build", "-o", bin, "./"+name); err != nil {
			return err
		}
		cpu := bin + ".cpu"
		runEnv := append(os.Environ(), "GOMAXPROCS=1", "SPANPROF_PGO_OUT="+cpu, "SPANPROF_OUT="+bin+".pb.gz")
		if err := command(tmp, runEnv, bin); err != nil {
			return err
		}
		data, err := os.ReadFile(cpu)
		if err != nil {
			return err
		}
		p, err := profile.ParseData(data)
		if err != nil {
			return fmt.Errorf("%s: %w", cpu, err)
		}
		profs = append(profs, p)
	}
	merged, err := engineProfile(profs, root)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := merged.Write(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pgo: wrote %s: %d samples in the runtime's frames, %d bytes\n", out, len(merged.Sample), buf.Len())
	return nil
}

// engineProfile merges profs and keeps what engine.pgo holds: the frames
// of runtimeFrames, source files relative to root, no times, no binaries.
func engineProfile(profs []*profile.Profile, root string) (*profile.Profile, error) {
	for _, p := range profs {
		// Merge takes profiles of one kind only; the periods of CPU
		// profiles at one rate agree, and the times do not matter.
		p.TimeNanos, p.DurationNanos = 0, 0
		for _, m := range p.Mapping {
			m.File, m.BuildID = "", ""
		}
	}
	merged, err := profile.Merge(profs)
	if err != nil {
		return nil, err
	}
	// Each sample keeps the runtime's frames at its leaf end, up to the
	// first frame of other code: the calls among them are what the
	// compiler can use. Hiding the other frames instead would glue the
	// runtime's frames around them into calls that do not exist (GroupGo
	// "calling" GroupGo, through fib).
	var kept []*profile.Sample
	for _, s := range merged.Sample {
		n := 0
		for _, loc := range s.Location {
			if !allRuntime(loc) {
				break
			}
			n++
		}
		if n > 0 {
			s.Location = s.Location[:n]
			kept = append(kept, s)
		}
	}
	merged.Sample = kept
	merged = merged.Compact()
	for _, f := range merged.Function {
		if rel, err := filepath.Rel(root, f.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			f.Filename = filepath.ToSlash(rel)
		} else {
			f.Filename = filepath.Base(f.Filename)
		}
	}
	merged.Comments = []string{"spanprof: the runtime's CPU profile for profile-guided optimization; go run ./bench/pgo writes it"}
	return merged, merged.CheckValid()
}

// allRuntime reports whether every function of loc, inlined ones too, is
// one of runtimeFrames.
func allRuntime(loc *profile.Location) bool {
	for _, l := range loc.Line {
		if l.Function == nil || !runtimeFrames.MatchString(l.Function.Name) {
			return false
		}
	}
	return len(loc.Line) > 0
}

// command runs name with args in dir, with env (nil: this process's), its
// output on this process's stderr.
func command(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
