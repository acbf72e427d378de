package shadow

// Go runs the call of a `go` statement at site as a spawned child. The
// rewriter evaluates the function value and its arguments first, as the go
// statement does, and passes a closure over the results.
//
//go:noinline
func Go(site SiteID, f func()) {
	g, d := gdepth()
	d |= depthOff
	site, glue := unglue(site)
	c := spawnChild(g, d, site)
	switch {
	case c.inline():
		f()
		if glue {
			c.endGlue(nil, d)
		} else {
			c.end(nil, d)
		}
	case c.own():
		go func() {
			defer c.start().exit(nil)
			f()
		}()
		c.resume()
	default:
		go f() // not the profiled goroutine (gate.go): what the program did
	}
}
