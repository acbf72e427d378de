#include "textflag.h"

// func rdpmc(counter uint32) uint64
TEXT ·rdpmc(SB), NOSPLIT|NOFRAME, $0-16
	MOVL counter+0(FP), CX
	RDPMC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+8(FP)
	RET
