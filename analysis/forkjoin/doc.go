// Package forkjoin defines an Analyzer whose result is the fork/join
// structure of a package: every spawn site, join contribution and wait, the
// join object each one uses, and whether each spawn is serially elidable.
// It is the project's one definition of the fork/join idioms; the spanvet
// diagnostics and the rewriter consume its [Result] rather than matching the
// idioms again.
//
// # Analyzer forkjoin
//
// forkjoin: find spawns, joins and waits of sync.WaitGroup, errgroup and parlib
//
// The analyzer reports no diagnostics; its result is a [*Result].
//
// # The model
//
// A spawn starts a function that may run in parallel with the code after it
// (the continuation). A join object is the thing the continuation later waits
// on to learn that its children have finished. The analyzer recognises:
//
//	spawn                          join contribution            wait
//	go f(x), go func(){...}()      wg.Done(), wg.Add(-n)        wg.Wait()
//	wg.Go(f)                       return of f                  wg.Wait()
//	g.Go(f), g.TryGo(f) (errgroup) return of f                  g.Wait()
//	grp.Spawn(f) (parlib.Group)    return of f                  grp.Sync()
//	t := parlib.Spawn(f)           return of f                  t.Wait()
//	parlib.Do(f, g, ...)           return of each function      implicit, at the same call
//	parlib.For/ForRange/ForEach    return of the body           implicit, at the same call
//
// For a go statement the join object is found from the spawned function's
// body: the WaitGroup its Done (or Add with a negative constant) calls
// signal, with parameters bound to the go statement's arguments, so that
// go worker(&wg) and go s.loop() (which calls s.wg.Done()) are both
// recognised. parlib is recognised by its import path,
// github.com/spanprof/spanprof/parlib, and the names of its functions and
// methods; golang.org/x/sync/errgroup and sync by theirs, with go/types, so
// renamed imports, embedded WaitGroups and method expressions are seen too.
//
// # Join object identity
//
// A [JoinObject] is named by an access path: a root variable (local,
// parameter, receiver or package-level) followed by field selections, with
// &, * and parentheses ignored and index expressions written "[]". Two uses
// denote the same join object when their [JoinObject.Key]s are equal; the
// analyzer hands out one *JoinObject per key, so pointer equality works too.
// A local pointer variable that is assigned exactly once, from &x or from
// another access path, and never again, is replaced by what it points to, so
// p := &wg; p.Wait() uses the same key as wg.Done(). Keys are only
// meaningful inside one package: a parameter is its own root, and
// [Spawn.Map] translates a join object named inside a spawned function into
// the spawner's terms by binding parameters to arguments. A key is exact
// ([JoinObject.Exact]) when equal keys imply the same object at run time; an
// index ("wgs[]") or a call result makes it inexact.
//
// # Serial elision
//
// A spawn is serially elidable when running the spawned function to
// completion at the spawn point, before the continuation, cannot wait forever
// for something the continuation would have done. The analyzer is
// conservative: when it cannot see the code, or sees something that can
// wait on another goroutine, the spawn is not elidable and
// [Spawn.Reason] says why, with a position. Looking through calls of
// functions declared in the package (transitively, binding parameters to
// arguments) and through function literals called, deferred or passed to
// other functions, it rejects:
//
//   - a channel send or receive (except a receive from time.After or
//     time.Tick), a select statement, a range over a channel;
//   - sync.Cond.Wait; runtime.Gosched (the mark of a spin wait); a for loop
//     without condition or exit; a for loop whose condition reads an atomic;
//   - runtime.Goexit, which inline would end the spawning goroutine;
//   - a Wait or Sync on a join object the spawned function did not create
//     itself, or on one it did create when a child it spawned onto it is not
//     elidable;
//   - a Lock or RLock of a mutex that the spawning function also locks: it
//     may hold the lock at the spawn, and running the child inline would
//     then deadlock (a lock the spawning function never takes is fine: the
//     goroutine that holds it does not need the continuation to release it);
//   - a call of a function value whose code is not known (a parameter, a
//     field, a result), and a spawn of one;
//   - a call of a function or method of another package, or of an
//     interface method, whose receiver or parameter types carry a channel,
//     a sync.Cond, a WaitGroup, an errgroup.Group or a parlib join object
//     (testing.T's methods other than Run and Parallel and package time are
//     exempt), and one outside the standard library passed a function value
//     whose code is not known (conc's WaitGroup.Go spawns a literal that
//     hands its function to its sibling package's panics.Catcher.Try).
//     Other calls outside the package are assumed to return.
//
// time.Sleep and other finite waits do not prevent elision. One call
// outside the package is not assumed to return: a method of another
// package's type that takes a context.Context (semaphore.(*Weighted).Acquire
// waits for a release or a cancellation the continuation may make), called
// by the spawned code or by what it calls or declares in the package, or
// spawned itself. That rule is applied last, to spawns the rest finds
// elidable, and [Spawn.Outside] marks it.
//
// # Other facts
//
// For each function the result also says whether it can neither fork nor
// join, through everything it calls ([Func.Serial]), and whether a function
// of another package known to start goroutines of its own
// ((*testing.B).RunParallel, time.AfterFunc, runtime.SetFinalizer) runs it
// ([Func.StartedBy]). [Result.FuncOf], [Result.Callee] and [Result.CallOf]
// resolve functions, function values and calls to the package's [Func]s and
// [Call]s; [ComparePos] orders positions in source order.
package forkjoin
