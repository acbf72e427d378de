package shadow

// Instrumented calls, as the rewriter writes them (rewrite/doc.go): a
// statement between CallBegin and CallEnd, or a call in an expression
// between Enter and Leave, or EnterAfter and Leave1 to Leave4. Each takes
// the site's ID from the package's static table: no strings, no maps keyed
// by strings, no runtime.Caller.

// CallBegin marks the start of an instrumented call at site.
//
//go:noinline
func CallBegin(site SiteID) {
	g, d := gdepth()
	beginCall(g, d|depthOff, site)
}

// CallEnd marks the return of the innermost instrumented call.
//
//go:noinline
func CallEnd() {
	g, d := gdepth()
	endCall(g, d|depthOff)
}

// Entered is the token that Enter returns and Leave takes, so that a call in
// an expression can be instrumented in place: Leave(Enter(site), f(x)).
// Go makes the calls of an expression in lexical left-to-right order, so
// Enter runs before f's arguments are evaluated and before f, and Leave
// after f returns. The rewriter uses this form only where evaluating f and
// its arguments makes no calls and no receives: any it made would run
// after Enter, inside the invocation of site, where the program makes them
// in the caller. Where they make some it uses EnterAfter and Leave1.
type Entered struct{ e *engine }

// Enter marks the start of an instrumented call at site (CallBegin).
//
//go:noinline
func Enter(site SiteID) Entered {
	g, d := gdepth()
	// beginCall's common case, written out: callBegin, out of line,
	// reads the measure in line, where beginCall's inlined copy of it
	// calls restart.
	if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
		return Entered{e.callBegin(site, d|depthOff)}
	}
	return Entered{beginCall(g, d|depthOff, site)}
}

// Leave marks the return of the innermost instrumented call (CallEnd), if
// its Enter was taken, and returns the call's result.
//
//go:noinline
func Leave[T any](t Entered, v T) T {
	if t.e != nil {
		g, d := gdepth()
		// endCall's common case, written out as Enter's is: callEndAt,
		// out of line, inlines callEnd, which endCall's inlined copy of
		// it calls.
		if e := current; e != nil && g == e.owner.Load() && !e.par.on.Load() {
			e.callEndAt(d | depthOff)
		} else {
			endCall(g, d|depthOff)
		}
	}
	return v
}

// EnterAfter marks the start of an instrumented call at site (CallBegin)
// and returns v. The rewriter wraps the last call or receive that
// evaluating the called function and its arguments makes (or an && or ||
// that ends with one), so that the invocation starts after every one of
// them and right before the call, as in the program, where the caller
// evaluates them:
//
//	Leave1(f(a, EnterAfter(g(), site), b))
//
// What follows the wrapped expression makes no call and no receive, so its
// evaluation can come after the start without moving any event. The
// rewriter never wraps an operand that may not be evaluated (the right
// side of && or ||): the begin that Leave1, LeaveN or CallEnd ends is
// always made.
//
//go:noinline
func EnterAfter[T any](v T, site SiteID) T {
	g, d := gdepth()
	beginCall(g, d|depthOff, site)
	return v
}

// Leave1 marks the return of an instrumented call whose start is an
// EnterAfter in its arguments (CallEnd), and returns the call's result.
// It needs no token: the EnterAfter it ends ran on the same goroutine,
// right before the call, and an end whose begin was ignored (another
// goroutine, no run) is ignored too (gate.go), as Leave2 to Leave4 rely on.
//
//go:noinline
func Leave1[T any](v T) T {
	g, d := gdepth()
	endCall(g, d|depthOff)
	return v
}

// Leave2, Leave3 and Leave4 mark the return of an instrumented call with
// that many results, passed through: return Leave2(f(x)) after a CallBegin
// statement, or return Leave2(f(EnterAfter(g(), site))).
//
//go:noinline
func Leave2[A, B any](a A, b B) (A, B) {
	g, d := gdepth()
	endCall(g, d|depthOff)
	return a, b
}

// Leave3 is Leave2 for three results.
//
//go:noinline
func Leave3[A, B, C any](a A, b B, c C) (A, B, C) {
	g, d := gdepth()
	endCall(g, d|depthOff)
	return a, b, c
}

// Leave4 is Leave2 for four results.
//
//go:noinline
func Leave4[A, B, C, D any](a A, b B, c C, d D) (A, B, C, D) {
	g, dep := gdepth()
	endCall(g, dep|depthOff)
	return a, b, c, d
}
