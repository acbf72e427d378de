// Package suite reads examples/suite.txt, the list of the benchmark suite:
// one line per example, its directory name under examples/ and the arguments
// of a small input, for tests. The benchmark driver (bench) and the suite
// test (examples/suite_test.go) both read it through this package, so the
// file has one definition of its format.
//
// Blank lines and lines starting with # are comments. Arguments are separated
// by blanks and cannot be quoted: no example takes an argument with a space.
// An entry whose arguments start with the word TODO is pending: its example
// is still being written, and readers skip it. An entry whose arguments start
// with the word STRESS is a stress case (a worst case for the profiler's
// memory, say): the benchmark shows it apart, out of the suite's geometric
// mean and maximum, which are the overhead on ordinary fork/join programs.
package suite

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Pending is the word that marks an entry whose small input is not filled in.
const Pending = "TODO"

// Stress is the word that marks a stress case.
const Stress = "STRESS"

// An Example is one entry of the suite.
type Example struct {
	Name    string   // directory under examples/, and the benchmark's name
	Args    []string // arguments of the small input; nil when Pending
	Pending bool     // the line says TODO: the example is not ready
	Stress  bool     // the line says STRESS: a stress case, not in the suite's summary
	Line    int      // line in the file, for messages
}

// Parse reads a suite list from r; name is the file's name, used in errors.
func Parse(r io.Reader, name string) ([]Example, error) {
	var (
		examples []Example
		seen     = map[string]int{}
		sc       = bufio.NewScanner(r)
		line     int
	)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		e := Example{Name: fields[0], Line: line}
		if len(fields) > 1 && fields[1] == Stress {
			e.Stress = true
			fields = append(fields[:1], fields[2:]...)
		}
		if strings.ContainsAny(e.Name, `/\.`) || strings.HasPrefix(e.Name, "-") {
			return nil, fmt.Errorf("%s:%d: %q is not the name of a directory under examples/", name, line, e.Name)
		}
		if prev, ok := seen[e.Name]; ok {
			return nil, fmt.Errorf("%s:%d: %s is listed twice (first on line %d)", name, line, e.Name, prev)
		}
		seen[e.Name] = line
		switch args := fields[1:]; {
		case len(args) > 0 && args[0] == Pending:
			e.Pending = true
		case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
			// Every example takes flags only: a bare word is a typo
			// that would otherwise reach the program as an argument.
			return nil, fmt.Errorf("%s:%d: %s: small input %q does not start with a flag", name, line, e.Name, strings.Join(args, " "))
		default:
			e.Args = args
		}
		examples = append(examples, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return examples, nil
}

// ParseFile reads the suite list in the named file.
func ParseFile(name string) ([]Example, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, name)
}

// Ready returns the examples that are not pending, in the file's order.
func Ready(examples []Example) []Example {
	var ready []Example
	for _, e := range examples {
		if !e.Pending {
			ready = append(ready, e)
		}
	}
	return ready
}
