package rewrite

import (
	"bytes"
	"fmt"
	"strings"
)

// Diff returns a unified diff, with three lines of context, that turns old
// (named oldName) into new (named newName); "" if they are equal.
func Diff(oldName string, old []byte, newName string, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := editScript(a, b)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const context = 3
	// Group the script into hunks: runs of changes with their context.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// A run of equal lines: the hunk ends if it is long enough.
			j := end
			for j < len(ops) && ops[j].kind == ' ' {
				j++
			}
			if j == len(ops) || j-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = j
		}
		oldStart, newStart := ops[start].a, ops[start].b
		oldLen, newLen := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				oldLen++
			}
			if op.kind != '-' {
				newLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldLen), hunkRange(newStart, newLen))
		for _, op := range ops[start:end] {
			line := op.text
			out.WriteByte(op.kind)
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(b []byte) []string {
	var lines []string
	for l := range bytes.Lines(b) {
		lines = append(lines, string(l))
	}
	return lines
}

// An edit is one line of an edit script: ' ' kept, '-' deleted, '+'
// inserted; a and b are the lines of old and new before it.
type edit struct {
	kind byte
	text string
	a, b int
}

// editScript computes a shortest edit script from a to b with Myers'
// algorithm, in O((N+M)·D) time.
func editScript(a, b []string) []edit {
	n, m := len(a), len(b)
	maxD := n + m
	v := make([]int, 2*maxD+2)
	var trace [][]int
	off := maxD + 1
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d, off)
			}
		}
	}
	return nil
}

// backtrack recovers the edit script from the furthest-reaching paths
// before each step d (trace[d]), from the end back to the start.
func backtrack(trace [][]int, a, b []string, steps, off int) []edit {
	var ops []edit
	x, y := len(a), len(b)
	for d := steps; d > 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			prevK = k + 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			ops = append(ops, edit{' ', a[x], x, y})
		}
		if x == prevX {
			y--
			ops = append(ops, edit{'+', b[y], x, y})
		} else {
			x--
			ops = append(ops, edit{'-', a[x], x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		ops = append(ops, edit{' ', a[x], x, y})
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
