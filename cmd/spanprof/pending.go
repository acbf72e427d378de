package main

import "io"

// The commands below are documented (DESIGN §7) but not built yet: running
// one says so and fails. Each moves to its own file when it is written.

// sharedFlags documents the flags of run, test and build.
const sharedFlags = `
The flags shared by run, test and build are:

	-o file
		write the span profile to file (default spanprof.pb.gz).
	-mode serial|parallel
		serial (the default) runs every serially elidable spawn inline, as
		Cilkview does, so results are deterministic; parallel runs goroutines
		in parallel and is the mode for programs that talk over channels.
	-measure clock|instructions|cycles|task-clock
		what a strand's length is measured in (default clock).
	-burden duration
		the scheduling cost charged to each spawn in the burdened span
		(default: calibrated on this machine).

An instrumented binary reads SPANPROF_OUT, SPANPROF_MODE and SPANPROF_MEASURE
from its environment; spanprof run sets them.
`

const notYet = `
This command is not yet available in this build.
`

var cmdRun = &command{
	name:  "run",
	usage: "spanprof run [flags] [PKG] [-- ARGS...]",
	short: "build a main package instrumented, run it, write the profile, print the summary",
	long: `Run builds the main package PKG (default .) with spanprof's instrumentation,
runs it with ARGS, writes the span profile and prints the summary of
"spanprof report".

Exit status: 0 on success, 1 if the profiled program failed (its status is
shown), 2 on a usage or build error.
` + sharedFlags + notYet,
	run: pending,
}

var cmdTest = &command{
	name:  "test",
	usage: "spanprof test [flags] [PKGS...] [-- GOTESTFLAGS...]",
	short: "the same as run, for the tests of packages",
	long: `Test builds the tests of PKGS with spanprof's instrumentation, runs them with
GOTESTFLAGS, writes the span profile and prints the summary.

After "spanprof rewrite -w", "go test ./pkg -spanprofile=FILE" writes FILE
without spanprof test.
` + sharedFlags + notYet,
	run: pending,
}

var cmdBuild = &command{
	name:  "build",
	usage: "spanprof build [flags] -o BIN [PKG]",
	short: "build the instrumented binary without running it",
	long: `Build builds the main package PKG (default .) with spanprof's instrumentation
into BIN. Running BIN writes a span profile (see SPANPROF_OUT below).
` + sharedFlags + notYet,
	run: pending,
}

var cmdRewrite = &command{
	name:  "rewrite",
	usage: "spanprof rewrite [-w | -d | -l] [-undo] PKGS...",
	short: "codemod: instrument the source of packages in place",
	long: `Rewrite instruments the source of PKGS, as run and test do in a temporary
overlay, but for keeps.

	-w	write the rewritten files (atomically; the tree stays gofmt-clean)
	-d	print a diff instead of writing
	-l	list the files that would change
	-undo	restore the original files exactly (go.mod and go.sum included)
` + notYet,
	run: pending,
}

var cmdSpeedup = &command{
	name:  "speedup",
	usage: "spanprof speedup [flags] [PKG] [-- ARGS...]",
	short: "measure the empirical factored speedup on 1 to NumCPU cores",
	long: `Speedup runs the program uninstrumented with GOMAXPROCS from 1 to the number
of CPUs, several times each, measures idle time and work inflation, and draws
the factored speedup curves (linear, maximal, idle-specific,
inflation-specific, actual) over the bounds of a span profile.
` + notYet,
	run: pending,
}

// pending is the run function of a command that is not built yet.
func pending(c *command, args []string, stdout, stderr io.Writer) int {
	errorf(stderr, "%s is not yet available in this build", c.name)
	return exitUsage
}
