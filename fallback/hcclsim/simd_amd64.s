#include "textflag.h"

// func copyNT(dst, src unsafe.Pointer, n int)
// Copies n bytes (a multiple of 32; dst 32-byte aligned) with
// non-temporal stores: a large reduction's outputs go to memory without
// first being read into the cache, and SFENCE orders them before whatever
// tells the other ranks the data is there.
TEXT ·copyNT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
ntloop128:
	CMPQ CX, $128
	JL   ntloop32
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVNTDQ Y0, (DI)
	VMOVNTDQ Y1, 32(DI)
	VMOVNTDQ Y2, 64(DI)
	VMOVNTDQ Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	JMP  ntloop128
ntloop32:
	CMPQ CX, $32
	JL   ntdone
	VMOVDQU (SI), Y0
	VMOVNTDQ Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  ntloop32
ntdone:
	SFENCE
	VZEROUPPER
	RET

// Same-type reductions: for every 128-byte chunk, dst_j = src_0 OP src_1
// OP … OP src_{ns-1} (in that order) for each of the nd destinations.
// dsts and srcs are arrays of pointers; n is in bytes, a multiple of 128.
// STORE is VMOVNTDQ (the streaming form: every destination 32-byte
// aligned, written without being read into the cache, so a large
// AllReduce moves exactly its inputs and outputs through memory) or
// VMOVDQU (any alignment, results left in the cache). A chunk's sources
// are all read before any of its destinations is written, so a
// destination may be one of the sources (in place). SFENCE orders
// non-temporal stores before whatever tells other ranks the data is
// there.
#define VSTREAM(NAME, INSN, STORE) \
TEXT NAME(SB), NOSPLIT, $0-40 \
	MOVQ dsts+0(FP), DI \
	MOVQ srcs+8(FP), SI \
	MOVQ nd+16(FP), R10 \
	MOVQ ns+24(FP), R11 \
	MOVQ n+32(FP), CX \
	XORQ AX, AX \
chunk: \
	CMPQ AX, CX \
	JGE  done \
	MOVQ (SI), R8 \
	VMOVDQU (R8)(AX*1), Y0 \
	VMOVDQU 32(R8)(AX*1), Y1 \
	VMOVDQU 64(R8)(AX*1), Y2 \
	VMOVDQU 96(R8)(AX*1), Y3 \
	MOVQ $1, BX \
srcs: \
	CMPQ BX, R11 \
	JGE  stores \
	MOVQ (SI)(BX*8), R8 \
	INSN (R8)(AX*1), Y0, Y0 \
	INSN 32(R8)(AX*1), Y1, Y1 \
	INSN 64(R8)(AX*1), Y2, Y2 \
	INSN 96(R8)(AX*1), Y3, Y3 \
	INCQ BX \
	JMP  srcs \
stores: \
	XORQ BX, BX \
dsts: \
	CMPQ BX, R10 \
	JGE  next \
	MOVQ (DI)(BX*8), R8 \
	STORE Y0, (R8)(AX*1) \
	STORE Y1, 32(R8)(AX*1) \
	STORE Y2, 64(R8)(AX*1) \
	STORE Y3, 96(R8)(AX*1) \
	INCQ BX \
	JMP  dsts \
next: \
	ADDQ $128, AX \
	JMP  chunk \
done: \
	SFENCE \
	VZEROUPPER \
	RET

// func addF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addF32s, VADDPS, VMOVNTDQ)
// func addF32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addF32c, VADDPS, VMOVDQU)
// func addF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addF64s, VADDPD, VMOVNTDQ)
// func addF64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addF64c, VADDPD, VMOVDQU)
// func mulF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·mulF32s, VMULPS, VMOVNTDQ)
// func mulF32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·mulF32c, VMULPS, VMOVDQU)
// func mulF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·mulF64s, VMULPD, VMOVNTDQ)
// func mulF64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·mulF64c, VMULPD, VMOVDQU)
// func addI8s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI8s, VPADDB, VMOVNTDQ)
// func addI8c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI8c, VPADDB, VMOVDQU)
// func addI16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI16s, VPADDW, VMOVNTDQ)
// func addI16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI16c, VPADDW, VMOVDQU)
// func addI32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI32s, VPADDD, VMOVNTDQ)
// func addI32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI32c, VPADDD, VMOVDQU)
// func addI64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI64s, VPADDQ, VMOVNTDQ)
// func addI64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VSTREAM(·addI64c, VPADDQ, VMOVDQU)

// Narrow-float reductions (bfloat16 and float16): like VSTREAM, but each
// source is widened to float32, the sources are combined in float32 in
// rank order and the result is rounded once to the narrow type, as the
// scalar path does (reduceNarrow). A chunk is 32 elements (64 bytes) of
// every buffer; n is in bytes, a multiple of 64. STORE is VMOVNTDQ (every
// destination 32-byte aligned) or VMOVDQU (any alignment).

// Constants of the bfloat16 rounding: 0x7fff, 1, 0x7fffffff (|x|),
// 0x7f800000 (Inf), 0x40 (the quiet bit of a bfloat16 NaN).
DATA bf16k<>+0(SB)/4, $0x7fff
DATA bf16k<>+4(SB)/4, $1
DATA bf16k<>+8(SB)/4, $0x7fffffff
DATA bf16k<>+12(SB)/4, $0x7f800000
DATA bf16k<>+16(SB)/4, $0x40
GLOBL bf16k<>(SB), RODATA|NOPTR, $20

