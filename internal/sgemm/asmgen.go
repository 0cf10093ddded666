//go:build ignore

// asmgen.go writes kernel_amd64.s: the register-blocked FMA micro-kernels
// and the register-only FMA loops that measure the machine's peak. The
// kernels are unrolled over their tile, which is tedious and error-prone by
// hand and mechanical here. Run with `go generate ./internal/sgemm`.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }
func label(l string)               { fmt.Fprintf(&out, "%s:\n", l) }

// kernel emits func name(k int, a, b, c *float32, ldc int, alpha, beta float32)
// for an mr×(2·w) tile held in 2·mr accumulators of width w floats:
// acc[i][j] += a[p·mr+i]·b[p·nr+j] for p in [0,k) in order (one FMA per
// step, so every element is a plain sequential dot product), then
// C = alpha·acc (beta = 0: C is not read) or C = alpha·acc + beta·C, each
// product rounded before the add — the same arithmetic as the Go edge path.
//
// astride is the packed A panel's height (elements per p): mr for a full
// tile; a kernel for the bottom rows of a panel (mr < astride) reads the
// first mr rows of a taller panel, so the edge of M costs FMAs for its own
// rows only, each element the same FMA chain as in the full kernel.
func kernel(name string, mr, astride int, reg string, w int) {
	nr := 2 * w
	vb := w * 4 // bytes per vector
	acc := func(i, h int) string { return fmt.Sprintf("%s%d", reg, 2*i+h) }
	t0, t1 := fmt.Sprintf("%s%d", reg, 2*mr), fmt.Sprintf("%s%d", reg, 2*mr+1)
	x0, x1 := fmt.Sprintf("%s%d", reg, 2*mr+2), fmt.Sprintf("%s%d", reg, 2*mr+3)
	fmt.Fprintf(&out, "\n// func %s(k int, a, b, c *float32, ldc int, alpha, beta float32)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-48\n", name)
	p("MOVQ k+0(FP), CX")
	p("MOVQ a+8(FP), SI")
	p("MOVQ b+16(FP), DI")
	p("MOVQ c+24(FP), DX")
	p("MOVQ ldc+32(FP), R8")
	p("SHLQ $2, R8")
	for i := range mr {
		for h := range 2 {
			if reg == "Z" {
				p("VPXORD %s, %s, %s", acc(i, h), acc(i, h), acc(i, h))
			} else {
				p("VXORPS %s, %s, %s", acc(i, h), acc(i, h), acc(i, h))
			}
		}
	}
	p("TESTQ CX, CX")
	p("JEQ %s_store", name)
	label(name + "_loop")
	p("PREFETCHT0 %d(SI)", 8*astride*4)
	p("VMOVUPS (DI), %s", t0)
	p("VMOVUPS %d(DI), %s", vb, t1)
	for i := range mr {
		x := x0
		if i%2 == 1 {
			x = x1
		}
		p("VBROADCASTSS %d(SI), %s", 4*i, x)
		p("VFMADD231PS %s, %s, %s", t0, x, acc(i, 0))
		p("VFMADD231PS %s, %s, %s", t1, x, acc(i, 1))
	}
	p("ADDQ $%d, SI", 4*astride)
	p("ADDQ $%d, DI", 4*nr)
	p("DECQ CX")
	p("JNE %s_loop", name)
	label(name + "_store")
	p("VBROADCASTSS alpha+40(FP), %s", t0)
	for i := range mr {
		for h := range 2 {
			p("VMULPS %s, %s, %s", t0, acc(i, h), acc(i, h))
		}
	}
	p("MOVL beta+44(FP), AX")
	p("SHLL $1, AX") // drop the sign: ±0 both mean "do not read C"
	p("JEQ %s_store0", name)
	p("VBROADCASTSS beta+44(FP), %s", t1)
	for i := range mr {
		p("VMULPS (DX), %s, %s", t1, x0)
		p("VMULPS %d(DX), %s, %s", vb, t1, x1)
		p("VADDPS %s, %s, %s", x0, acc(i, 0), acc(i, 0))
		p("VADDPS %s, %s, %s", x1, acc(i, 1), acc(i, 1))
		p("VMOVUPS %s, (DX)", acc(i, 0))
		p("VMOVUPS %s, %d(DX)", acc(i, 1), vb)
		if i < mr-1 {
			p("ADDQ R8, DX")
		}
	}
	p("VZEROUPPER")
	p("RET")
	label(name + "_store0")
	for i := range mr {
		p("VMOVUPS %s, (DX)", acc(i, 0))
		p("VMOVUPS %s, %d(DX)", acc(i, 1), vb)
		if i < mr-1 {
			p("ADDQ R8, DX")
		}
	}
	p("VZEROUPPER")
	p("RET")
}

