#include "go_asm.h"
#include "textflag.h"

// The anchor is the two words at the top of a goroutine's stack, above its
// first frame (anchor.go): a key at g.stack.hi-16 and a state at
// g.stack.hi-8. g.stack.hi is the g's second word.

// func anchorOwn(k uintptr) *gstate returns the state of the calling
// goroutine's anchor if its key is the goroutine's g xor k and the state
// names the goroutine as the one that anchored it (gstate.anchoredBy), or
// nil: the anchor and anchored's check in one call, for every event of a
// goroutine spawned for real. A plain load of anchoredBy is an atomic
// one on amd64.
TEXT ·anchorOwn(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ (TLS), AX
	MOVQ 8(AX), CX
	MOVQ k+0(FP), DX
	XORQ AX, DX
	CMPQ DX, -16(CX)
	JNE nostate
	MOVQ -8(CX), BX
	CMPQ gstate_anchoredBy(BX), AX
	JNE nostate
	MOVQ BX, ret+8(FP)
	RET
nostate:
	MOVQ $0, ret+8(FP)
	RET

// func anchorStore(key uintptr, st *gstate) sets the calling goroutine's
// anchor.
TEXT ·anchorStore(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ (TLS), AX
	MOVQ 8(AX), CX
	MOVQ key+0(FP), DX
	MOVQ st+8(FP), BX
	MOVQ DX, -16(CX)
	MOVQ BX, -8(CX)
	RET

// func entryRoom() uintptr returns how far below the top of the calling
// goroutine's stack the calling function's frame pointer is. BP is that
// function's frame pointer: the address where its prologue saved its
// caller's.
TEXT ·entryRoom(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ (TLS), AX
	MOVQ 8(AX), CX
	SUBQ BP, CX
	MOVQ CX, ret+0(FP)
	RET