// WIDEN_BF16 loads 8 bfloat16 at MEM as float32 into Y.
#define WIDEN_BF16(MEM, Y) \
	VPMOVZXWD MEM, Y \
	VPSLLD $16, Y, Y

// WIDEN_F16 loads 8 float16 at MEM as float32 into Y.
#define WIDEN_F16(MEM, Y) \
	VCVTPH2PS MEM, Y

// ROUND_BF16 rounds the 8 float32 of SRC to nearest even bfloat16, each in
// the low half of a dword of OUT (floatx.F32ToBF16: a NaN keeps its sign
// and top payload bits and is made quiet). Clobbers Y4, Y5.
#define ROUND_BF16(SRC, OUT) \
	VPSRLD $16, SRC, Y4 \
	VPAND Y9, Y4, Y5 \
	VPADDD Y8, SRC, OUT \
	VPADDD Y5, OUT, OUT \
	VPSRLD $16, OUT, OUT \
	VPOR Y12, Y4, Y4 \
	VPAND Y10, SRC, Y5 \
	VPCMPGTD Y11, Y5, Y5 \
	VPBLENDVB Y5, Y4, OUT, OUT

// NARROW_BF16 rounds Y0..Y3 into the 32 bfloat16 of Y6 (first 16) and
// Y7 (last 16), in order.
#define NARROW_BF16 \
	ROUND_BF16(Y0, Y6) \
	ROUND_BF16(Y1, Y7) \
	VPACKUSDW Y7, Y6, Y6 \
	VPERMQ $0xD8, Y6, Y6 \
	ROUND_BF16(Y2, Y0) \
	ROUND_BF16(Y3, Y1) \
	VPACKUSDW Y1, Y0, Y7 \
	VPERMQ $0xD8, Y7, Y7

// NARROW_F16 rounds Y0..Y3 into the 32 float16 of Y6 and Y7 (F16C,
// round to nearest even).
#define NARROW_F16 \
	VCVTPS2PH $0, Y0, X6 \
	VCVTPS2PH $0, Y1, X7 \
	VINSERTI128 $1, X7, Y6, Y6 \
	VCVTPS2PH $0, Y2, X0 \
	VCVTPS2PH $0, Y3, X1 \
	VINSERTI128 $1, X1, Y0, Y7

#define VNARROW(NAME, WIDEN, NARROW, INSN, STORE) \
TEXT NAME(SB), NOSPLIT, $0-40 \
	MOVQ dsts+0(FP), DI \
	MOVQ srcs+8(FP), SI \
	MOVQ nd+16(FP), R10 \
	MOVQ ns+24(FP), R11 \
	MOVQ n+32(FP), CX \
	VPBROADCASTD bf16k<>+0(SB), Y8 \
	VPBROADCASTD bf16k<>+4(SB), Y9 \
	VPBROADCASTD bf16k<>+8(SB), Y10 \
	VPBROADCASTD bf16k<>+12(SB), Y11 \
	VPBROADCASTD bf16k<>+16(SB), Y12 \
	XORQ AX, AX \
chunk: \
	CMPQ AX, CX \
	JGE  done \
	MOVQ (SI), R8 \
	WIDEN((R8)(AX*1), Y0) \
	WIDEN(16(R8)(AX*1), Y1) \
	WIDEN(32(R8)(AX*1), Y2) \
	WIDEN(48(R8)(AX*1), Y3) \
	MOVQ $1, BX \
srcs: \
	CMPQ BX, R11 \
	JGE  narrow \
	MOVQ (SI)(BX*8), R8 \
	WIDEN((R8)(AX*1), Y4) \
	WIDEN(16(R8)(AX*1), Y5) \
	WIDEN(32(R8)(AX*1), Y6) \
	WIDEN(48(R8)(AX*1), Y7) \
	INSN Y4, Y0, Y0 \
	INSN Y5, Y1, Y1 \
	INSN Y6, Y2, Y2 \
	INSN Y7, Y3, Y3 \
	INCQ BX \
	JMP  srcs \
narrow: \
	NARROW \
	XORQ BX, BX \
dsts: \
	CMPQ BX, R10 \
	JGE  next \
	MOVQ (DI)(BX*8), R8 \
	STORE Y6, (R8)(AX*1) \
	STORE Y7, 32(R8)(AX*1) \
	INCQ BX \
	JMP  dsts \
next: \
	ADDQ $64, AX \
	JMP  chunk \
done: \
	SFENCE \
	VZEROUPPER \
	RET

// func addBF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·addBF16s, WIDEN_BF16, NARROW_BF16, VADDPS, VMOVNTDQ)
// func mulBF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·mulBF16s, WIDEN_BF16, NARROW_BF16, VMULPS, VMOVNTDQ)
// func addF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·addF16s, WIDEN_F16, NARROW_F16, VADDPS, VMOVNTDQ)
// func mulF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·mulF16s, WIDEN_F16, NARROW_F16, VMULPS, VMOVNTDQ)
// func addBF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·addBF16c, WIDEN_BF16, NARROW_BF16, VADDPS, VMOVDQU)
// func mulBF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·mulBF16c, WIDEN_BF16, NARROW_BF16, VMULPS, VMOVDQU)
// func addF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·addF16c, WIDEN_F16, NARROW_F16, VADDPS, VMOVDQU)
// func mulF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)
VNARROW(·mulF16c, WIDEN_F16, NARROW_F16, VMULPS, VMOVDQU)
