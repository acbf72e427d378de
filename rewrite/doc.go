// Package rewrite instruments Go packages for the spanprof runtime
// (package shadow): it turns the fork/join idioms that the forkjoin
// analyzer finds into calls of the runtime, with github.com/dave/dst so that
// comments, build constraints and //go: directives survive, and prints the
// result gofmt-clean with //line directives that keep every position true.
// `spanprof run`, `test` and `build` give the rewritten files to the go
// command through -overlay and the runtime through a temporary go.work
// that uses the module and the runtime (Build; a workspace keeps the
// module's go line, see workspace); `spanprof rewrite -w` writes them in
// place, with a go.work of relative paths and a copy of the runtime in
// .spanprof/runtime, and -undo restores the originals (Write, Undo).
//
// # What is rewritten
//
// Each instrumented package gets a static site table in a generated file,
// zz_spanprof.go (zz_spanprof_test.go for its internal test files and
// zz_spanprof_x_test.go for its external test package):
//
//	var _spanprofSites = _spanprof_shadow.Init([]_spanprof_shadow.SiteInfo{
//		{File: "p/a.go", Line: 12, Column: 3, Func: "example.com/m/p.f.func1", Caller: "example.com/m/p.f", Kind: "spawn", Loop: "loop"},
//	})
//
// followed, where some calls were left out that may carry work, by
// var _ = _spanprof_shadow.LeftOut([]_spanprof_shadow.SiteInfo{...}), rows
// with a Why and no site number, which the reports name.
//
// and code refers to site i as _spanprofSites+i. Init starts the profiled
// run if none has started: Go initializes that variable before any
// package-level variable whose initializer runs instrumented code, and an
// imported package before its importer, so a run covers package
// initialization too. The runtime is imported as _spanprof_shadow, in an
// import declaration of its own; every injected name starts with
// _spanprof, and a package that uses such a name is refused.
//
// The idioms, before and after (S is the site's _spanprofSites+i):
//
//	go func() { ... }()               _spanprof_shadow.Go(S, func() { ... })
//	go f(x, y)                        { _spanprofA0, _spanprofA1 := x, y; _spanprof_shadow.Go(S, func() { f(_spanprofA0, _spanprofA1) }) }
//	go s.m(x)                         { _spanprofF, _spanprofA0 := s.m, x; _spanprof_shadow.Go(S, func() { _spanprofF(_spanprofA0) }) }
//	wg.Go(f)                          _spanprof_shadow.WaitGroupGo(S, &wg, f)
//	wg.Done()                         _spanprof_shadow.WaitGroupDone(&wg)
//	wg.Add(n)  (n < 0 or unknown)     _spanprof_shadow.WaitGroupAdd(&wg, n)
//	wg.Wait()                         _spanprof_shadow.WaitGroupWait(&wg)
//	g.Go(f), g.TryGo(f)  (errgroup)   _spanprof_shadow.GroupGo(S, g, f), _spanprof_shadow.GroupTryGo(S, g, f)
//	g.Wait()  (errgroup)              _spanprof_shadow.GroupWait(g)
//	g.SetLimit(n)  (errgroup)         _spanprof_shadow.GroupSetLimit(g, n)
//	sem <- v  (semaphore, S's spawn)  _spanprof_shadow.SemAcquire(S, sem, v)
//	<-sem  (its release in the child) _spanprof_shadow.SemRelease(sem)
//	grp.Spawn(f), grp.Sync()          _spanprof_shadow.ParlibGroupSpawn(S, &grp, f), _spanprof_shadow.ParlibGroupSync(&grp)
//	t := parlib.Spawn(f); t.Wait()    t := _spanprof_shadow.ParlibSpawn(S, parlib.Spawn, f); _spanprof_shadow.ParlibTaskWait(t)
//	parlib.Do(f, g)                   _spanprof_shadow.ParlibDo(S, parlib.Do, f, g)   (f at S, g at S+1)
//	parlib.For(lo, hi, n, body)       _spanprof_shadow.ParlibFor(S, parlib.For, lo, hi, n, body)   (ForRange, ForEach alike)
//	x := f(a)                         x := _spanprof_shadow.Leave(_spanprof_shadow.Enter(S), f(a))
//	x := f(a, g(), b)                 x := _spanprof_shadow.Leave1(f(a, _spanprof_shadow.EnterAfter(g(), S), b))
//	f(a)  (no result)                 _spanprof_shadow.CallBegin(S); f(a); _spanprof_shadow.CallEnd()
//	f(a, g())  (no result)            f(a, _spanprof_shadow.EnterAfter(g(), S)); _spanprof_shadow.CallEnd()
//	a, b := f()  (also var, return,   _spanprof_shadow.CallBegin(S); a, b := _spanprof_shadow.Leave2(f())
//	  and if, switch or for init)
//	a, b := f(g())  (g one result;    a, b := _spanprof_shadow.Leave2(f(_spanprof_shadow.EnterAfter(g(), S)))
//	  also for post, else-if init)
//	os.Exit(c)                        os.Exit(_spanprof_shadow.BeforeExit(c))
//	func main() { ... }               func main() { _spanprof_shadow.StartIfNeeded(); defer _spanprof_shadow.Finish(); ... }
//
// A spawned function literal made of one call whose operands make no call
// (g.Go(func() error { x = f(a); return nil }), go func() { defer
// wg.Done(); f(a) }()) keeps its call as written: the spawn's site stands
// for the call and is named by its callee (fuse.go).
//
// Two events with nothing between them are glued (glue.go): the end of a
// call whose statement a wait follows directly is LeaveGlue or CallEndGlue
// (y := LeaveGlue(Enter(S), f(a)); GroupWait(g)), and a defer wg.Done()
// first in a go statement's literal, or a wg.Done() as its last statement
// where it defers nothing, is WaitGroupDoneLast(&wg).
//
// A go statement evaluates its function value and arguments before it
// spawns; so does the rewrite, into temporaries, except for what cannot
// change before the closure runs (constants, nil, function literals, names
// of functions). The join object of a method call is passed by pointer,
// through embedded fields and method expressions as the call names it.
// parlib's functions are passed to the helpers that mirror them so that the
// file's import stays used; serial mode does not call them.
//
// The caller evaluates a call's function value and arguments before the
// call, and Go makes the calls and receives of an expression in lexical
// left-to-right order, so Enter(S), or a CallBegin statement, which comes
// first, would put what that evaluation calls, and the joins it waits for,
// inside the callee's invocation. Where it makes calls (of functions, not
// builtins or conversions) or receives, the invocation begins at an
// EnterAfter around the last of them instead, and a call that makes none
// keeps the shorter form. Whatever is evaluated after the wrapped
// expression makes none, so no event moves; the wrapped expression is a
// call or a receive, a typed single value, so it keeps its type and
// meaning: x.get().m(a) becomes EnterAfter(x.get(), S).m(a),
// f(g() > 0) becomes f(EnterAfter(g(), S) > 0), and f(xs()...) keeps its
// "...". An && or || whose right side calls is wrapped whole, since that
// side may not be evaluated. A few calls keep the first form, with a
// warning (Result.Stats.CallsArgsInside): a call whose one argument is a
// call with several results, f(g()), which leaves nothing to wrap; an
// untyped && or || that the call converts to a boolean type other than
// bool, which EnterAfter would make a bool; and a multi-valued call that
// makes no call itself in an assignment that makes calls on its left side
// or a var statement that makes calls in an earlier spec, where its last
// argument, wrapped instead (m[k()], v = f(EnterAfter(y, S))), is missing,
// untyped, nil or a generic function (m[k()], v = f(1)).
//
// Calls of functions of the package are instrumented except calls of
// functions the compiler inlines (go list -export -gcflags=-m: the
// compiler's own "can inline" decisions, as Cilkprof declines to instrument
// inlined functions), deferred calls (wrapping one would stop recover
// working in the callee), calls with more than four results, calls in
// positions where no statement can go (a multi-valued call whose arguments
// make no call, in a for statement's post statement, an else-if's init or
// the arguments of another call), and the self-recursive calls of a
// function that can neither fork nor join (forkjoin's Func.Serial), whose
// outermost call counts all of the recursion (plancall.go says why).
// Result.Stats counts them by reason.
//
// # Spawns that stay goroutines
//
// In serial mode every spawn runs inline, which hangs if the spawned code
// waits for something its continuation does. A spawn that forkjoin finds
// not elidable, for instance because its code calls a method of another
// package that takes a context.Context (semaphore.(*Weighted).Acquire
// waits for a release the continuation makes), is marked
// Goroutine in the site table, with a warning naming it and the reason: the
// runtime runs it as a real goroutine in every mode, with a shadow state of
// its own (parallel accounting), so the run stays correct and profiled.
// Functions passed to (*testing.B).RunParallel, time.AfterFunc or
// runtime.SetFinalizer run on goroutines the runtime does not know: the
// function passed at each such call, with the literals it declares, is left
// alone, and its spawns are not profiled, with a warning. What it calls is
// instrumented as everywhere else: the same code is called from profiled
// goroutines too, and the runtime ignores (and counts, for the profile's
// NotProfiled) the events of a goroutine that does not hold it, as it does
// for code that goroutines started elsewhere call back into.
//
// # Positions
//
// The rewrite keeps the original line structure where it can, and where
// inserted code or reprinting moves a line, a //line directive naming the
// original file by absolute path, at column 1, says the line's original
// number: every line that starts an original node or comment, or holds its
// closing brace, has its original line in panics, runtime.Caller and
// compiler errors. (Columns on a line that gained code are not kept.) At
// the top level a directive goes above a declaration's doc comment, between
// blank lines, since gofmt moves a directive out of a doc comment. In
// overlay builds every rewritten file also starts with a directive naming
// the original, so -trimpath sees the original path.
//
// # Tests
//
// When tests are rewritten, each named package that has test files gets a
// TestMain in a generated test file (one without stays without, as go test
// expects), which registers the -spanprofile flag, starts the run,
// sets -test.parallel to 1 (serial mode profiles one goroutine at a time;
// a -parallel flag on the command line overrides it), runs the tests and
// writes the profile (shadow.TestOutput, shadow.Finish) to the file that
// -spanprofile names, or the one spanprof test chose, or $SPANPROF_OUT; a
// plain `go test` writes nothing.
// Tests hand the runtime from goroutine to goroutine as the testing
// package does (tests.go): every test, benchmark and fuzz function starts
// with defer EndTest(BeginTest()), t.Run and b.Run become TestRun (the
// subtest is a call at the t.Run site) and t.Parallel TestParallel. A package's own TestMain is renamed
// _spanprofTestMain and called from the generated one: the profile is
// written when it returns, or when it calls os.Exit (rewritten as above).
//
// # Undo
//
// `spanprof rewrite -w` (Write) keeps, in BackupDir at the module root, the
// original of every file it changes and what it wrote there, and a
// manifest with the SHA-256 of what it wrote. Undo never destroys a change
// made after the rewrite. A file still as written gets its original back,
// byte for byte, with its permissions; a generated file still as written
// is removed. In a file changed since, the changes (from what was written
// to what is there) are carried over to the original by a three-way merge
// of lines (merge.go): they apply unless they change a line that the
// rewrite changed too, or insert where it inserted. Where they do not,
// the file is left as it is, with the other files of its directory so that
// the package still builds, and named with why (UndoResult.Left); it stays
// in the manifest for a later Undo. A Go file with nothing of the rewrite
// left (reverted by git checkout and edited) is left as it is, and one
// removed since stays removed. A generated file changed since is left.
// go.mod and go.sum go back with the last package.
//
// Write, on a tree whose backup is stale (its files reverted by other
// means), keeps as the original of a Go file it rewrites again the file as
// it is now, since only a package that is not rewritten is rewritten; for
// go.mod and go.sum, the changes made since the earlier rewrite are carried
// over to the original kept for them, and Write refuses, changing nothing,
// if they do not apply. Entries whose files are their originals again are
// dropped.
//
// # Phases
//
// A package is rewritten in phases that pass data (unit.go): the files to
// rewrite are chosen and indexed (index.go); the forkjoin analyzer, run
// through the go/analysis checker, gives every fork/join fact, elidability
// and the functions that cannot fork or join included; the plan (plan.go,
// plancall.go, tests.go, goroutines.go, sites.go) turns them into typed
// edits at nodes of the original syntax (edits.go) and the site tables;
// apply.go makes the edits on each file's decorated syntax, and print.go
// prints it, with the //line directives of package internal/linedir.
//
// # The runtime
//
// Rewritten code imports github.com/spanprof/spanprof/shadow. The spanprof
// command carries that module's runtime packages (shadow, perf, spanprofile,
// parlib) embedded (see the root package), with a go.mod that requires only
// what they import (runtime.mod, runtime.sum, made by internal/mkruntime),
// and writes them once to the user cache directory (Runtime). A build uses
// a temporary go.work that uses the module and that directory (workspace),
// not a requirement in the module's go.mod, which would raise the module's
// go line to the runtime's; `spanprof rewrite -w` copies the runtime into
// RuntimeDir and writes a go.work of relative paths. A module that is
// spanprof itself (its examples) needs none of this.
package rewrite
