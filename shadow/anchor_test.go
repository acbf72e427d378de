package shadow

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestAnchorsWork: on amd64 the runtime leaves a goroutine's first frame
// the room its anchor needs (anchor.go). If a release of Go stops doing
// so, parallel mode falls back to the goroutine table, and this test says
// why it got slower.
func TestAnchorsWork(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("anchors are written for amd64")
	}
	if !anchorsWork() {
		t.Fatalf("a goroutine's first frame pointer is %d bytes below the top of its stack, want at least %d", probeRoom(), anchorRoom)
	}
}

func probeRoom() uintptr {
	c := make(chan uintptr, 1)
	go func() { c <- entryRoom() }()
	return <-c
}

// growStack1K recurses n frames of 1 KB deep, so that the stack is copied.
//
//go:noinline
func growStack1K(n int) int {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n == 0 {
		return int(buf[0])
	}
	return growStack1K(n-1) + int(buf[n%len(buf)])
}

// TestAnchorOfItsGoroutine: an anchor is the calling goroutine's, keyed by
// its g and the engine's key; it survives the stack's copies, and another
// goroutine or another key does not find it.
func TestAnchorOfItsGoroutine(t *testing.T) {
	if !anchorsWork() {
		t.Skip("no anchors here")
	}
	const k = 0x5eed_f00d_1234_5678
	st := &gstate{}
	done := make(chan string)
	go func() {
		anchorStore(getg()^k, st)
		st.anchoredBy.Store(getg())
		var marker byte
		before := uintptr(unsafe.Pointer(&marker))
		growStack1K(64) // 64 KB: the 2 KB stack is copied several times
		switch {
		case uintptr(unsafe.Pointer(&marker)) == before:
			done <- "the stack did not move"
		case anchorOwn(k) != st:
			done <- "the anchor was lost when the stack moved"
		case anchorOwn(k+1) != nil:
			done <- "another key found the anchor"
		default:
			other := make(chan *gstate)
			go func() { other <- anchorOwn(k) }()
			if <-other != nil {
				done <- "another goroutine found the anchor"
				return
			}
			anchorStore(0, nil)
			if anchorOwn(k) != nil {
				done <- "a cleared anchor was found"
				return
			}
			done <- ""
		}
	}()
	if msg := <-done; msg != "" {
		t.Fatal(msg)
	}
}

// TestStartGAnchors: a goroutine spawned for real finds its state through
// its anchor, not the goroutine table, and leave gives the anchor back to
// the state the goroutine had before (a child run for real on a goroutine
// that is itself one), or clears it.
func TestStartGAnchors(t *testing.T) {
	e := parallelEngine(t, benchTable())
	defer e.stop()
	if anchorsWork() != (e.anchorKey != 0) {
		t.Fatalf("anchorKey %x where anchors work is %v", e.anchorKey, anchorsWork())
	}
	if e.anchorKey == 0 {
		t.Skip("no anchors here")
	}
	done := make(chan string)
	go func() {
		g := getg()
		outer, inner := &gstate{m: e.m}, &gstate{m: e.m}
		e.startG(outer)
		if e.stateOf() != outer || e.par.byG.get(g) != nil || outer.prev != nil {
			done <- "the outer state is not anchored alone"
			return
		}
		e.startG(inner)
		if e.stateOf() != inner || inner.prev != outer || !inner.prevAnchored {
			done <- "the inner state does not shadow the outer"
			return
		}
		e.leave(g, inner, inner.prev, inner.prevAnchored, nil)
		if e.stateOf() != outer {
			done <- "leave did not give the anchor back to the outer state"
			return
		}
		e.leave(g, outer, outer.prev, outer.prevAnchored, nil)
		if e.stateOf() != nil || e.anchored() != nil {
			done <- "leave did not clear the anchor"
			return
		}
		// An anchor left in a stack that a later goroutine on the same
		// g got from the runtime: its state has ended (endOwn cleared
		// anchoredBy), or another goroutine runs it now.
		anchorStore(g^e.anchorKey, outer)
		outer.anchoredBy.Store(0)
		if e.stateOf() != nil {
			done <- "an ended state's stale anchor was taken"
			return
		}
		outer.anchoredBy.Store(g + 64)
		if e.stateOf() != nil {
			done <- "a stale anchor to another goroutine's state was taken"
			return
		}
		outer.anchoredBy.Store(g)
		if e.stateOf() != outer {
			done <- "a live anchor was not taken"
			return
		}
		anchorStore(0, nil)
		done <- ""
	}()
	if msg := <-done; msg != "" {
		t.Fatal(msg)
	}
	if e.par.byG.live != 1 {
		t.Errorf("%d states in the goroutine table, want the root's alone", e.par.byG.live)
	}
}
