package main

// The package documentation, doc.go, is generated from the help texts, and
// TestDocUpToDate checks that it is current.
//
//go:generate go test -run=TestDocUpToDate -update

import (
	"fmt"
	"io"
	"strings"
)

var cmdHelp = &command{
	name:  "help",
	usage: "spanprof help [COMMAND]",
	short: "show the usage of spanprof or of one command",
	long: `Help prints the list of commands, or the documentation of COMMAND.
`,
	run: runHelp,
}

func runHelp(c *command, args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		printUsage(stdout)
		return exitOK
	case 1:
	default:
		errorf(stderr, "help takes at most one command; usage: %s", c.usage)
		return exitUsage
	}
	topic := lookup(args[0])
	if topic == nil {
		errorf(stderr, "unknown help topic %q (commands: %s)", args[0], commandNames())
		return exitUsage
	}
	printHelp(stdout, topic)
	return exitOK
}

// printHelp prints the documentation of c.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\n\n%s", c.usage, strings.TrimLeft(c.long, "\n"))
}
