package rewrite

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMerge3Examples(t *testing.T) {
	for _, tc := range []struct {
		name         string
		base, a, b   string
		want         string
		wantConflict bool
	}{
		{name: "no change", base: "1\n2\n3\n", a: "1\n2\n3\n", b: "1\n2\n3\n", want: "1\n2\n3\n"},
		{name: "a only", base: "1\n2\n3\n", a: "1\nX\n3\n", b: "1\n2\n3\n", want: "1\nX\n3\n"},
		{name: "b only", base: "1\n2\n3\n", a: "1\n2\n3\n", b: "1\n2\nY\n", want: "1\n2\nY\n"},
		{name: "apart", base: "1\n2\n3\n4\n5\n", a: "X\n2\n3\n4\n5\n", b: "1\n2\n3\n4\nY\n", want: "X\n2\n3\n4\nY\n"},
		{name: "same change", base: "1\n2\n3\n", a: "1\nX\n3\n", b: "1\nX\n3\n", want: "1\nX\n3\n"},
		{name: "same line differently", base: "1\n2\n3\n", a: "1\nX\n3\n", b: "1\nY\n3\n", wantConflict: true},
		{name: "overlapping", base: "1\n2\n3\n4\n", a: "1\nX\n4\n", b: "1\n2\nY\n4\n", wantConflict: true},
		{name: "insert at one place", base: "1\n2\n", a: "1\nX\n2\n", b: "1\nY\n2\n", wantConflict: true},
		{name: "insert inside a replacement", base: "1\n2\n3\n4\n", a: "1\nX\n4\n", b: "1\n2\nY\n3\n4\n", wantConflict: true},
		// The rewrite inserted a line (a directive) before line 3; the
		// user changed line 3: they touch, and merge.
		{name: "touching", base: "1\n//line\n3\n4\n", a: "1\n3\n4\n", b: "1\n//line\nC\n4\n", want: "1\nC\n4\n"},
		{name: "touching after", base: "1\n2\n//line\n4\n", a: "1\n2\n4\n", b: "1\nB\n//line\n4\n", want: "1\nB\n4\n"},
		{name: "insertion before a replacement", base: "1\n2\n3\n", a: "1\nX\n2\n3\n", b: "1\nY\n3\n", want: "1\nX\nY\n3\n"},
		{name: "insertion after a replacement", base: "1\n2\n3\n", a: "1\n2\nX\n3\n", b: "1\nY\n3\n", want: "1\nY\nX\n3\n"},
		{name: "delete everything, edit", base: "1\n2\n", a: "", b: "1\nB\n", wantConflict: true},
		{name: "from empty", base: "", a: "x\n", b: "", want: "x\n"},
		{name: "no final newline", base: "1\n2", a: "0\n1\n2", b: "1\n2\n", want: "0\n1\n2\n"},
		{name: "line endings kept", base: "1\r\n2\r\n3\r\n", a: "1\r\n3\r\n", b: "1\r\n2\r\n3\r\n4\r\n", want: "1\r\n3\r\n4\r\n"},
		{name: "repeated lines", base: "}\n}\n}\n", a: "}\nX\n}\n}\n", b: "}\n}\n}\nY\n", want: "}\nX\n}\n}\nY\n"},
	} {
		got, ok := merge3([]byte(tc.base), []byte(tc.a), []byte(tc.b))
		switch {
		case tc.wantConflict && ok:
			t.Errorf("%s: merge3 = %q, want a conflict", tc.name, got)
		case !tc.wantConflict && !ok:
			t.Errorf("%s: merge3 conflicts, want %q", tc.name, tc.want)
		case !tc.wantConflict && string(got) != tc.want:
			t.Errorf("%s: merge3 = %q, want %q", tc.name, got, tc.want)
		}
		// The sides are symmetric.
		got2, ok2 := merge3([]byte(tc.base), []byte(tc.b), []byte(tc.a))
		if ok2 != ok || string(got2) != string(got) {
			t.Errorf("%s: merge3 with the sides swapped = %q, %v; want %q, %v", tc.name, got2, ok2, got, ok)
		}
	}
}

// applyEdits replays an edit script on a, checking that it is one: every
// kept or deleted line is a's, in order, and the inserted ones are b's.
func applyEdits(t *testing.T, a, b []string, ops []edit) []string {
	t.Helper()
	var out []string
	i, j := 0, 0
	for _, op := range ops {
		switch op.kind {
		case ' ', '-':
			if op.a != i || i >= len(a) || a[i] != op.text {
				t.Fatalf("edit %c %q at a[%d], expected a[%d]", op.kind, op.text, op.a, i)
			}
			if op.kind == ' ' {
				if op.b != j || b[j] != op.text {
					t.Fatalf("kept %q at b[%d], expected b[%d]", op.text, op.b, j)
				}
				out = append(out, op.text)
				j++
			}
			i++
		case '+':
			if op.a != i || op.b != j || b[j] != op.text {
				t.Fatalf("inserted %q at a[%d] b[%d], expected a[%d] b[%d]", op.text, op.a, op.b, i, j)
			}
			out = append(out, op.text)
			j++
		}
	}
	if i != len(a) {
		t.Fatalf("the script covers %d of %d lines", i, len(a))
	}
	return out
}

