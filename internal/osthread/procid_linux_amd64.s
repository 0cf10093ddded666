//go:build !go1.27

#include "textflag.h"

// func curG() unsafe.Pointer
TEXT ·curG(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