// peak emits func name(n int): n iterations of nacc independent FMAs on
// registers only — no loads, no dependences longer than one FMA per
// accumulator per iteration — the most FMA work one core can retire.
func peak(name, reg string, nacc int) {
	fmt.Fprintf(&out, "\n// func %s(n int)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-8\n", name)
	p("MOVQ n+0(FP), CX")
	for i := range nacc + 2 {
		if reg == "Z" {
			p("VPXORD %s%d, %s%d, %s%d", reg, i, reg, i, reg, i)
		} else {
			p("VXORPS %s%d, %s%d, %s%d", reg, i, reg, i, reg, i)
		}
	}
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	label(name + "_loop")
	for i := range nacc {
		p("VFMADD231PS %s%d, %s%d, %s%d", reg, nacc, reg, nacc+1, reg, i)
	}
	p("DECQ CX")
	p("JNE %s_loop", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// packRows emits func name(dst, src *float32, ld, kb int): kb rows of
// 32 floats, ld floats apart in src, copied to dst back to back (a whole
// panel of the AVX-512 kernel). Each row also prefetches the row's next 32
// floats into L2: B is read panel after panel, and with a wide B every
// row of a panel sits on its own page, where the hardware prefetchers do
// not follow; the kernel runs between two panels, so the next panel's
// lines arrive while it does.
func packRows(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, src *float32, ld, kb int)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ ld+16(FP), R8")
	p("SHLQ $2, R8")
	p("MOVQ kb+24(FP), CX")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	label(name + "_loop")
	p("VMOVUPS (SI), Z0")
	p("VMOVUPS 64(SI), Z1")
	p("PREFETCHT1 128(SI)")
	p("PREFETCHT1 192(SI)")
	p("VMOVUPS Z0, (DI)")
	p("VMOVUPS Z1, 64(DI)")
	p("ADDQ R8, SI")
	p("ADDQ $128, DI")
	p("DECQ CX")
	p("JNE %s_loop", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// packRowsIdx emits func name(dst, src *float32, off *int32, kb int): kb
// rows of 32 floats, row p starting off[p] floats after src, copied to dst
// back to back (the rows of a convolution's phase planes, convgrid.go;
// AVX-512 only).
func packRowsIdx(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, src *float32, off *int32, kb int)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ off+16(FP), R8")
	p("MOVQ kb+24(FP), CX")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	label(name + "_loop")
	p("MOVLQSX (R8), AX")
	p("VMOVUPS (SI)(AX*4), Z0")
	p("VMOVUPS 64(SI)(AX*4), Z1")
	p("VMOVUPS Z0, (DI)")
	p("VMOVUPS Z1, 64(DI)")
	p("ADDQ $4, R8")
	p("ADDQ $128, DI")
	p("DECQ CX")
	p("JNE %s_loop", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// taps emits func name(dst, src *float32, off *int32, w *float32, ntaps, n int):
// dst[i] = Σ_t float32(w[t]·src[i+off[t]]) for i < n,
// the taps added in order t = 0, 1, … to a zero start, each product
// rounded before its add (VMULPS then VADDPS: the bits of the Go loop and
// of one Axpy pass per tap). Four vectors (64 outputs) at a time, four
// independent add chains, then one vector at a time, then the rest under
// a mask (AVX-512).
func taps(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, src *float32, off *int32, w *float32, ntaps, n int)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-48\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ off+16(FP), R8")
	p("MOVQ w+24(FP), R10")
	p("MOVQ ntaps+32(FP), R11")
	p("MOVQ n+40(FP), CX")
	label(name + "_loop64")
	p("CMPQ CX, $64")
	p("JLT %s_loop16", name)
	for i := range 4 {
		p("VPXORD Z%d, Z%d, Z%d", i, i, i)
	}
	p("XORQ R9, R9")
	label(name + "_tap64")
	p("MOVLQSX (R8)(R9*4), AX")
	p("LEAQ (SI)(AX*4), AX")
	p("VBROADCASTSS (R10)(R9*4), Z4")
	for i := range 4 {
		p("VMULPS %d(AX), Z4, Z%d", 64*i, 5+i)
	}
	for i := range 4 {
		p("VADDPS Z%d, Z%d, Z%d", 5+i, i, i)
	}
	p("INCQ R9")
	p("CMPQ R9, R11")
	p("JLT %s_tap64", name)
	for i := range 4 {
		p("VMOVUPS Z%d, %d(DI)", i, 64*i)
	}
	p("ADDQ $256, SI")
	p("ADDQ $256, DI")
	p("SUBQ $64, CX")
	p("JMP %s_loop64", name)
	label(name + "_loop16")
	p("CMPQ CX, $16")
	p("JLT %s_tail", name)
	p("VPXORD Z0, Z0, Z0")
	p("XORQ R9, R9")
	label(name + "_tap16")
	p("MOVLQSX (R8)(R9*4), AX")
	p("VBROADCASTSS (R10)(R9*4), Z4")
	p("VMULPS (SI)(AX*4), Z4, Z5")
	p("VADDPS Z5, Z0, Z0")
	p("INCQ R9")
	p("CMPQ R9, R11")
	p("JLT %s_tap16", name)
	p("VMOVUPS Z0, (DI)")
	p("ADDQ $64, SI")
	p("ADDQ $64, DI")
	p("SUBQ $16, CX")
	p("JMP %s_loop16", name)
	// The last n mod 16 outputs under a mask: the masked-off lanes are
	// neither loaded (no fault past the end of src) nor stored.
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	p("MOVQ $1, AX")
	p("SHLQ CX, AX")
	p("DECQ AX")
	p("KMOVW AX, K1")
	p("VPXORD Z0, Z0, Z0")
	p("XORQ R9, R9")
	label(name + "_tapN")
	p("MOVLQSX (R8)(R9*4), AX")
	p("VBROADCASTSS (R10)(R9*4), Z4")
	p("VMULPS.Z (SI)(AX*4), Z4, K1, Z5")
	p("VADDPS Z5, Z0, Z0")
	p("INCQ R9")
	p("CMPQ R9, R11")
	p("JLT %s_tapN", name)
	p("VMOVUPS Z0, K1, (DI)")
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// sum emits func name(x *float32, n int) float32: the float32 sum of
// x[0:n] in a fixed order — 64 elements at a time into four vector
// accumulators, then 16 at a time into the first, the last n mod 16 under
// a mask into the second, the accumulators added pairwise and the lanes
// folded in halves (AVX-512).
func sum(name string) {
	fmt.Fprintf(&out, "\n// func %s(x *float32, n int) float32\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-20\n", name)
	p("MOVQ x+0(FP), SI")
	p("MOVQ n+8(FP), CX")
	for i := range 4 {
		p("VPXORD Z%d, Z%d, Z%d", i, i, i)
	}
	label(name + "_loop64")
	p("CMPQ CX, $64")
	p("JLT %s_loop16", name)
	for i := range 4 {
		p("VADDPS %d(SI), Z%d, Z%d", 64*i, i, i)
	}
	p("ADDQ $256, SI")
	p("SUBQ $64, CX")
	p("JMP %s_loop64", name)
	label(name + "_loop16")
	p("CMPQ CX, $16")
	p("JLT %s_tail", name)
	p("VADDPS (SI), Z0, Z0")
	p("ADDQ $64, SI")
	p("SUBQ $16, CX")
	p("JMP %s_loop16", name)
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_reduce", name)
	p("MOVQ $1, AX")
	p("SHLQ CX, AX")
	p("DECQ AX")
	p("KMOVW AX, K1")
	p("VMOVUPS.Z (SI), K1, Z4")
	p("VADDPS Z4, Z1, Z1")
	label(name + "_reduce")
	p("VADDPS Z1, Z0, Z0")
	p("VADDPS Z3, Z2, Z2")
	p("VADDPS Z2, Z0, Z0")
	p("VEXTRACTF64X4 $1, Z0, Y1")
	p("VADDPS Y1, Y0, Y0")
	p("VEXTRACTF128 $1, Y0, X1")
	p("VADDPS X1, X0, X0")
	p("VMOVHLPS X0, X1, X1")
	p("VADDPS X1, X0, X0")
	p("VMOVSHDUP X0, X1")
	p("VADDSS X1, X0, X0")
	p("VMOVSS X0, ret+16(FP)")
	p("VZEROUPPER")
	p("RET")
}

// goMax emits r = max(a, b) as Go's builtin computes it, lane by lane:
// NaN when either is NaN, +0 for max(-0, +0), else the larger (VMAXPS
// alone returns b for NaNs and for equal zeros).
func goMax(a, b, r string) {
	p("VMAXPS %s, %s, %s", b, a, r)
	p("VCMPPS $0, %s, %s, K1", b, a) // a == b (ordered): a AND b keeps +0 over -0 (VPANDD: AVX-512F)
	p("VPANDD %s, %s, K1, %s", b, a, r)
	p("VCMPPS $3, %s, %s, K2", b, a) // unordered: a + b is NaN
	p("VADDPS %s, %s, K2, %s", b, a, r)
}

// maxPairs emits func name(dst, r0, r1 *float32, n int): dst[i] = the
// max of r0[2i], r0[2i+1], r1[2i], r1[2i+1] for i < n, n a multiple of
// 16, as Go's builtin max (MaxPool with 2×2 windows, stride 2; AVX-512).
// The rows' maxima first, then the even and odd lanes split by VPERMT2PS.
func maxPairs(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, r0, r1 *float32, n int)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ r0+8(FP), SI")
	p("MOVQ r1+16(FP), DX")
	p("MOVQ n+24(FP), CX")
	p("VMOVUPS evenLanes<>(SB), Z10")
	p("VMOVUPS oddLanes<>(SB), Z11")
	label(name + "_loop")
	p("CMPQ CX, $16")
	p("JLT %s_done", name)
	p("VMOVUPS (SI), Z0")
	p("VMOVUPS 64(SI), Z1")
	p("VMOVUPS (DX), Z2")
	p("VMOVUPS 64(DX), Z3")
	goMax("Z0", "Z2", "Z4")
	goMax("Z1", "Z3", "Z5")
	p("VMOVAPS Z4, Z6")
	p("VPERMT2PS Z5, Z10, Z6") // even lanes of (Z4, Z5)
	p("VMOVAPS Z4, Z7")
	p("VPERMT2PS Z5, Z11, Z7") // odd lanes
	goMax("Z6", "Z7", "Z8")
	p("VMOVUPS Z8, (DI)")
	p("ADDQ $128, SI")
	p("ADDQ $128, DX")
	p("ADDQ $64, DI")
	p("SUBQ $16, CX")
	p("JMP %s_loop", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// copyRows emits func name(dst, src *float32, n, rows, ldd, lds int):
// rows rows of n floats, ldd and lds apart, 16 floats per vector move
// and the last n mod 16 under a mask (AVX-512): the row copies of small
// planes (padding, compaction) without a call to memmove per row.
//
// With add set it emits func name(dst, src *float32, n, rows, ldd, lds
// int, b float32) instead, storing src + b (one float32 add per element:
// a bias added on the way).
func copyRows(name string, add bool) {
	if add {
		fmt.Fprintf(&out, "\n// func %s(dst, src *float32, n, rows, ldd, lds int, b float32)\n", name)
		fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-52\n", name)
		p("VBROADCASTSS b+48(FP), Z1")
	} else {
		fmt.Fprintf(&out, "\n// func %s(dst, src *float32, n, rows, ldd, lds int)\n", name)
		fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-48\n", name)
	}
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ n+16(FP), BX")
	p("MOVQ rows+24(FP), R8")
	p("MOVQ ldd+32(FP), R9")
	p("SHLQ $2, R9")
	p("MOVQ lds+40(FP), R10")
	p("SHLQ $2, R10")
	p("MOVQ BX, CX")
	p("ANDQ $15, CX")
	p("MOVQ $1, AX")
	p("SHLQ CX, AX")
	p("DECQ AX")
	p("KMOVW AX, K1")
	label(name + "_row")
	p("TESTQ R8, R8")
	p("JEQ %s_done", name)
	p("MOVQ DI, R11")
	p("MOVQ SI, R12")
	p("MOVQ BX, CX")
	label(name + "_loop16")
	p("CMPQ CX, $16")
	p("JLT %s_tail", name)
	p("VMOVUPS (R12), Z0")
	if add {
		p("VADDPS Z1, Z0, Z0")
	}
	p("VMOVUPS Z0, (R11)")
	p("ADDQ $64, R11")
	p("ADDQ $64, R12")
	p("SUBQ $16, CX")
	p("JMP %s_loop16", name)
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_next", name)
	p("VMOVUPS.Z (R12), K1, Z0")
	if add {
		p("VADDPS Z1, Z0, Z0")
	}
	p("VMOVUPS Z0, K1, (R11)")
	label(name + "_next")
	p("ADDQ R9, DI")
	p("ADDQ R10, SI")
	p("DECQ R8")
	p("JMP %s_row", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// interleaveAdd emits func name(dst, a, c *float32, n int, b float32):
// dst[2i] = (0 + a[i]) + b and dst[2i+1] = (0 + c[i]) + b for i < n —
// two rows of a transposed convolution's columns written into the
// alternate columns of an output row they tile, the bias added (0 + v
// makes -0 +0, as adding into a cleared output does): 16 pairs per step
// through VPERMT2PS, the last n mod 16 under masks (AVX-512F).
func interleaveAdd(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, a, c *float32, n int, b float32)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-36\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ a+8(FP), SI")
	p("MOVQ c+16(FP), DX")
	p("MOVQ n+24(FP), CX")
	p("VBROADCASTSS b+32(FP), Z9")
	p("VPXORD Z8, Z8, Z8")
	p("VMOVUPS loPairs<>(SB), Z10")
	p("VMOVUPS hiPairs<>(SB), Z11")
	step := func(load func(src, reg string), store func(reg string, off int)) {
		load("SI", "Z0")
		load("DX", "Z1")
		p("VADDPS Z8, Z0, Z0")
		p("VADDPS Z8, Z1, Z1")
		p("VADDPS Z9, Z0, Z0")
		p("VADDPS Z9, Z1, Z1")
		p("VMOVAPS Z0, Z2")
		p("VPERMT2PS Z1, Z10, Z2") // a0 c0 a1 c1 … a7 c7
		p("VPERMT2PS Z1, Z11, Z0") // a8 c8 … a15 c15
		store("Z2", 0)
		store("Z0", 64)
	}
	label(name + "_loop")
	p("CMPQ CX, $16")
	p("JLT %s_tail", name)
	step(func(src, reg string) { p("VMOVUPS (%s), %s", src, reg) },
		func(reg string, off int) { p("VMOVUPS %s, %d(DI)", reg, off) })
	p("ADDQ $64, SI")
	p("ADDQ $64, DX")
	p("ADDQ $128, DI")
	p("SUBQ $16, CX")
	p("JMP %s_loop", name)
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	p("MOVQ $1, AX")
	p("SHLQ CX, AX")
	p("DECQ AX")
	p("KMOVW AX, K3") // the n mod 16 inputs of each row
	p("SHLQ $1, CX")
	p("MOVQ $1, AX")
	p("SHLQ CX, AX")
	p("DECQ AX")
	p("KMOVW AX, K1") // the 2·(n mod 16) outputs: low 16, then the rest
	p("SHRQ $16, AX")
	p("KMOVW AX, K2")
	step(func(src, reg string) { p("VMOVUPS.Z (%s), K3, %s", src, reg) },
		func(reg string, off int) {
			k := "K1"
			if off > 0 {
				k = "K2"
			}
			p("VMOVUPS %s, %s, %d(DI)", reg, k, off)
		})
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// pairLanes emits a read-only table of 16 int32 indices interleaving
// lanes first… of two vectors: first, 16+first, first+1, 17+first, ….
func pairLanes(name string, first int) {
	for i := range 16 {
		fmt.Fprintf(&out, "DATA %s<>+%d(SB)/4, $%d\n", name, 4*i, first+i/2+16*(i%2))
	}
	fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $64\n", name)
}

// lanes emits a read-only table of 16 int32 lane indices.
func lanes(name string, first int) {
	for i := range 16 {
		fmt.Fprintf(&out, "DATA %s<>+%d(SB)/4, $%d\n", name, 4*i, first+2*i)
	}
	fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $64\n", name)
}

// axpy emits func name(dst, src *float32, n int, a float32):
// dst[i] += a·src[i], the product rounded before the add (VMULPS then
// VADDPS, as Go computes a*b + c on amd64), so every element is the bits
// of the Go loop it replaces; 32 floats per iteration, then 8, then one.
func axpy(name string) {
	fmt.Fprintf(&out, "\n// func %s(dst, src *float32, n int, a float32)\n", name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-28\n", name)
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ n+16(FP), CX")
	p("VBROADCASTSS a+24(FP), Y0")
	label(name + "_loop32")
	p("CMPQ CX, $32")
	p("JLT %s_loop8", name)
	for i := range 4 {
		p("VMULPS %d(SI), Y0, Y%d", 32*i, 1+i)
	}
	for i := range 4 {
		p("VADDPS %d(DI), Y%d, Y%d", 32*i, 1+i, 1+i)
	}
	for i := range 4 {
		p("VMOVUPS Y%d, %d(DI)", 1+i, 32*i)
	}
	p("ADDQ $128, SI")
	p("ADDQ $128, DI")
	p("SUBQ $32, CX")
	p("JMP %s_loop32", name)
	label(name + "_loop8")
	p("CMPQ CX, $8")
	p("JLT %s_tail", name)
	p("VMULPS (SI), Y0, Y1")
	p("VADDPS (DI), Y1, Y1")
	p("VMOVUPS Y1, (DI)")
	p("ADDQ $32, SI")
	p("ADDQ $32, DI")
	p("SUBQ $8, CX")
	p("JMP %s_loop8", name)
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	p("VMULSS (SI), X0, X1")
	p("VADDSS (DI), X1, X1")
	p("VMOVSS X1, (DI)")
	p("ADDQ $4, SI")
	p("ADDQ $4, DI")
	p("DECQ CX")
	p("JMP %s_tail", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

// vecOp emits func name(dst, a, b *float32, n int) (mode "vv": dst = a
// op b), func name(dst, a *float32, n int, s float32) ("vs": dst = a op
// s) or func name(dst, b *float32, n int, s float32) ("sv": dst = s op
// b), for op an AVX instruction stem (ADD, SUB, MUL, DIV): 32 floats per
// iteration, then 8, then one. IEEE arithmetic rounds each result
// exactly, so every element is the bits of the Go expression.
func vecOp(name, op, mode string) {
	fmt.Fprintf(&out, "\n// %s: %s, mode %s\n", name, op, mode)
	switch mode {
	case "vv":
		fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
		p("MOVQ dst+0(FP), DI")
		p("MOVQ a+8(FP), SI")
		p("MOVQ b+16(FP), DX")
		p("MOVQ n+24(FP), CX")
	default:
		fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-28\n", name)
		p("MOVQ dst+0(FP), DI")
		p("MOVQ a+8(FP), SI")
		p("MOVQ n+16(FP), CX")
		p("VBROADCASTSS s+24(FP), Y0")
	}
	// one emits the op on vector width w ("PS", Y) or a scalar ("SS", X)
	// at byte offset off into register r.
	one := func(suffix, reg string, off, r int) {
		load := map[string]string{"PS": "VMOVUPS", "SS": "VMOVSS"}[suffix]
		switch mode {
		case "vv":
			p("%s %d(SI), %s%d", load, off, reg, r)
			p("V%s%s %d(DX), %s%d, %s%d", op, suffix, off, reg, r, reg, r)
		case "vs":
			p("%s %d(SI), %s%d", load, off, reg, r)
			p("V%s%s %s0, %s%d, %s%d", op, suffix, reg, reg, r, reg, r)
		case "sv":
			p("V%s%s %d(SI), %s0, %s%d", op, suffix, off, reg, reg, r)
		}
	}
	label(name + "_loop32")
	p("CMPQ CX, $32")
	p("JLT %s_loop8", name)
	for i := range 4 {
		one("PS", "Y", 32*i, 1+i)
	}
	for i := range 4 {
		p("VMOVUPS Y%d, %d(DI)", 1+i, 32*i)
	}
	p("ADDQ $128, SI")
	if mode == "vv" {
		p("ADDQ $128, DX")
	}
	p("ADDQ $128, DI")
	p("SUBQ $32, CX")
	p("JMP %s_loop32", name)
	label(name + "_loop8")
	p("CMPQ CX, $8")
	p("JLT %s_tail", name)
	one("PS", "Y", 0, 1)
	p("VMOVUPS Y1, (DI)")
	p("ADDQ $32, SI")
	if mode == "vv" {
		p("ADDQ $32, DX")
	}
	p("ADDQ $32, DI")
	p("SUBQ $8, CX")
	p("JMP %s_loop8", name)
	label(name + "_tail")
	p("TESTQ CX, CX")
	p("JEQ %s_done", name)
	one("SS", "X", 0, 1)
	p("VMOVSS X1, (DI)")
	p("ADDQ $4, SI")
	if mode == "vv" {
		p("ADDQ $4, DX")
	}
	p("ADDQ $4, DI")
	p("DECQ CX")
	p("JMP %s_tail", name)
	label(name + "_done")
	p("VZEROUPPER")
	p("RET")
}

func main() {
	out.WriteString("// Code generated by asmgen.go; DO NOT EDIT.\n\n#include \"textflag.h\"\n")
	kernel("kern512", mr512, mr512, "Z", 16)
	kernel("kern512r4", 4, mr512, "Z", 16)
	kernel("kern512r8", 8, mr512, "Z", 16)
	kernel("kern256", mr256, mr256, "Y", 8)
	packRows("packRows32")
	packRowsIdx("packRowsIdx32")
	taps("taps512")
	sum("sum512")
	out.WriteString("\n")
	lanes("evenLanes", 0)
	lanes("oddLanes", 1)
	maxPairs("maxPairs512")
	out.WriteString("\n")
	pairLanes("loPairs", 0)
	pairLanes("hiPairs", 8)
	interleaveAdd("interleaveAdd512")
	copyRows("copyRows512", false)
	copyRows("copyRowsAdd512", true)
	axpy("axpyAVX2")
	for _, op := range []string{"ADD", "SUB", "MUL", "DIV"} {
		for _, mode := range []string{"vv", "vs", "sv"} {
			vecOp("vec"+op+mode, op, mode)
		}
	}
	peak("fmaPeak512", "Z", peak512)
	peak("fmaPeak256", "Y", peak256)
	if err := os.WriteFile("kernel_amd64.s", out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Tile heights; kernel_amd64.go declares the same numbers.
const (
	mr512 = 12 // 24 zmm accumulators + 2 B vectors + 2 broadcasts
	mr256 = 6  // 12 ymm accumulators + 2 B vectors + 2 broadcasts
	// Independent FMA chains of the peak loops: as many as the registers
	// allow, well above FMA latency × FMA ports on any current core.
	peak512 = 24
	peak256 = 14
)
