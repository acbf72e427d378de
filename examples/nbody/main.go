// Nbody simulates the gravitational n-body problem by direct summation: at
// every time step, each body's acceleration is the sum of the pulls of all
// the others, softened so that close encounters stay finite; then every
// body's velocity and position advance (semi-implicit Euler, a symplectic
// method). It is the all-pairs form of the PBBS benchmark nBody (Shun,
// Blelloch, Fineman, Gibbons, Kyrola, Simhadri and Tangwongsan, SPAA 2012),
// which uses a tree code for the same forces, and whose inner loop is the
// classic parallel benchmark: the bodies' accelerations are independent.
// This program computes them in parallel by recursive halving of the range
// of bodies, spawning one half with parlib.Group.Spawn and waiting with
// Group.Sync, down to -grain bodies.
//
// Each body's acceleration is summed over all the bodies in index order (its
// own pull is zero), whichever goroutine computes it, so every run, parallel or not, computes
// the same trajectories bit for bit. The sequential baseline does not use
// Newton's third law to compute each pair once: that would sum in another
// order, and a parallel version would need a reduction per body.
//
// A span profile of this program should show nearly all the work as the
// local work of the calls of acceleration in accelerate, a parallelism of
// about the number of leaves per step (n/grain, 64 by default), and little
// else on the span: the steps follow one another, and between two Θ(n²)
// parallel phases each step updates velocities and positions in a Θ(n)
// serial loop, which with the generation of the bodies and the check is too
// small to matter.
//
// Usage:
//
//	nbody [-n bodies] [-steps steps] [-grain bodies] [-seed seed] [-serial]
//
// With -serial it runs the same loops with no goroutines, the sequential
// baseline for speedup measurements. Either way it checks the result twice:
// it recomputes the last step's accelerations of a random sample of bodies,
// one by one from the positions it saved, and compares them bit for bit
// (which catches a body the parallel loop skipped or computed from a
// half-updated state), and it checks that the total momentum, zero at the
// start and conserved by pairwise forces, is still zero to within rounding
// (tolerance below). It prints one line, the same for both modes:
//
//	simulated 4096 bodies for 8 steps, checksum 5fdc59d71472fd61
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/spanprof/spanprof/parlib"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nbody:", err)
		os.Exit(1)
	}
}

// run parses args, simulates random bodies and writes the one-line result
// to stdout. It returns an error if the flags are invalid or the result
// fails its check.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nbody", flag.ExitOnError)
	n := fs.Int("n", 4096, "simulate `n` bodies")
	steps := fs.Int("steps", 8, "advance `steps` time steps")
	grain := fs.Int("grain", 64, "compute the accelerations of at most `bodies` serially")
	seed := fs.Uint64("seed", 1, "random `seed` for the bodies and the check's sample")
	serial := fs.Bool("serial", false, "simulate with no goroutines, the sequential baseline")
	fs.Parse(args)
	switch {
	case *n < 1:
		return fmt.Errorf("-n %d: must be positive", *n)
	case *steps < 1:
		return fmt.Errorf("-steps %d: must be positive", *steps)
	case *grain < 1:
		return fmt.Errorf("-grain %d: must be positive", *grain)
	}

	r := rand.New(rand.NewPCG(*seed, *seed))
	s := newSystem(r, *n)
	for range *steps {
		// Keep the positions the last step's accelerations came from, for
		// the check.
		copy(s.prev, s.bodies)
		if *serial {
			s.serialForces()
		} else {
			s.forces(0, *n, *grain)
		}
		s.advance()
	}
	if err := check(r, s); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "simulated %d bodies for %d steps, checksum %016x\n", *n, *steps, s.checksum())
	return nil
}

const (
	// dt is the time step.
	dt = 1e-3
	// soft2 is the square of the softening length, which keeps the pull of
	// close bodies finite and makes a body's pull on itself exactly zero.
	soft2 = 1e-4
)

// A body is a point mass.
type body struct {
	x, y, z, m float64
}

// A system is a set of bodies in motion, with gravitational constant 1.
type system struct {
	bodies     []body
	vx, vy, vz []float64
	ax, ay, az []float64
	// prev holds the positions of the last step's start.
	prev []body
}

