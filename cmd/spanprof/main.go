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
	fmt.Fprintln(stderr, "spanprof: "+oneLine(msg))
}

// oneLine returns msg with its runs of white space, newlines included, made
// single spaces: an error is one line (docs/cli.md).
func oneLine(msg string) string {
	return strings.Join(strings.Fields(msg), " ")
}

// An exitError ends a command: a one-line message, which finish prints
// after "spanprof: ", and the exit status. A usage error names its command
// in usage, and its synopsis follows the message.
type exitError struct {
	code  int
	msg   string
	usage *command
}

func (e *exitError) Error() string { return e.msg }

// failure returns an *exitError with status code and the formatted message.
func failure(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// usageError returns the usage error of command c, status exitUsage.
func usageError(c *command, format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...), usage: c}
}

// A helpRequest is -h or -help on a command's command line: not an error,
// but the end of the command all the same. finish prints the flags.
type helpRequest struct {
	c  *command
	fs *flag.FlagSet
}

func (h *helpRequest) Error() string { return "help requested" }

// finish prints what ends a command, err, and returns the exit status: none
// and exitOK for nil; the flags on stdout and exitOK for a *helpRequest;
// the message (and the synopsis of a usage error) on stderr and the status
// for an *exitError, or an error that wraps one; any other error is one
// line and exitUsage, the status of spanprof's own failures.
func finish(stdout, stderr io.Writer, err error) int {
	var help *helpRequest
	var exit *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &help):
		fmt.Fprintf(stdout, "usage: %s\n", help.c.usage)
		help.fs.SetOutput(stdout)
		help.fs.PrintDefaults()
		fmt.Fprintf(stdout, "Run \"spanprof help %s\" for details.\n", help.c.name)
		return exitOK
	case errors.As(err, &exit):
		errorf(stderr, "%v", err) // what wraps it adds to its message
		if exit.usage != nil {
			printShortUsage(stderr, exit.usage)
		}
		return exit.code
	}
	errorf(stderr, "%v", err)
	return exitUsage
}

// parseFlags parses a command's flags. It returns a *helpRequest on -h, and
// a usage error on a bad flag; the command goes on only on nil.
func parseFlags(c *command, fs *flag.FlagSet, args []string) error {
	// flag would print its own error and the defaults to stderr: keep it
	// quiet and print errors in spanprof's one-line form.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{c, fs}
	}
	return usageError(c, "%s: %v", c.name, err)
}

// printShortUsage prints a command's synopsis and where to read more.
func printShortUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\nRun \"spanprof help %s\" for details.\n", c.usage, c.name)
}
