package shadow

// Unwinding. A panic that unwinds through an instrumented call skips the
// CallEnd after it; when a deferred recover stops the panic, the program
// goes on in a frame above the call, whose invocation is still open on the
// shadow stack, and everything that runs afterwards would be charged to
// it. Go offers no cheap hook on unwinding (a defer per instrumented call
// would cost more than the event), so the engine finds out at the next
// event instead, from where in the goroutine's stack that event comes.
//
// Every package-level entry point is a real (never inlined) function that
// calls gdepth first: gdepth returns the depth of the entry point's caller
// (the program's function that makes the event), as the distance from the
// top of the goroutine's stack to that function's frame pointer, which the
// runtime moves along when it copies a stack. A frame records the depth of
// the function that began it (frame.issuer). A function runs only while
// the functions that called it are still there, so every invocation legally
// open at an event was begun at most as deep as the event's function; one
// begun deeper was begun by a function that has since returned, and since
// its end never came, a panic unwound it (or runtime.Goexit, which a
// deferred call can outlive). unwindTo closes those, innermost first, and
// an end (CallEnd, a child's return) then ends the innermost invocation
// only if its own function began it: an end whose begin was not profiled,
// or was closed already, is unmatched and changes nothing.
//
// A function at the same depth as one that was unwound (a sibling called
// after the recover) cannot be told from it: its invocations close at the
// first event of a shallower function instead, at the latest when the test
// that runs them ends (hold.go).
//
// The depth is measured only where gdepth is written (amd64, arm64) and
// works as described, which depthProbe checks once at start-up; elsewhere
// every event has noDepth and nothing is unwound.

// noDepth is the depth of an event whose function is not known: it unwinds
// nothing and matches any frame.
const noDepth = ^uintptr(0)

// depthOff is ORed into every measured depth: 0 where the probe found the
// frame-pointer depth sound, noDepth where it did not.
var depthOff = depthProbe()

// depthProbe checks gdepth on this build: the same depth from two entry
// points called by one function, also across a copy of the stack, and a
// greater one from a function it calls.
func depthProbe() uintptr {
	if !goroutineCheck {
		return noDepth
	}
	c := make(chan bool)
	go func() { c <- probeSame() }()
	if <-c {
		return 0
	}
	return noDepth
}

//go:noinline
func probeSame() bool {
	a := probeEntry()
	growStack(64)
	b := probeEntry2(1)
	c := probeGeneric(2.5)
	deeper := probeCaller()
	return a != 0 && a == b && a == c && deeper > a
}

//go:noinline
func probeCaller() uintptr { return probeEntry() }

//go:noinline
func probeEntry() uintptr {
	_, d := gdepth()
	return d
}

//go:noinline
func probeEntry2(x int) uintptr {
	_, d := gdepth()
	probeSink = x
	return d
}

//go:noinline
func probeGeneric[T any](v T) uintptr {
	_, d := gdepth()
	probeAny = v
	return d
}

// The probes store their arguments here so that the compiler keeps them,
// and the probes' frames, as they are; nothing reads them.
var (
	//lint:ignore U1000 written only, to keep probeEntry2's argument
	probeSink int
	//lint:ignore U1000 written only, to keep probeGeneric's argument
	probeAny any
)

// growStack uses enough stack to make the runtime copy a new goroutine's
// stack at least once.
//
//go:noinline
func growStack(n int) byte {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n > 0 {
		return growStack(n-1) + buf[(n*7)%len(buf)]
	}
	return buf[0]
}
