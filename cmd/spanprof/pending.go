package main

import "io"

// The command below is documented (DESIGN §7) but not built yet: running
// it says so and fails. It moves to its own file when it is written.

const notYet = `
This command is not yet available in this build.
`

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
