#include "textflag.h"

// func getg() uintptr returns the address of the calling goroutine's g,
// which the runtime keeps in thread-local storage: a cheap identity of the
// goroutine for as long as it runs.
TEXT ·getg(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