// newSystem returns n bodies at rest at random positions in the unit cube,
// with random masses that add up to about 1.
func newSystem(r *rand.Rand, n int) *system {
	s := &system{
		bodies: make([]body, n), prev: make([]body, n),
		vx: make([]float64, n), vy: make([]float64, n), vz: make([]float64, n),
		ax: make([]float64, n), ay: make([]float64, n), az: make([]float64, n),
	}
	for i := range s.bodies {
		s.bodies[i] = body{x: r.Float64(), y: r.Float64(), z: r.Float64(), m: (0.5 + r.Float64()) / float64(n)}
	}
	return s
}

// forces sets the accelerations of the bodies in [lo, hi), computing the
// two halves of the range in parallel down to grain bodies.
func (s *system) forces(lo, hi, grain int) {
	if hi-lo <= grain {
		s.accelerate(lo, hi)
		return
	}
	mid := lo + (hi-lo)/2
	var g parlib.Group
	g.Spawn(func() { s.forces(lo, mid, grain) })
	s.forces(mid, hi, grain)
	g.Sync()
}

// serialForces sets the accelerations of all the bodies with no goroutines.
func (s *system) serialForces() {
	s.accelerate(0, len(s.bodies))
}

// accelerate sets the accelerations of the bodies in [lo, hi).
func (s *system) accelerate(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.ax[i], s.ay[i], s.az[i] = acceleration(s.bodies, i)
	}
}

// acceleration returns the acceleration of bodies[i], summed over all the
// bodies in index order; bodies[i] itself adds zeros.
func acceleration(bodies []body, i int) (ax, ay, az float64) {
	bi := bodies[i]
	for _, b := range bodies {
		dx, dy, dz := b.x-bi.x, b.y-bi.y, b.z-bi.z
		d2 := dx*dx + dy*dy + dz*dz + soft2
		f := b.m / (d2 * math.Sqrt(d2))
		ax += f * dx
		ay += f * dy
		az += f * dz
	}
	return ax, ay, az
}

// advance moves every body by one time step with the accelerations:
// velocities first, then positions with the new velocities.
func (s *system) advance() {
	for i := range s.bodies {
		b := &s.bodies[i]
		s.vx[i] += s.ax[i] * dt
		s.vy[i] += s.ay[i] * dt
		s.vz[i] += s.az[i] * dt
		b.x += s.vx[i] * dt
		b.y += s.vy[i] * dt
		b.z += s.vz[i] * dt
	}
}

// samples is the number of bodies whose accelerations check recomputes.
const samples = 16

// tolerance bounds the total momentum relative to the sum of the bodies'
// momenta. Pairwise forces cancel exactly in exact arithmetic; in floating
// point each body's sum of n terms is off by about √n rounding errors, so
// the total drifts by some 10⁻¹⁴ of the scale per step, far below this,
// while one wrong velocity shows at its own size.
const tolerance = 1e-9

// check reports, as an error, whether a random sample of the bodies have
// accelerations that differ, in any bit, from those a plain loop computes
// from the positions at the start of the last step, or whether the total
// momentum of the system, zero at the start, is not zero to within
// tolerance times the sum of the magnitudes of the bodies' momenta.
func check(r *rand.Rand, s *system) error {
	for range samples {
		i := r.IntN(len(s.bodies))
		ax, ay, az := acceleration(s.prev, i)
		if ax != s.ax[i] || ay != s.ay[i] || az != s.az[i] {
			return fmt.Errorf("body %d: acceleration (%g, %g, %g), want (%g, %g, %g)", i, s.ax[i], s.ay[i], s.az[i], ax, ay, az)
		}
	}
	var px, py, pz, scale float64
	for i, b := range s.bodies {
		px += b.m * s.vx[i]
		py += b.m * s.vy[i]
		pz += b.m * s.vz[i]
		scale += b.m * math.Sqrt(s.vx[i]*s.vx[i]+s.vy[i]*s.vy[i]+s.vz[i]*s.vz[i])
	}
	if p := math.Sqrt(px*px + py*py + pz*pz); !(p <= tolerance*scale) {
		return fmt.Errorf("total momentum is %g, want 0 to within %g", p, tolerance*scale)
	}
	return nil
}

// checksum is a hash of the bodies' positions in order.
func (s *system) checksum() uint64 {
	var h uint64
	for _, b := range s.bodies {
		h = mix(h ^ math.Float64bits(b.x))
		h = mix(h ^ math.Float64bits(b.y))
		h = mix(h ^ math.Float64bits(b.z))
	}
	return h
}

// mix is the SplitMix64 finalizer, a cheap bijective hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
