package idioms

import (
	"example.com/catch"
	"slices"
	"sync"
)

// groupGo spawns f through another package's function (conc's
// WaitGroup.Go calls its panics.Catcher.Try): f's code is not visible
// there either, and may wait for the continuation.
func groupGo(wg *sync.WaitGroup, f func()) {
	wg.Go(func() { catch.Try(f) })
}

// groupGoLit passes a literal, whose code is visible.
func groupGoLit(wg *sync.WaitGroup) {
	wg.Go(func() { catch.Try(func() {}) })
}

// sorted passes a function value to the standard library, assumed to
// return.
func sorted(wg *sync.WaitGroup, xs []int, less func(a, b int) int) {
	wg.Go(func() { slices.SortFunc(xs, less) })
}
