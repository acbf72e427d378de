package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same grid and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-rows", "3", "-cols", "3", "-steps", "5"},
		{"-rows", "64", "-cols", "32", "-steps", "0"},
		{"-rows", "128", "-cols", "64", "-steps", "20"},
		{"-rows", "101", "-cols", "37", "-steps", "30", "-cutoff", "1"},
		{"-rows", "50", "-cols", "200", "-steps", "10", "-cutoff", "1000"},
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
			if want := fmt.Sprintf("heat %sx%s grid, %s steps, checksum ", args[1], args[3], args[5]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rows", "2"},
		{"-cols", "2"},
		{"-steps", "-1"},
		{"-cutoff", "0"},
	} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestStepMatchesStripe checks that the parallel step, at every cutoff,
// computes the same next grid as one serial stripe over all interior rows,
// from a grid that is not the smooth initial mode.
func TestStepMatchesStripe(t *testing.T) {
	defer func(c int) { coarsening = c }(coarsening)
	want := newGrid(37, 21)
	for i := range want.cur {
		want.cur[i] = float64(i%7) - 3
	}
	want.stripe(1, want.rows-1)
	for _, c := range []int{1, 2, 3, 5, 35, 100} {
		coarsening = c
		g := newGrid(37, 21)
		for i := range g.cur {
			g.cur[i] = float64(i%7) - 3
		}
		g.step(1, g.rows-1)
		if !slices.Equal(g.next, want.next) {
			t.Errorf("cutoff %d: step differs from a serial stripe", c)
		}
	}
}

// TestStripeBoundary checks that a stripe leaves the boundary columns of
// next alone and computes an interior point by the five-point formula.
func TestStripeBoundary(t *testing.T) {
	g := newGrid(5, 5)
	for i := range g.next {
		g.next[i] = -1
	}
	g.stripe(1, 4)
	for i := range 5 {
		if g.next[i*5] != -1 || g.next[i*5+4] != -1 {
			t.Errorf("row %d: stripe wrote a boundary column", i)
		}
	}
	u := g.cur[2*5+2]
	want := u + g.cx*(g.cur[1*5+2]-2*u+g.cur[3*5+2]) + g.cy*(g.cur[2*5+1]-2*u+g.cur[2*5+3])
	if got := g.next[2*5+2]; got != want {
		t.Errorf("centre point: got %g, want %g", got, want)
	}
}

func TestCheck(t *testing.T) {
	g := newGrid(40, 30)
	for range 10 {
		g.stripe(1, g.rows-1)
		g.cur, g.next = g.next, g.cur
	}
	if err := check(g, 10); err != nil {
		t.Fatalf("check of a correct grid: %v", err)
	}
	if err := check(g, 9); err == nil {
		t.Error("check accepted a grid one step ahead")
	}
	g.cur[20*30+15] *= 1 + 1e-9
	if err := check(g, 10); err == nil {
		t.Error("check accepted a grid with one wrong point")
	}
}
