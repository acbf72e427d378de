// Package emptywait defines an Analyzer that reports waits on a join object
// that nothing can spawn onto or signal.
//
// # Analyzer emptywait
//
// emptywait: report waits on a join object that nothing spawns onto or signals
//
// A Wait (or errgroup Wait, or parlib Group.Sync) on a WaitGroup that no
// code ever passes to Add, Done or Go returns at once: whatever it was meant
// to wait for runs on unjoined. It is usually a goroutine started with a
// plain go statement and never counted, or a WaitGroup shadowed by another
// of the same name. The analyzer reports a wait when its join object is a
// local variable (or an unexported package-level one) that starts out empty
// (a zero value, new(T), &T{}, errgroup.WithContext) and that the package
// uses nowhere except as the receiver of waits: any other use (an Add, a Go,
// passing it or its address on, assigning it) could signal it, and silences
// the report.
//
//	// WRONG
//	func resizeAll(paths []string) {
//		var wg sync.WaitGroup
//		for _, p := range paths {
//			go resize(p) // never counted in wg
//		}
//		wg.Wait() // returns at once; resizes may still be running
//	}
//
// Count every goroutine in the WaitGroup, for example with wg.Go:
//
//	// RIGHT
//	func resizeAll(paths []string) {
//		var wg sync.WaitGroup
//		for _, p := range paths {
//			wg.Go(func() { resize(p) })
//		}
//		wg.Wait()
//	}
//
// There is no suggested fix: which goroutines the Wait was meant for is not
// known.
//
// The analyzer takes waits and join objects from the forkjoin analyzer. It
// does not repeat go vet's checks: waitgroup reports wg.Add called inside
// the new goroutine, copylocks a WaitGroup passed by value (the copy is
// another object, signalled by nobody), loopclosure a loop variable
// captured before Go 1.22.
package emptywait
