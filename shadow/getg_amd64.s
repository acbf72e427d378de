#include "textflag.h"

// func getg() uintptr returns the address of the calling goroutine's g,
// which the runtime keeps in thread-local storage: a cheap identity of the
// goroutine for as long as it runs.
TEXT ·getg(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func gdepth() (gp, depth uintptr) returns getg() and how deep in its
// goroutine's stack the caller of the calling function runs: the distance
// from the top of the stack (g.stack.hi, the g's second word) to that
// frame's frame pointer. BP is the calling function's frame pointer, which
// holds its caller's. The distance survives the stack being copied (the
// runtime moves the saved frame pointers with it) and grows with every
// frame deeper (depth.go).
TEXT ·gdepth(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ (TLS), AX
	MOVQ AX, gp+0(FP)
	MOVQ 8(AX), CX
	MOVQ (BP), DX
	SUBQ DX, CX
	MOVQ CX, depth+8(FP)
	RET
