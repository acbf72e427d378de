package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1", "-steps", "3"},
		{"-n", "2", "-steps", "1", "-grain", "1"},
		{"-n", "100", "-steps", "3", "-grain", "7"},
		{"-n", "256", "-steps", "2", "-seed", "9"},
		{"-n", "300", "-steps", "2", "-grain", "1000"},
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
			if want := fmt.Sprintf("simulated %s bodies for %s steps, checksum ", args[1], args[3]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-steps", "0"}, {"-grain", "0"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestForces checks that forces, for several grains, computes every body's
// acceleration, bit for bit as serialForces does.
func TestForces(t *testing.T) {
	const n = 50
	want := newSystem(rand.New(rand.NewPCG(1, 2)), n)
	want.serialForces()
	for _, grain := range []int{1, 3, 16, 50, 64} {
		s := newSystem(rand.New(rand.NewPCG(1, 2)), n)
		s.forces(0, n, grain)
		for i := range n {
			if s.ax[i] != want.ax[i] || s.ay[i] != want.ay[i] || s.az[i] != want.az[i] {
				t.Fatalf("grain %d: body %d has acceleration (%g, %g, %g), want (%g, %g, %g)",
					grain, i, s.ax[i], s.ay[i], s.az[i], want.ax[i], want.ay[i], want.az[i])
			}
		}
	}
}

// TestAcceleration compares acceleration with Newton's law for two bodies.
func TestAcceleration(t *testing.T) {
	bodies := []body{{x: 0, y: 0, z: 0, m: 2}, {x: 3, y: 4, z: 0, m: 5}}
	// Body 0 is pulled toward body 1 by 5/d², d² = 25 + soft2, along (3, 4)/d.
	ax, ay, az := acceleration(bodies, 0)
	d2 := 25 + soft2
	want := 5 / d2 / math.Sqrt(d2)
	if !near(ax, 3*want) || !near(ay, 4*want) || az != 0 {
		t.Errorf("acceleration of body 0 is (%g, %g, %g), want (%g, %g, 0)", ax, ay, az, 3*want, 4*want)
	}
}

func TestCheck(t *testing.T) {
	newRun := func() *system {
		s := newSystem(rand.New(rand.NewPCG(3, 4)), 40)
		for range 3 {
			copy(s.prev, s.bodies)
			s.forces(0, 40, 4)
			s.advance()
		}
		return s
	}
	if err := check(rand.New(rand.NewPCG(5, 6)), newRun()); err != nil {
		t.Errorf("check of a correct run: %v", err)
	}
	// With 16 samples from 40 bodies, the check is all but sure to pick
	// body 0 for some seed among a few; find one that does.
	s := newRun()
	s.ax[0] *= 1 + 1e-15
	caught := false
	for seed := range uint64(10) {
		caught = caught || check(rand.New(rand.NewPCG(seed, seed)), s) != nil
	}
	if !caught {
		t.Error("check accepted a wrong acceleration for every seed")
	}
	s = newRun()
	s.vy[7] += 1e-6 * s.vy[7]
	if err := check(rand.New(rand.NewPCG(5, 6)), s); err == nil {
		t.Error("check accepted a wrong velocity")
	}
}

// near reports whether a is within a relative 10⁻¹² of b, which is
// positive.
func near(a, b float64) bool {
	return math.Abs(a-b) < 1e-12*b
}
