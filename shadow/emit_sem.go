package shadow

import "unsafe"

// Buffered-channel semaphores. A program that bounds how many children run
// at once with a channel,
//
//	sem := make(chan struct{}, k)
//	for ... {
//		sem <- struct{}{}            // SemAcquire: take a slot
//		wg.Add(1)
//		go func() {
//			defer wg.Done()
//			defer func() { <-sem }() // SemRelease: free it
//			...
//		}()
//	}
//
// (or with the send first in the child), has the limit of errgroup's
// SetLimit(k) and gets the same model (limit.go): the semaphore is a group
// of cap(sem) slots whose lanes are the paths that freed them, a release is
// a contribution into its lanes, and an acquire that finds every slot
// taken goes on from the lane that freed first. Serial mode runs the
// children inline, each releasing before the next acquire, so the channel
// itself never blocks there and without the model the limit would never
// bind. The analyzer (analysis/forkjoin, Semaphore) says which sends and
// receives are a semaphore's. In parallel accounting the channel really
// blocks and nothing is modelled, as for SetLimit.

// SemAcquire runs sem <- v, the acquire of a semaphore whose slots the
// children of the spawn at site take, and models the wait for a slot.
//
//go:noinline
func SemAcquire[T any](site SiteID, sem chan T, v T) {
	sem <- v
	k := cap(sem)
	if k == 0 {
		return // unbuffered: a handoff, not a semaphore
	}
	gid, d := gdepth()
	if e := begin(gid, site); e != nil {
		p := chanPointer(sem)
		if e.limits[p] != k {
			e.setLimit(p, k)
		}
		e.slotAt(p, d|depthOff, site)
	}
}

// SemRelease runs <-sem, the release of a semaphore's slot at the end of
// a child, after recording the child's path so far as the end of that
// slot's lane.
//
//go:noinline
func SemRelease[T any](sem chan T) T {
	if cap(sem) > 0 {
		gid, d := gdepth()
		if e := begin(gid, -1); e != nil {
			e.doneAt(chanPointer(sem), d|depthOff)
		}
	}
	return <-sem
}

// chanPointer is the channel's identity: its runtime object, which a chan
// value points to.
func chanPointer[T any](c chan T) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&c))
}
