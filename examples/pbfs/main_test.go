package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1"},
		{"-n", "10", "-degree", "0"},
		{"-n", "1000", "-degree", "1"},
		{"-n", "5000", "-degree", "2", "-grain", "1"},
		{"-n", "20000", "-seed", "7"},
		{"-n", "30000", "-degree", "3", "-grain", "100000"},
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
			if want := fmt.Sprintf("bfs of %s vertices, ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-degree", "-1"}, {"-n", "1000000", "-degree", "5000"}, {"-grain", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestBFS searches a small graph with known distances: a path 0→1→2→3, a
// shortcut 0→2, a vertex 4 that only points into the graph, and a cycle
// 5→6→5 that the source cannot reach.
func TestBFS(t *testing.T) {
	g := &graph{n: 7, degree: 2, adj: []int32{
		1, 2, // 0
		2, 2, // 1
		3, 3, // 2
		3, 0, // 3
		0, 5, // 4
		6, 6, // 5
		5, 5, // 6
	}}
	want := []int32{1, 2, 2, 3, 0, 0, 0} // distance + 1; 0 = not reached
	for _, grain := range []int{1, 2, 100} {
		if got := g.bfs(0, grain).level; !slices.Equal(got, want) {
			t.Errorf("bfs with grain %d: levels %v, want %v", grain, got, want)
		}
	}
	if got := g.serialBFS(0).level; !slices.Equal(got, want) {
		t.Errorf("serialBFS: levels %v, want %v", got, want)
	}
}

// TestCheck corrupts a correct search in each way the certificate rules
// out.
func TestCheck(t *testing.T) {
	g := &graph{n: 3000, degree: 3, adj: make([]int32, 9000)}
	g.build(0, g.n, 5)
	s := g.serialBFS(0)
	if err := s.check(0, g.n); err != nil {
		t.Fatalf("check of a correct search: %v", err)
	}
	if err := s.parallelCheck(100); err != nil {
		t.Fatalf("parallelCheck of a correct search: %v", err)
	}
	// A vertex at distance 2 or more, and one the search reached.
	var far, near int32 = -1, -1
	for v, l := range s.level {
		if l >= 3 && far < 0 {
			far = int32(v)
		}
		if l == 2 && near < 0 {
			near = int32(v)
		}
	}
	if far < 0 || near < 0 {
		t.Fatal("the test graph has no vertex at distance 1 or none at distance 2 or more")
	}
	for name, corrupt := range map[string]func(s *search){
		"source moved":       func(s *search) { s.level[0] = 2 },
		"distance too large": func(s *search) { s.level[far]++ },
		"distance too small": func(s *search) { s.level[far]-- },
		"wrong parent":       func(s *search) { s.parent[far] = far },
		"unreached":          func(s *search) { s.level[near] = 0 },
		"second source":      func(s *search) { s.level[far] = 1 },
	} {
		bad := &search{g: g, src: 0, level: slices.Clone(s.level), parent: slices.Clone(s.parent)}
		corrupt(bad)
		if err := bad.check(0, g.n); err == nil {
			t.Errorf("%s: check accepted the search", name)
		}
		if err := bad.parallelCheck(100); err == nil {
			t.Errorf("%s: parallelCheck accepted the search", name)
		}
	}
}
