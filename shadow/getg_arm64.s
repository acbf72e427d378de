#include "textflag.h"

// func getg() uintptr returns the address of the calling goroutine's g,
// which the runtime keeps in register g (R28).
TEXT ·getg(SB), NOSPLIT|NOFRAME, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET

// func gdepth() (gp, depth uintptr): see getg_amd64.s. R29 is the calling
// function's frame pointer, which holds its caller's.
TEXT ·gdepth(SB), NOSPLIT|NOFRAME, $0-16
	MOVD g, R0
	MOVD R0, gp+0(FP)
	MOVD 8(g), R1
	MOVD (R29), R2
	SUB R2, R1, R1
	MOVD R1, depth+8(FP)
	RET
