// Package regionend defines an Analyzer that reports regions of package
// region that are begun and not ended in the same function.
//
// # Analyzer regionend
//
// regionend: report a region.Begin whose region the function does not end
//
// A region of spanprof's region package (docs/what-if.md) is measured
// from region.Begin to the End of the Region it returns, and both must be
// in the same function: the profiler matches a region's end to its begin
// by the function that makes them, as it does a call's. A Region
// discarded, ended in another function (a deferred closure, a callee) or
// not ended at all leaves the region open until the function's next
// event, so what-if profiles of it and the profile's sites are wrong. The
// analyzer reports a Begin whose result is not ended in its own function:
// neither region.Begin(name).End(), deferred or not, nor a variable
// assigned the Region whose End that function calls.
//
//	// WRONG
//	func load(path string) *Table {
//		r := region.Begin("load")
//		defer func() { r.End() }() // another function: the closure
//		return parse(path)
//	}
//
// End the region where it begins, with a deferred End for the rest of
// the function, or region.Do for a part of it:
//
//	// RIGHT
//	func load(path string) *Table {
//		defer region.Begin("load").End()
//		return parse(path)
//	}
//
// There is no suggested fix: where the region was meant to end is not
// known. go vet has no check of its own for this; its unusedresult does
// not know region.Begin.
package regionend
