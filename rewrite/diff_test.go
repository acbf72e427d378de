package rewrite

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffExamples(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\nc\n", "a\nx\nc\n", "--- o\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"},
		{"", "a\n", "--- o\n+++ n\n@@ -0,0 +1 @@\n+a\n"},
		{"a\n", "", "--- o\n+++ n\n@@ -1 +0,0 @@\n-a\n"},
		{"a", "b", "--- o\n+++ n\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
	} {
		if got := Diff("o", []byte(tc.old), "n", []byte(tc.new)); got != tc.want {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", tc.old, tc.new, got, tc.want)
		}
	}
}

// TestDiffPatch checks on random inputs that patch(1) turns old into new
// with the diff, when patch is installed.
func TestDiffPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no patch command")
	}
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i := 0; i < 60; i++ {
		var a, b []string
		for j := r.IntN(40); j > 0; j-- {
			a = append(a, fmt.Sprintf("l%d\n", r.IntN(6)))
		}
		b = append(b, a...)
		for j := r.IntN(6); j > 0; j-- {
			k := r.IntN(len(b) + 1)
			if r.IntN(2) == 0 && k < len(b) {
				b = append(b[:k], b[k+1:]...)
			} else {
				b = append(b[:k], append([]string{fmt.Sprintf("n%d\n", r.IntN(6))}, b[k:]...)...)
			}
		}
		old, new := strings.Join(a, ""), strings.Join(b, "")
		name := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(name, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		d := Diff("f.txt", []byte(old), "f.txt", []byte(new))
		if d == "" {
			if old != new {
				t.Fatalf("no diff for different inputs %q %q", old, new)
			}
			continue
		}
		cmd := exec.Command("patch", "-s", name)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v %s\n%s", err, out, d)
		}
		got, _ := os.ReadFile(name)
		if string(got) != new {
			t.Fatalf("patched %q\nwant %q\ndiff\n%s", got, new, d)
		}
	}
}
