// Package waitcycle defines an Analyzer that reports spawned functions that
// wait on the join object they themselves must signal: a deadlock.
//
// # Analyzer waitcycle
//
// waitcycle: report goroutines that wait on their own join object
//
// A function spawned onto a join object signals it when it returns: wg.Go,
// errgroup's Go and TryGo, parlib's Spawn do so by construction, and a go
// statement does so with a defer wg.Done() at the top of its body. If that
// function waits on the same object (wg.Wait, g.Wait, grp.Sync), the Wait
// cannot return before the function itself has returned: the goroutine and
// its parent, which waits on the same object, block forever. The analyzer
// reports such waits in the spawned function, in literals it defers or calls
// in place, and in functions of the package it calls (a few levels deep),
// with parameters bound to arguments, so a recursive walker that passes its
// WaitGroup down is caught.
//
//	// WRONG
//	func (n *Node) walk(wg *sync.WaitGroup, visit func(*Node)) {
//		defer wg.Done()
//		visit(n)
//		for _, c := range n.Children {
//			wg.Add(1)
//			go c.walk(wg, visit)
//		}
//		wg.Wait() // waits for itself: it is one of wg's children
//	}
//
// Only the parent waits; each child joins its own children, or none:
//
//	// RIGHT
//	func (n *Node) walk(wg *sync.WaitGroup, visit func(*Node)) {
//		defer wg.Done()
//		visit(n)
//		for _, c := range n.Children {
//			wg.Add(1)
//			go c.walk(wg, visit)
//		}
//	}
//
//	var wg sync.WaitGroup
//	wg.Add(1)
//	go root.walk(&wg, visit)
//	wg.Wait()
//
// A goroutine whose Done is not deferred and that waits only after calling
// it (a barrier) is not reported. There is no suggested fix: which side
// should stop waiting is a design decision.
//
// The analyzer takes spawns, join objects and waits from the forkjoin
// analyzer. It does not repeat go vet's checks: waitgroup reports wg.Add
// called inside the new goroutine, copylocks a WaitGroup passed by value,
// loopclosure a loop variable captured before Go 1.22.
package waitcycle
