package vmath

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// expAVX2 is exp1 on 8 lanes; n is a multiple of 8 (exp_amd64.s, generated
// by asmgen.go).
//
//go:noescape
func expAVX2(dst, src *float32, n int)
