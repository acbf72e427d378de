// Package missingdone defines an Analyzer that reports goroutines that can
// return without calling Done on the WaitGroup they were counted in.
//
// # Analyzer missingdone
//
// missingdone: report goroutines that can return without their wg.Done
//
// A goroutine started after wg.Add(1) must call wg.Done on every path that
// returns, or wg.Wait blocks forever. The analyzer follows the control flow
// of the spawned function (a literal, or a function or method of the
// package with its WaitGroup parameter bound to the go statement's
// argument) and reports each return, and the end of the body, that can be
// reached without passing a Done (or a negative Add) on the WaitGroup that
// the goroutine's other Done calls signal. Paths that end the program (a
// panic, os.Exit, log.Fatal) are not reported; runtime.Goexit is, since it
// ends only the goroutine. A branch on which the WaitGroup is nil
// (if wg != nil { defer wg.Done() }) needs no Done.
//
// Only goroutines that the spawner counts one by one are checked: an Add of
// a positive constant on the same WaitGroup at the same loop depth as the
// spawn (wg.Add(1); go f()). A WaitGroup set to n requests that workers mark
// done one by one, or a ready signal that only the first of many goroutines
// gives, is not a count of goroutines, and returning without a Done is then
// no mistake.
//
//	// WRONG
//	var wg sync.WaitGroup
//	for _, u := range urls {
//		wg.Add(1)
//		go func() {
//			resp, err := http.Get(u)
//			if err != nil {
//				return // wg.Done is never called: wg.Wait blocks forever
//			}
//			resp.Body.Close()
//			wg.Done()
//		}()
//	}
//	wg.Wait()
//
// Deferring the Done covers every path:
//
//	// RIGHT
//	go func() {
//		defer wg.Done()
//		resp, err := http.Get(u)
//		if err != nil {
//			return
//		}
//		resp.Body.Close()
//	}()
//
// or, since Go 1.25, wg.Go(func() { ... }) calls Done itself.
//
// When the Done is the body's last statement and the body has no other
// defer statement (a later Done would then run after those deferred calls,
// which might wait for the parent), the suggested fix moves it to a defer
// at the start of the body.
//
// The analyzer takes the spawns, their WaitGroups and their Done calls from
// the forkjoin analyzer. It does not repeat go vet's checks: waitgroup
// reports wg.Add called inside the new goroutine, copylocks a WaitGroup
// passed by value, loopclosure a loop variable captured before Go 1.22.
package missingdone
