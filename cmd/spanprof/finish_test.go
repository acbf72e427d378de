package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
)

// TestFinish checks how a command's end is printed: each kind of error on
// its stream, in its form, with its exit status.
func TestFinish(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet(cmdReport.name, flag.ContinueOnError)
	fs.Int("top", 0, "show only the first `n` sites")
	for _, tc := range []struct {
		err            error
		code           int
		stdout, stderr string
	}{
		{nil, exitOK, "", ""},
		{&helpRequest{cmdReport, fs}, exitOK, "usage: " + cmdReport.usage + "\n  -top n\n    \tshow only the first n sites\nRun \"spanprof help report\" for details.\n", ""},
		{usageError(cmdReport, "report takes one FILE,\n got %d", 2), exitUsage, "", "spanprof: report takes one FILE, got 2\nusage: " + cmdReport.usage + "\nRun \"spanprof help report\" for details.\n"},
		{failure(exitFailed, "go test: %v", errors.New("exit status 1")), exitFailed, "", "spanprof: go test: exit status 1\n"},
		{fmt.Errorf("wrapped: %w", failure(130, "interrupted")), 130, "", "spanprof: wrapped: interrupted\n"},
		{errors.New("a spanprof error"), exitUsage, "", "spanprof: a spanprof error\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := finish(&stdout, &stderr, tc.err); code != tc.code || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
			t.Errorf("finish(%v): status %d, stdout %q, stderr %q; want %d, %q, %q", tc.err, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
