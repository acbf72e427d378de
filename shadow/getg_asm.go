//go:build amd64 || arm64

package shadow

// getg returns an identity of the calling goroutine (its g's address).
func getg() uintptr

// goroutineCheck reports whether getg identifies goroutines here.
const goroutineCheck = true

// gdepth returns getg() and the depth in the goroutine's stack of the
// calling function's caller (depth.go).
func gdepth() (gp, depth uintptr)
