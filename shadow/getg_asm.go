//go:build amd64 || arm64

package shadow

// getg returns an identity of the calling goroutine (its g's address).
func getg() uintptr

// goroutineCheck reports whether getg identifies goroutines here.
const goroutineCheck = true
