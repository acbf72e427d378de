// Package finegrain defines an Analyzer that reports loops that spawn a
// goroutine per iteration for a body too small to pay for it.
//
// # Analyzer finegrain
//
// finegrain: report a spawn per loop iteration whose body is tiny
//
// Starting a goroutine and joining it costs a few hundred nanoseconds to
// a microsecond; a body with no loop and no call that is not trivially cheap
// does far less work than that, so spawning one per iteration makes the
// program slower on any number of cores, and no scheduler can fix it. The
// analyzer reports a go statement, wg.Go, errgroup Go or TryGo, or parlib
// spawn executed once per iteration of an enclosing loop of the same
// function (whose trip count is not a constant of 64 or less) when the
// spawned function's body has no loop, no channel operation, no select, no
// nested function literal, and calls only builtins, conversions, sync and
// sync/atomic operations, math functions and functions of the package that
// are tiny in the same sense. Test files are not checked: their goroutines
// exercise concurrency over a handful of cases, and benchmarks may measure
// the spawn itself.
//
//	// WRONG
//	var wg sync.WaitGroup
//	for i := range len(xs) {
//		wg.Go(func() { ys[i] = 2*xs[i] + 1 })
//	}
//	wg.Wait()
//
// Give each goroutine a chunk of iterations: parlib's loops split the range
// into pieces of grain indices (grain 0 picks about eight pieces per
// processor), or chunk by hand.
//
//	// RIGHT
//	parlib.For(0, len(xs), 0, func(i int) { ys[i] = 2*xs[i] + 1 })
//
// When the file already imports parlib, the loop counts with an int
// (for i := range n, or for i := lo; i < hi; i++) over bounds that do not
// change, and its body is the one spawn of a function literal (wg.Go(f),
// grp.Spawn(f), or wg.Add(1) followed by go func() { defer wg.Done(); ... }()),
// the suggested fix replaces the loop by one spawn of a parlib.For over the
// same range. The continuation still runs in parallel with the iterations
// until the same Wait, so the program means what it meant; a return or
// defer in the body still ends one iteration.
//
// The analyzer takes spawns from the forkjoin analyzer. It does not repeat
// go vet's checks: waitgroup reports wg.Add called inside the new
// goroutine, copylocks a WaitGroup passed by value, loopclosure a loop
// variable captured before Go 1.22.
package finegrain
