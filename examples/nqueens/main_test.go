package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRun runs the program in both modes on the same board and checks that
// both pass their self-check and print the same line.
func TestRun(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1"},
		{"-n", "2"},
		{"-n", "6"},
		{"-n", "10"},
		{"-n", "11", "-depth", "0"},
		{"-n", "8", "-depth", "20"},
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
			if want := fmt.Sprintf("%s-queens: ", args[1]); !strings.HasPrefix(par.String(), want) {
				t.Errorf("printed %q, want a line starting %q", par.String(), want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "28"}, {"-depth", "-1"}} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestQueens compares both searches with a plain array-and-loop backtracking
// search, the form of Cilk-5's nqueens, on every board small enough to be
// quick, at every depth, from the empty board.
func TestQueens(t *testing.T) {
	for n := 1; n <= 9; n++ {
		want := arrayQueens(n, 0, make([]int, n))
		all := uint32(1)<<n - 1
		if got := serialQueens(all, 0, 0, 0); got != want {
			t.Errorf("serialQueens on %d×%d = %d, want %d", n, n, got, want)
		}
		for depth := 0; depth <= n+1; depth++ {
			if got := queens(all, 0, 0, 0, depth); got != want {
				t.Errorf("queens on %d×%d at depth %d = %d, want %d", n, n, depth, got, want)
			}
		}
	}
}

// TestSerialQueensPartial starts the search below the first row, as the
// tasks under the cutoff do: the counts over the squares of the first row
// must add up to the board's count, and by symmetry the two corners must
// give the same count.
func TestSerialQueensPartial(t *testing.T) {
	const n = 8
	all := uint32(1)<<n - 1
	total := 0
	var byCol [n]int
	for col := range n {
		bit := uint32(1) << col
		byCol[col] = serialQueens(all, bit, bit<<1, bit>>1)
		total += byCol[col]
	}
	if int64(total) != solutions[n] {
		t.Errorf("counts over the first row add up to %d, want %d", total, solutions[n])
	}
	if byCol[0] != byCol[n-1] {
		t.Errorf("corner counts differ: %d and %d", byCol[0], byCol[n-1])
	}
}

func TestCheck(t *testing.T) {
	if err := check(8, 92); err != nil {
		t.Errorf("check of the right count: %v", err)
	}
	if err := check(8, 91); err == nil {
		t.Error("check accepted a wrong count")
	}
}

// arrayQueens counts the completions of the placement a[:row], where a[i] is
// the column of the queen in row i, testing every square against every
// queen placed.
func arrayQueens(n, row int, a []int) int {
	if row == n {
		return 1
	}
	total := 0
	for col := range n {
		ok := true
		for i, c := range a[:row] {
			if c == col || c-col == row-i || col-c == row-i {
				ok = false
				break
			}
		}
		if ok {
			a[row] = col
			total += arrayQueens(n, row+1, a)
		}
	}
	return total
}
