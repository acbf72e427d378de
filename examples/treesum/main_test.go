package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"},
		{"-n", "1"},
		{"-n", "1000", "-depth", "0"},
		{"-n", "1000", "-depth", "3"},
		{"-n", "1000", "-depth", "64"},
		{"-n", "100000"},
		{"-n", "1000", "-cost", "3"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var par, ser bytes.Buffer
			if err := run(args, &par); err != nil {
				t.Fatalf("parallel: %v", err)
			}
			if err := run(append(args, "-serial"), &ser); err != nil {
				t.Fatalf("serial: %v", err)
			}
			if par.String() != ser.String() {
				t.Errorf("parallel printed %q, serial printed %q", par.String(), ser.String())
			}
			if want := fmt.Sprintf("summed %s nodes, sum ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-depth", "-1"}, {"-cost", "-1"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestBuild checks that build makes a balanced search tree with one node
// per key: an in-order walk yields the values of 0, 1, ..., n-1, and the
// height is the least possible.
func TestBuild(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 100} {
		var got []uint64
		var walk func(t *node, depth int) int
		walk = func(t *node, depth int) int {
			if t == nil {
				return depth
			}
			hl := walk(t.left, depth+1)
			got = append(got, t.val)
			return max(hl, walk(t.right, depth+1))
		}
		height := walk(build(0, n), 0)
		if len(got) != n {
			t.Fatalf("n=%d: tree has %d nodes", n, len(got))
		}
		for k, v := range got {
			if v != value(k) {
				t.Fatalf("n=%d: node %d in order holds %x, want %x", n, k, v, value(k))
			}
		}
		if want := minHeight(n); height != want {
			t.Errorf("n=%d: height %d, want %d", n, height, want)
		}
	}
}

// minHeight returns the height of the shortest binary tree with n nodes.
func minHeight(n int) int {
	h := 0
	for (1<<h)-1 < n {
		h++
	}
	return h
}

// TestCost: -cost hashes each node's key that many rounds while building
// (what the what-if case study makes faster or slower), without changing
// the tree or the sum; -cost 0 hashes nothing.
func TestCost(t *testing.T) {
	var lines []string
	for _, cost := range []string{"0", "4"} {
		buildTag = 0
		var out bytes.Buffer
		if err := run([]string{"-n", "1000", "-cost", cost}, &out); err != nil {
			t.Fatal(err)
		}
		if (buildTag != 0) != (cost != "0") {
			t.Errorf("-cost %s: the construction's hashes came to %x", cost, buildTag)
		}
		lines = append(lines, out.String())
	}
	if lines[0] != lines[1] {
		t.Errorf("-cost changed the result: %q, %q", lines[0], lines[1])
	}
}
