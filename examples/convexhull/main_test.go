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
		{"-n", "0"},
		{"-n", "1"},
		{"-n", "2"},
		{"-n", "3", "-grain", "1"},
		{"-n", "1000", "-grain", "1"},
		{"-n", "50000", "-grain", "1000", "-seed", "7"},
		{"-n", "100000"},
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
			if want := fmt.Sprintf("hull of %s points: ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-grain", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestHull computes hulls with collinear points, duplicates and ties for
// the farthest point, whose answers are known.
func TestHull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pts, want []point
	}{
		{"single", []point{{3, 4}}, []point{{3, 4}}},
		{"duplicates", []point{{3, 4}, {3, 4}, {3, 4}}, []point{{3, 4}}},
		{"segment", []point{{0, 0}, {2, 2}, {1, 1}, {2, 2}}, []point{{0, 0}, {2, 2}}},
		{"vertical", []point{{5, 1}, {5, -3}, {5, 0}}, []point{{5, -3}, {5, 1}}},
		{
			// A square with points on its edges and inside; the
			// farthest points from the diagonal tie along whole edges.
			"square",
			[]point{{0, 0}, {2, 0}, {4, 0}, {4, 2}, {4, 4}, {2, 4}, {0, 4}, {0, 2}, {1, 1}, {2, 2}, {3, 1}, {4, 4}},
			[]point{{0, 0}, {4, 0}, {4, 4}, {0, 4}},
		},
		{
			"triangle",
			[]point{{0, 0}, {10, 0}, {5, 8}, {5, 1}, {5, 7}, {4, 0}, {2, 1}},
			[]point{{0, 0}, {10, 0}, {5, 8}},
		},
	} {
		if got := serialHull(slices.Clone(tc.pts)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: serialHull = %v, want %v", tc.name, got, tc.want)
		}
		for _, grain := range []int{1, 2, 100} {
			if got := quickHull(tc.pts, grain); !slices.Equal(got, tc.want) {
				t.Errorf("%s: quickHull with grain %d = %v, want %v", tc.name, grain, got, tc.want)
			}
		}
		if err := check(tc.want, tc.pts); err != nil {
			t.Errorf("%s: check of the right hull: %v", tc.name, err)
		}
	}
}

// TestCheck corrupts a correct hull in each way check rules out.
func TestCheck(t *testing.T) {
	pts := make([]point, 5000)
	generate(pts, 0, 3)
	hull := quickHull(pts, 100)
	if err := check(hull, pts); err != nil {
		t.Fatalf("check of a correct hull: %v", err)
	}
	if err := parallelCheck(hull, pts, 100); err != nil {
		t.Fatalf("parallelCheck of a correct hull: %v", err)
	}
	h := len(hull)
	for name, bad := range map[string][]point{
		"vertex missing":  slices.Delete(slices.Clone(hull), 3, 4),
		"vertex moved in": slices.Replace(slices.Clone(hull), 3, 4, point{hull[3].x / 2, hull[3].y / 2}),
		"vertex moved out": slices.Replace(slices.Clone(hull), 3, 4,
			point{hull[3].x + (hull[3].x-hull[2].x+hull[3].x-hull[4].x)/4, hull[3].y + (hull[3].y-hull[2].y+hull[3].y-hull[4].y)/4}),
		"clockwise":     reversed(hull),
		"twice around":  slices.Concat(hull, hull),
		"vertex twice":  slices.Insert(slices.Clone(hull), 3, hull[3]),
		"inner point":   slices.Insert(slices.Clone(hull), 3, point{(hull[2].x + hull[3].x) / 2, (hull[2].y + hull[3].y) / 2}),
		"empty":         nil,
		"one vertex":    hull[:1],
		"two vertices":  hull[:2],
		"last dropped":  hull[:h-1],
		"first dropped": hull[1:],
	} {
		if err := check(bad, pts); err == nil {
			t.Errorf("%s: check accepted the hull", name)
		}
		if err := parallelCheck(bad, pts, 100); err == nil {
			t.Errorf("%s: parallelCheck accepted the hull", name)
		}
	}
}

func reversed(s []point) []point {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
