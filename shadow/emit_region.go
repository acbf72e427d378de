package shadow

// Regions (package region, docs/what-if.md): the rewriter turns
//
//	region.Begin(name)      into  EnterAfter(region.Begin(name), S)
//	r.End()                 into  RegionEnd(r)
//	region.Do(name, f)      into  RegionDo(S, region.Do, name, f)
//
// where S is a site of kind region whose Func is the region's name: a
// region is an invocation of its site, measured as a call, begun and
// ended by the function that names it (its depth matches them, as for
// calls). EnterAfter is the call's own entry point: region.Begin returns
// its value unchanged. The program's functions are called all the same,
// so its import of region stays used; they do nothing.

// RegionEnd ends the region r began: r.End(), then the end of the
// innermost invocation, the region's, if its begin was taken. R is
// region.Region, named by a constraint so that the runtime does not
// import the package.
//
//go:noinline
func RegionEnd[R interface{ End() }](r R) {
	r.End()
	g, d := gdepth()
	endCall(g, d|depthOff)
}

// RegionDo runs do(name, f), region.Do, as an invocation of region site.
//
//go:noinline
func RegionDo(site SiteID, do func(string, func()), name string, f func()) {
	g, d := gdepth()
	e := beginCall(g, d|depthOff, site)
	do(name, f)
	if e != nil {
		g, d := gdepth()
		endCall(g, d|depthOff)
	}
}
