// Package parlib is a small fork/join library for Go: spawn work, then sync
// with it, in the style of Cilk.
//
// # The fork/join model
//
// A spawn starts a function that may run in parallel with the code that
// follows it (the continuation); a sync waits until every function spawned
// before it has returned. Between a spawn and its sync the two strands may run
// at the same time; after the sync, everything the children wrote is visible
// to the parent. [Group] is the explicit form ([Group.Spawn], [Group.Sync]);
// [Spawn] and [Task.Wait] are the same for one function with a result; [Do],
// [For], [ForRange] and [ForEach] spawn and sync internally and return only
// when all their work is done.
//
// A program written this way has a serial elision: replace every spawn with a
// plain call and delete every sync, and you get a sequential program that
// computes the same result, provided the spawned functions do not wait for
// their continuation (a channel receive, a lock, a WaitGroup the continuation
// signals). Keep spawned functions free of such waits and of data races with
// the continuation; then the parallel program means the same as its serial
// elision, and a profiler that runs it serially measures what it does.
//
// # Panics
//
// A panic in a spawned function is recovered on its goroutine, and the first
// one is re-raised in the parent at the sync as a [*PanicError], which holds
// the original value and the stack of the goroutine that panicked; the
// runtime prints the parent's stack when that re-panic is not recovered, so a
// crash shows both. A sync waits for every child even when one has panicked,
// so no goroutine outlives it. [Do], [For], [ForRange] and [ForEach] treat
// the part they run on the calling goroutine like the others, so they always
// re-panic with a *PanicError. A panic that is already a *PanicError crosses
// further groups unchanged, so the value seen at the top is the one raised
// where the panic started.
//
// # Grain
//
// The loops split [lo, hi) in halves, spawning one half and recursing on the
// other, until a piece has at most grain indices (Cilk's cilk_for). A grain
// of zero or less picks max(1, n/(8·GOMAXPROCS)) for n = hi-lo: about eight
// pieces per processor, enough to balance load, few enough that the cost of a
// goroutine (a few hundred nanoseconds) is paid rarely. A range with hi <= lo
// is empty, as in a for statement.
//
// # Spawn and join points
//
// Every goroutine parlib starts goes through the unexported function spawn,
// and every wait goes through the unexported function join; nothing else in
// the package starts or waits for goroutines. The spanprof rewriter relies on
// this: it treats each call of an exported parlib function as a spawn site or
// join point keyed by the caller's file and line, and those two functions as
// the only places parlib itself forks and joins.
package parlib