// randomLines returns n lines drawn from an alphabet of k.
func randomLines(r *rand.Rand, n, k int, prefix string) []string {
	var ls []string
	for range n {
		ls = append(ls, fmt.Sprintf("%s%d\n", prefix, r.IntN(k)))
	}
	return ls
}

// mutate returns a copy of ls with a few random lines deleted, replaced
// or inserted, new lines drawn from prefix.
func mutate(r *rand.Rand, ls []string, prefix string) []string {
	out := append([]string(nil), ls...)
	for k := r.IntN(5); k > 0; k-- {
		i := r.IntN(len(out) + 1)
		switch {
		case r.IntN(3) == 0 && i < len(out):
			out = append(out[:i], out[i+1:]...)
		case r.IntN(2) == 0 && i < len(out):
			out[i] = fmt.Sprintf("%s%d\n", prefix, r.IntN(4))
		default:
			out = append(out[:i], append([]string{fmt.Sprintf("%s%d\n", prefix, r.IntN(4))}, out[i:]...)...)
		}
	}
	return out
}

// TestLineEdits checks on random inputs, with many repeated lines, that
// lineEdits gives an edit script from a to b.
func TestLineEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := randomLines(r, r.IntN(30), 1+r.IntN(8), "l")
		b := mutate(r, a, "n")
		if r.IntN(4) == 0 {
			b = randomLines(r, r.IntN(30), 1+r.IntN(8), "l")
		}
		got := applyEdits(t, a, b, lineEdits(a, b))
		if strings.Join(got, "") != strings.Join(b, "") {
			t.Fatalf("lineEdits(%q, %q) gives %q", a, b, got)
		}
	}
	// A long region with no unique line is replaced whole, still a script.
	a := randomLines(r, maxMyers, 2, "l")
	b := randomLines(r, maxMyers, 2, "l")
	if got := applyEdits(t, a, b, lineEdits(a, b)); strings.Join(got, "") != strings.Join(b, "") {
		t.Fatal("lineEdits of two long regions without unique lines is not an edit script")
	}
}

// TestMerge3Random checks merge3 on random edits of a base: the changes of
// one side alone are that side; changes of the two sides to lines apart
// (unique lines, so every edit script finds them) are both applied; and
// any merge that succeeds is the same with the sides swapped and keeps
// what both sides agree on.
func TestMerge3Random(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		base := randomLines(r, r.IntN(25), 1+r.IntN(6), "b")
		a := mutate(r, base, "a")
		b := mutate(r, base, "c")
		j := func(ls []string) []byte { return []byte(strings.Join(ls, "")) }
		if got, ok := merge3(j(base), j(a), j(base)); !ok || string(got) != string(j(a)) {
			t.Fatalf("merge3(base, a, base) = %q, %v; want a = %q", got, ok, j(a))
		}
		if got, ok := merge3(j(base), j(base), j(b)); !ok || string(got) != string(j(b)) {
			t.Fatalf("merge3(base, base, b) = %q, %v; want b = %q", got, ok, j(b))
		}
		if got, ok := merge3(j(base), j(a), j(a)); !ok || string(got) != string(j(a)) {
			t.Fatalf("merge3(base, a, a) = %q, %v; want a", got, ok)
		}
		got, ok := merge3(j(base), j(a), j(b))
		got2, ok2 := merge3(j(base), j(b), j(a))
		if ok != ok2 || string(got) != string(got2) {
			t.Fatalf("merge3 is not symmetric on base %q a %q b %q: %q %v, swapped %q %v", j(base), j(a), j(b), got, ok, got2, ok2)
		}
	}
	// Unique lines, edits apart: the merge is both edits.
	for range 500 {
		n := 4 + r.IntN(30)
		var base []string
		for i := range n {
			base = append(base, fmt.Sprintf("b%d\n", i))
		}
		// Split base into regions, each edited by a, by b or by neither,
		// with an untouched line between two edited regions.
		var a, b, want []string
		for i := 0; i < n; {
			size := min(1+r.IntN(3), n-i)
			region := base[i : i+size]
			side := r.IntN(3)
			edited := make([]string, 0, size+1)
			for k, l := range region {
				switch r.IntN(3) {
				case 0: // deleted
				case 1:
					edited = append(edited, fmt.Sprintf("%c%d.%d\n", "ac"[side%2], i, k))
				default:
					edited = append(edited, l)
				}
			}
			if r.IntN(2) == 0 {
				edited = append(edited, fmt.Sprintf("%c%d.new\n", "ac"[side%2], i))
			}
			switch side {
			case 0:
				a, b, want = append(a, edited...), append(b, region...), append(want, edited...)
			case 1:
				a, b, want = append(a, region...), append(b, edited...), append(want, edited...)
			default:
				a, b, want = append(a, region...), append(b, region...), append(want, region...)
			}
			i += size
			if i < n { // a line that neither side touches
				a, b, want = append(a, base[i]), append(b, base[i]), append(want, base[i])
				i++
			}
		}
		j := func(ls []string) []byte { return []byte(strings.Join(ls, "")) }
		got, ok := merge3(j(base), j(a), j(b))
		if !ok || string(got) != string(j(want)) {
			t.Fatalf("merge3 of edits apart:\nbase %q\na    %q\nb    %q\n= %q, %v\nwant %q", j(base), j(a), j(b), got, ok, j(want))
		}
	}
}
