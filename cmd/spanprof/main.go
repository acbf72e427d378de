// The package documentation is doc.go, generated from the help texts.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses, a contract (docs/cli.md). A command interrupted by a
// signal exits with 128 plus the signal's number (interrupted).
const (
	exitOK     = 0
	exitFailed = 1 // the profiled program failed
	exitUsage  = 2 // usage or build error
)

// A command is one subcommand of spanprof.
type command struct {
	name  string
	usage string // the synopsis: "spanprof report [-format ...] FILE"
	short string // one line for the command list
	long  string // the text of "spanprof help NAME", after the synopsis
	// run runs the command c on the arguments after its name and returns
	// the exit status. It takes c rather than naming its own variable,
	// which would be an initialization cycle.
	run func(c *command, args []string, stdout, stderr io.Writer) int
}

// commands lists spanprof's commands in the order "spanprof help" and the
// package documentation show them. It is set in init because help refers
// to it.
var commands []*command

func init() {
	commands = []*command{cmdRun, cmdTest, cmdBuild, cmdTrace, cmdReport, cmdRewrite, cmdSpeedup, cmdHelp}
}

// lookup returns the named command, or nil.
func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// commandNames returns the names of the commands, comma-separated.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// run runs spanprof with the command-line arguments args (without the
// program name) and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "spanprof: unknown command %q (commands: %s); run \"spanprof help\" for usage\n", args[0], commandNames())
		return exitUsage
	}
	return c.run(c, args[1:], stdout, stderr)
}

// summary is the first paragraph of "spanprof help" and of the package
// documentation.
const summary = `spanprof measures the work, span and parallelism of Go fork/join programs
and names the code that limits their speedup.
`

// printUsage prints the list of commands.
func printUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(summary + "\nUsage:\n\n\tspanprof <command> [arguments]\n\nThe commands are:\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "\t%-8s %s\n", c.name, c.short)
	}
	b.WriteString("\nUse \"spanprof help <command>\" for more information about a command.\n")
	io.WriteString(w, b.String())
}

// errorf prints a one-line error, prefixed "spanprof: ", to stderr.
func errorf(stderr io.Writer, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintln(stderr, "spanprof: "+strings.Join(strings.Fields(msg), " "))
}

// parseFlags parses a command's flags. On -h it prints the usage and the
// flags to stdout and returns exitOK; on a bad flag it prints a one-line
// error and the synopsis to stderr and returns exitUsage; ok reports whether
// the command should go on.
func parseFlags(c *command, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	// flag would print its own error and the defaults to stderr: keep it
	// quiet and print errors in spanprof's one-line form.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil {
		return exitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: %s\n", c.usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fmt.Fprintf(stdout, "Run \"spanprof help %s\" for details.\n", c.name)
		return exitOK, false
	}
	errorf(stderr, "%s: %v", c.name, err)
	printShortUsage(stderr, c)
	return exitUsage, false
}

// printShortUsage prints a command's synopsis and where to read more.
func printShortUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\nRun \"spanprof help %s\" for details.\n", c.usage, c.name)
}
