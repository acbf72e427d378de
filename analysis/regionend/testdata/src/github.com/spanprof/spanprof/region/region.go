// Package region marks regions of code for spanprof's what-if profiles
// (docs/what-if.md): code whose speed-up a programmer considers, as
// TaskProf's causal profile lets one mark it (Yoga and Nagarakatte, FSE
// 2017, §4, causal_begin and causal_end):
//
//	defer region.Begin("build tree").End()
//
//	region.Do("build tree", func() { t = build(keys) })
//
// A region ends in the function that began it: a Begin whose Region is
// not ended there (spanvet's regionend reports it) leaves the region open
// until that function's next event. Regions nest, with each other and
// with calls.
//
// In a program that spanprof does not profile, every function here does
// nothing but call f: Begin and End compile to nothing, and the package
// imports nothing. spanprof run, test and build rewrite the calls instead
// (rewrite/doc.go): each Begin, Do and End becomes a call of the spanprof
// runtime that opens or closes an invocation of a site of kind region,
// named after the region (the Func of the site), at the place of the
// Begin or Do, so that regions show in the report and the pprof file like
// calls, and `spanprof run -whatif "build tree"` asks what the run would
// have measured with the region faster. The package keeps no state and
// looks nothing up at run time: the rewritten call carries the site's
// number, as every instrumented call does, and the package costs an
// unprofiled binary nothing. It is part of the runtime source spanprof
// embeds (spanprof.go), because an instrumented build resolves the whole
// spanprof module, this package with it, to that source.
package region

// Region is a region begun by Begin, which End closes.
type Region struct{}

// Begin begins the region called name.
func Begin(name string) Region { return Region{} }

// End ends the region.
func (Region) End() {}

// Do runs f as the region called name.
func Do(name string, f func()) { f() }
