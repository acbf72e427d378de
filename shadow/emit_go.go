package shadow

// Go runs the call of a `go` statement at site as a spawned child. The
// rewriter evaluates the function value and its arguments first, as the go
// statement does, and passes a closure over the results.
//
// In serial mode Go's frame stays on the stack while the child runs inline,
// one frame per level of nested spawns (a chain of 10⁶ nested spawns is a
// recursion 10⁶ deep), so the frame holds only what the inline path needs
// across the child: the goroutine paths are out of line (goAsWritten), and
// the child's end takes the engine and how, not the whole child.
//
//go:noinline
func Go(site SiteID, f func()) {
	g, d := gdepth()
	d |= depthOff
	site, glue := unglue(site)
	c := spawnChild(g, d, site)
	if !c.inline() {
		goAsWritten(c, f, glue)
		return
	}
	e, how := c.e, c.how
	f()
	endInline(e, how, glue, d)
}

// goAsWritten runs the child of Go on a goroutine: its own under parallel
// accounting, or as the program did.
//
//go:noinline
func goAsWritten(c child, f func(), glue bool) {
	if c.own() {
		st := c.st
		st.fn, st.obj = f, nil
		go st.run()
		c.resumeAs(glue)
		return
	}
	go f() // not the profiled goroutine (gate.go): what the program did
}

// endInline is child.end, or child.endGlue if glue, of the child of e that
// ran inline as how.
//
//go:noinline
func endInline(e *engine, how runHow, glue bool, d uintptr) {
	c := child{e: e, how: how}
	if glue {
		c.endGlue(nil, d)
	} else {
		c.end(nil, d)
	}
}
