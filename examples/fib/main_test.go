package main

import (
	"bytes"
	"strconv"
	"testing"
)

// TestRun runs the program in both modes and checks that both pass their
// self-check and print the expected line.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "fib(0) = 0\n"},
		{1, "fib(1) = 1\n"},
		{2, "fib(2) = 1\n"},
		{20, "fib(20) = 6765\n"},
	} {
		args := []string{"-n", strconv.Itoa(tc.n)}
		for _, mode := range [][]string{nil, {"-serial"}} {
			var out bytes.Buffer
			if err := run(append(args, mode...), &out); err != nil {
				t.Fatalf("run(%q): %v", append(args, mode...), err)
			}
			if out.String() != tc.want {
				t.Errorf("run(%q) printed %q, want %q", append(args, mode...), out.String(), tc.want)
			}
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, n := range []string{"-1", "93"} {
		if err := run([]string{"-n", n}, new(bytes.Buffer)); err == nil {
			t.Errorf("run with -n %s succeeded, want an error", n)
		}
	}
}

// TestIterativeFib pins the reference the self-check trusts, up to the
// largest n the program accepts.
func TestIterativeFib(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 10: 55, 50: 12586269025, 92: 7540113804746346429} {
		if got := iterativeFib(n); got != want {
			t.Errorf("iterativeFib(%d) = %d, want %d", n, got, want)
		}
	}
}
