//go:build !go1.27

#include "textflag.h"

// func curG() unsafe.Pointer
TEXT ·curG(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
