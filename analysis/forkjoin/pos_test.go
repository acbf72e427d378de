package forkjoin

import (
	"go/token"
	"testing"
)

// TestComparePos checks that ComparePos orders by file name, then offset,
// whatever the order the files were added to the set in.
func TestComparePos(t *testing.T) {
	fset := token.NewFileSet()
	b := fset.AddFile("/m/b.go", -1, 100) // added first: the lower base
	a := fset.AddFile("/m/a.go", -1, 100)
	inOrder := []token.Pos{token.NoPos, a.Pos(0), a.Pos(5), a.Pos(99), b.Pos(0), b.Pos(50)}
	for i, p := range inOrder {
		for j, q := range inOrder {
			got := ComparePos(fset, p, q)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("ComparePos(%s, %s) = %d, want %d", fset.Position(p), fset.Position(q), got, want)
			}
		}
	}
}
