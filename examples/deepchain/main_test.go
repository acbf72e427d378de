package main

import (
	"bytes"
	"strconv"
	"testing"
)

// TestRun runs the chain in both modes at a few lengths and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		args := []string{"-n", strconv.Itoa(n), "-work", "3"}
		var outs [2]bytes.Buffer
		for i, mode := range [][]string{nil, {"-serial"}} {
			if err := run(append(args, mode...), &outs[i]); err != nil {
				t.Fatalf("run(%q): %v", append(args, mode...), err)
			}
		}
		if outs[0].String() != outs[1].String() || !bytes.HasPrefix(outs[0].Bytes(), []byte(strconv.Itoa(n)+" links, sum ")) {
			t.Errorf("-n %d: the chain printed %q and the loop %q", n, outs[0].String(), outs[1].String())
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-work", "-2"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}
