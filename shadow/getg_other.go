//go:build !amd64 && !arm64

package shadow

// getg returns 0 where the goroutine cannot be identified cheaply: every
// event is then taken as the profiled goroutine's, as before the check.
func getg() uintptr { return 0 }

// goroutineCheck reports whether getg identifies goroutines here.
const goroutineCheck = false

// gdepth returns no goroutine and no depth (depth.go).
func gdepth() (gp, depth uintptr) { return 0, noDepth }
