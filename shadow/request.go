package shadow

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// profileByDefault is set to "1" by `spanprof build` (-ldflags=-X): a binary
// built to be profiled profiles without SPANPROF_OUT.
var profileByDefault string

// requested reports whether the process was asked for a profile. Rewritten
// code that nobody asked to profile (a plain `go test` or `go run` after
// `spanprof rewrite -w`) runs as the original does, as a `go build -cover`
// binary does without GOCOVERDIR: no engine, so every spawn is a real
// goroutine, no serial elision, no watchdog and no signal handler. A
// profile is asked for by SPANPROF_OUT or SPANPROF_MODE (which spanprof run
// and test set), by `spanprof build`, and in a test binary by the
// -spanprofile flag, looked for in the arguments because the package's
// initialization, where the run starts, comes before flag parsing.
func requested() bool {
	if os.Getenv(envOut) != "" || os.Getenv(envMode) != "" || profileByDefault == "1" {
		return true
	}
	return testing.Testing() && flagValue(os.Args[1:], "spanprofile") != ""
}

// flagValue returns the value of the flag name in args as package flag would
// parse it (-name=v, --name=v, -name v), or "" if it is not there.
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		k, val, hasVal := strings.Cut(a, "=")
		if k != name {
			if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // "-test.run X": go test passes "-test.run=X", but people may not
			}
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		v = val
	}
	return v
}

// oneTestAtATime makes a profiled test binary run its parallel tests one at
// a time (the default of -test.parallel, which the command line overrides).
func oneTestAtATime() { flag.Set("test.parallel", "1") }
