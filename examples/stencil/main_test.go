package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun runs the program in its three modes on the same input and checks
// that all pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-rows", "3", "-cols", "3", "-steps", "1"},
		{"-rows", "40", "-cols", "57", "-steps", "0"},
		{"-rows", "40", "-cols", "57", "-steps", "9", "-chunk", "5", "-grain", "3"},
		{"-rows", "130", "-cols", "70", "-steps", "4", "-grain", "0"},
		{"-rows", "64", "-cols", "64", "-steps", "3", "-chunk", "100", "-grain", "100"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var inner, outer, serial bytes.Buffer
			if err := run(args, &inner); err != nil {
				t.Fatalf("inner: %v", err)
			}
			if err := run(append(args, "-outer"), &outer); err != nil {
				t.Fatalf("outer: %v", err)
			}
			if err := run(append(args, "-serial"), &serial); err != nil {
				t.Fatalf("serial: %v", err)
			}
			if inner.String() != serial.String() || outer.String() != serial.String() {
				t.Errorf("printed %q (inner), %q (outer), %q (serial), want all the same", inner.String(), outer.String(), serial.String())
			}
			if !strings.HasPrefix(serial.String(), "heat ") {
				t.Errorf("printed %q, want a line starting %q", serial.String(), "heat ")
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-rows", "2"}, {"-cols", "2"}, {"-steps", "-1"}, {"-chunk", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

func TestCheck(t *testing.T) {
	g := newGrid(20, 30)
	heatSerial(g, 5)
	if err := check(g, 5); err != nil {
		t.Errorf("check after 5 steps: %v", err)
	}
	if err := check(g, 6); err == nil {
		t.Error("check accepted a grid for the wrong number of steps")
	}
	g.cur[7*g.cols+11] += 1e-6
	if err := check(g, 5); err == nil {
		t.Error("check accepted a perturbed grid")
	}
}
