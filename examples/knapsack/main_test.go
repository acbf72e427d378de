package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRun runs the program in both modes on the same input and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"},
		{"-n", "1"},
		{"-n", "2", "-depth", "0"},
		{"-n", "20", "-depth", "30"},
		{"-n", "36", "-seed", "7"},
		{"-n", "40", "-depth", "3", "-seed", "11"},
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
			if want := fmt.Sprintf("knapsack of %s items, capacity ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-n", "1001"}, {"-depth", "-1"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestKnap compares knap and search, from a best value of zero and from the
// greedy value, with every subset of small instances.
func TestKnap(t *testing.T) {
	for seed := range uint64(20) {
		p := newProblem(randomItems(int(seed%12), seed))
		want := bruteForce(p)
		for _, start := range []int{0, p.greedy()} {
			var best atomic.Int64
			best.Store(int64(start))
			if got := p.search(0, p.capacity, 0, &best); got != want {
				t.Errorf("seed %d, start %d: search found %d, want %d", seed, start, got, want)
			}
			best.Store(int64(start))
			if got := p.knap(0, p.capacity, 0, 4, &best); got != want {
				t.Errorf("seed %d, start %d: knap found %d, want %d", seed, start, got, want)
			}
			if got := best.Load(); got != int64(want) {
				t.Errorf("seed %d, start %d: best is %d after knap, want %d", seed, start, got, want)
			}
		}
	}
}

// TestNewProblem checks that the items are in decreasing order of value per
// unit of weight, as the bound requires.
func TestNewProblem(t *testing.T) {
	p := newProblem(randomItems(200, 3))
	for i := 1; i < len(p.items); i++ {
		a, b := p.items[i-1], p.items[i]
		if a.value*b.weight < b.value*a.weight {
			t.Fatalf("items %d and %d out of order: %v, %v", i-1, i, a, b)
		}
	}
}

func TestCheck(t *testing.T) {
	p := newProblem([]item{{weight: 3, value: 4}, {weight: 4, value: 5}, {weight: 2, value: 3}, {weight: 5, value: 6}})
	// Capacity 7: {3, 4} is worth 9, {3, 2} 7, {4, 2} 8, {5, 2} 9.
	if p.capacity != 7 {
		t.Fatalf("capacity %d, want 7", p.capacity)
	}
	if err := check(p, 9); err != nil {
		t.Errorf("check of the optimal value: %v", err)
	}
	for _, wrong := range []int{8, 10, infeasible} {
		if err := check(p, wrong); err == nil {
			t.Errorf("check accepted %d", wrong)
		}
	}
}

// bruteForce returns the best value of a subset of p's items that fits.
func bruteForce(p *problem) int {
	best := 0
	for set := range 1 << len(p.items) {
		w, v := 0, 0
		for i, it := range p.items {
			if set>>i&1 != 0 {
				w += it.weight
				v += it.value
			}
		}
		if w <= p.capacity {
			best = max(best, v)
		}
	}
	return best
}
