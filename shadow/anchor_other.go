//go:build !amd64

package shadow

// Anchors are written for amd64 only; elsewhere every goroutine's state is
// in the goroutine table (anchor.go).

func anchorOwn(k uintptr) *gstate         { return nil }
func anchorStore(key uintptr, st *gstate) {}
func entryRoom() uintptr                  { return 0 }

const anchorArch = false
