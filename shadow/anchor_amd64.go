package shadow

// anchorOwn returns the calling goroutine's anchored state if the anchor's
// key is the goroutine's g xor k and the state's anchoredBy is the
// goroutine's g, or nil: anchored for the calling goroutine, in one call.
func anchorOwn(k uintptr) *gstate

// anchorStore sets the calling goroutine's anchor to key and st.
func anchorStore(key uintptr, st *gstate)

// entryRoom returns g.stack.hi less the calling function's frame pointer.
func entryRoom() uintptr

// anchorArch says that this platform has anchors (anchor.go).
const anchorArch = true
