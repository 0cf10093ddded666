//go:build ignore

// asmgen.go writes exp_amd64.s: AVX2 (8-lane) and AVX-512 (16-lane)
// kernels that perform exactly the float32 operations of exp.go and
// funcs.go, in the same order (no FMA), so all give the same bits. Each
// kernel is written once over a width. Run with `go generate
// ./internal/vmath` (or `go run asmgen.go -o file`); asmgen_test.go
// checks that exp_amd64.s is what this prints.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"os"
	"regexp"
	"strings"
)

var out bytes.Buffer

// The constants of exp.go, each replicated over a vector (exp<tag>c<>).
var consts = []struct {
	name string
	v    uint32
}{
	{"hi", math.Float32bits(88.8)},
	{"lo", math.Float32bits(-104)},
	{"log2e", math.Float32bits(1.44269504088896341)},
	{"c1", math.Float32bits(0.693359375)},
	{"c2", math.Float32bits(-2.12194440e-4)},
	{"p0", math.Float32bits(1.9875691500e-4)},
	{"p1", math.Float32bits(1.3981999507e-3)},
	{"p2", math.Float32bits(8.3334519073e-3)},
	{"p3", math.Float32bits(4.1665795894e-2)},
	{"p4", math.Float32bits(1.6666665459e-1)},
	{"p5", math.Float32bits(5.0000001201e-1)},
	{"one", math.Float32bits(1)},
	{"bias", 127},
	{"sign", 1 << 31},
	{"ninf", math.Float32bits(float32(math.Inf(-1)))},
}

// float64 constants, each replicated over a vector (exp<tag>d<>).
var consts64 = []struct {
	name string
	v    uint64
}{
	{"gk", math.Float64bits(0.044715)},
	{"gc2", math.Float64bits(2 * 0.7978845608028654)},
	{"sign", 1 << 63},
}

// width is all that differs between the AVX2 and AVX-512 version of a
// kernel: register names, lane count, a few mnemonics, and lane masks
// (AVX2 has no mask registers: a compare writes all-ones lanes into a
// vector that a blend or AND then reads).
type width struct {
	name       string // function name suffix
	tag        string // infix of labels and constant tables
	full, half byte   // register prefix of a vector and of its low half
	lanes      int    // float32 lanes
	round      string // round to nearest even with imm 0
	// AVX-512F has bitwise ops on Z registers only in integer form.
	or32, or64, xor string
	cvtpd2ps        string // VCVTPD2PSY: the Go assembler wants the source width
	extract, insert string // the high half of a vector
	kmask           bool   // compares write K registers
}

var (
	avx2 = width{
		name: "AVX2", full: 'Y', half: 'X', lanes: 8,
		round: "VROUNDPS", or32: "VORPS", or64: "VORPD", xor: "VXORPS",
		cvtpd2ps: "VCVTPD2PSY", extract: "VEXTRACTF128", insert: "VINSERTF128",
	}
	avx512 = width{
		name: "AVX512", tag: "5", full: 'Z', half: 'Y', lanes: 16,
		round: "VRNDSCALEPS", or32: "VPORD", or64: "VPORQ", xor: "VPXORD",
		cvtpd2ps: "VCVTPD2PS", extract: "VEXTRACTF64X4", insert: "VINSERTF64X4",
		kmask: true,
	}
)

func (w width) bytes() int { return 4 * w.lanes }

// log2 is the SHRQ count that turns n into loop iterations of one vector.
func (w width) log2() int { return bits.TrailingZeros(uint(w.lanes)) }

var vreg = regexp.MustCompile(`\b[VH]\d+\b`)

// p emits one instruction; in its operands Vn names vector register n of
// the width and Hn the low half of it, so a kernel reads as assembly.
func (w width) p(format string, args ...any) {
	ins := fmt.Sprintf(format, args...)
	if op, operands, ok := strings.Cut(ins, " "); ok {
		ins = op + " " + vreg.ReplaceAllStringFunc(operands, func(r string) string {
			if r[0] == 'V' {
				return string(w.full) + r[1:]
			}
			return string(w.half) + r[1:]
		})
	}
	fmt.Fprintf(&out, "\t%s\n", ins)
}

// c and d address the vector of the float32 and float64 constant name.
func (w width) c(name string) string {
	for i, k := range consts {
		if k.name == name {
			return fmt.Sprintf("exp%sc<>+%d(SB)", w.tag, w.bytes()*i)
		}
	}
	panic(name)
}

func (w width) d(name string) string {
	for i, k := range consts64 {
		if k.name == name {
			return fmt.Sprintf("exp%sd<>+%d(SB)", w.tag, w.bytes()*i)
		}
	}
	panic(name)
}

// tables emits the constants replicated over the width's vectors.
func (w width) tables() {
	for i, k := range consts {
		for l := range w.lanes {
			fmt.Fprintf(&out, "DATA exp%sc<>+%d(SB)/4, $0x%08x\n", w.tag, w.bytes()*i+4*l, k.v)
		}
	}
	fmt.Fprintf(&out, "GLOBL exp%sc<>(SB), RODATA|NOPTR, $%d\n", w.tag, w.bytes()*len(consts))
	for i, k := range consts64 {
		for l := range w.lanes / 2 {
			fmt.Fprintf(&out, "DATA exp%sd<>+%d(SB)/8, $0x%016x\n", w.tag, w.bytes()*i+8*l, k.v)
		}
	}
	fmt.Fprintf(&out, "GLOBL exp%sd<>(SB), RODATA|NOPTR, $%d\n", w.tag, w.bytes()*len(consts64))
}

// mask names where a compare's lanes go: mask register Kk, or vector Vv
// on AVX2.
func (w width) mask(v, k int) string {
	if w.kmask {
		return fmt.Sprintf("K%d", k)
	}
	return fmt.Sprintf("V%d", v)
}

// blend sets dst to src in the lanes set in m.
func (w width) blend(m, src, dst string) {
	if w.kmask {
		w.p("VMOVAPS %s, %s, %s", src, m, dst)
		return
	}
	w.p("VBLENDVPS %s, %s, %s, %s", m, src, dst, dst)
}

// zeroWhereEq zeroes dst in the lanes where x equals the vector at mem,
// using mask m.
func (w width) zeroWhereEq(x, mem, dst, m string) {
	if w.kmask { // keep where x != mem (or NaN)
		w.p("VCMPPS $4, %s, %s, %s", mem, x, m)
		w.p("VMOVAPS.Z %s, %s, %s", dst, m, dst)
		return
	}
	w.p("VCMPPS $0, %s, %s, %s", mem, x, m)
	w.p("VANDNPS %s, %s, %s", dst, m, dst)
}

func header(name, args string, multiple, frame int) {
	fmt.Fprintf(&out, "\n// func %s(%s)\n// n is a multiple of %d.\nTEXT ·%s(SB), NOSPLIT, $0-%d\n",
		name, args, multiple, name, frame)
}

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

func main() {
	file := flag.String("o", "exp_amd64.s", "output file")
	flag.Parse()
	out.WriteString("// Code generated by asmgen.go; DO NOT EDIT.\n\n#include \"textflag.h\"\n\n")
	avx2.tables()
	avx512.tables()
	exp(avx2)
	for _, w := range []width{avx2, avx512} {
		for _, k := range []string{"sigmoid", "silu", "gelu"} {
			logistic(w, k)
		}
		expShift(w)
		if w == avx512 { // no AVX2 callers
			normOut(w, "normOut", true)
			normOut(w, "scaleOut", false)
			maxLanes(w)
		}
		div(w)
	}
	relu(avx2)
	relu(avx512)
	for _, w := range []width{avx2, avx512} {
		hard(w, false)
		hard(w, true)
		clip(w)
	}
	if err := os.WriteFile(*file, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// expBody emits exp1 on the lanes of V0 into V4, using V0-V6 as scratch
// and the clamps in V14 (hi) and V15 (lo), or loaded into V5 and V6
// first when clampsLoaded is false (the callers that need V14, V15).
func expBody(w width, clampsLoaded bool) {
	hi, lo := "V14", "V15"
	if !clampsLoaded {
		hi, lo = "V5", "V6"
		w.p("VMOVUPS %s, V5", w.c("hi"))
		w.p("VMOVUPS %s, V6", w.c("lo"))
	}
	w.p("VMINPS V0, %s, V0", hi) // min(hi, x): a NaN x is returned as is
	w.p("VMAXPS V0, %s, V0", lo)
	w.p("VMULPS %s, V0, V1", w.c("log2e"))
	w.p("%s $0, V1, V1", w.round) // t = round to nearest even
	w.p("VMULPS %s, V1, V2", w.c("c1"))
	w.p("VSUBPS V2, V0, V0")
	w.p("VMULPS %s, V1, V2", w.c("c2"))
	w.p("VSUBPS V2, V0, V0") // r
	w.p("VMULPS V0, V0, V3") // z = r²
	w.p("VMOVUPS %s, V4", w.c("p0"))
	for _, k := range []string{"p1", "p2", "p3", "p4", "p5"} {
		w.p("VMULPS V0, V4, V4")
		w.p("VADDPS %s, V4, V4", w.c(k))
	}
	w.p("VMULPS V3, V4, V4")
	w.p("VADDPS V0, V4, V4")
	w.p("VADDPS %s, V4, V4", w.c("one"))
	w.p("VCVTPS2DQ V1, V5")  // n
	w.p("VPSRAD $1, V5, V6") // n1 = n>>1
	w.p("VPSUBD V6, V5, V5") // n2 = n-n1
	w.p("VPADDD %s, V6, V6", w.c("bias"))
	w.p("VPADDD %s, V5, V5", w.c("bias"))
	w.p("VPSLLD $23, V6, V6") // 2^n1
	w.p("VPSLLD $23, V5, V5") // 2^n2
	w.p("VMULPS V6, V4, V4")
	w.p("VMULPS V5, V4, V4")
}

// exp emits func exp<width>(dst, src *float32, n int): exp1 over n, a
// multiple of the lane count.
func exp(w width) {
	header("exp"+w.name, "dst, src *float32, n int", w.lanes, 24)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("VMOVUPS %s, V14", w.c("hi"))
	w.p("VMOVUPS %s, V15", w.c("lo"))
	w.p("SHRQ $%d, CX", w.log2())
	w.p("JEQ done%s", w.tag)
	label("loop" + w.tag)
	w.p("VMOVUPS (SI), V0")
	expBody(w, true)
	w.p("VMOVUPS V4, (DI)")
	w.p("ADDQ $%d, SI", w.bytes())
	w.p("ADDQ $%d, DI", w.bytes())
	w.p("DECQ CX")
	w.p("JNE loop%s", w.tag)
	label("done" + w.tag)
	w.p("VZEROUPPER")
	w.p("RET")
}

// split emits, for x in V7, a(x) formed in float64 (by form, from the
// doubles of one half of x in V9 into V10) and split into float32
// h = float32(a) in V0 and lo = float32(a - h) in V8, lo = 0 where h is
// -Inf. Scratch: V9-V13 (and K2 on AVX-512).
func split(w width, form func()) {
	half := func() {
		form()
		w.p("%s V10, H11", w.cvtpd2ps) // h
		w.p("VCVTPS2PD H11, V9")
		w.p("VSUBPD V9, V10, V9")
		w.p("%s V9, H9", w.cvtpd2ps) // lo
	}
	w.p("VCVTPS2PD H7, V9")
	half()
	w.p("VMOVAPS H11, H12") // only the low half is read by the insert
	w.p("VMOVAPS H9, H13")
	w.p("%s $1, V7, H9", w.extract)
	w.p("VCVTPS2PD H9, V9")
	half()
	w.p("%s $1, H11, V12, V0", w.insert)
	w.p("%s $1, H9, V13, V8", w.insert)
	w.zeroWhereEq("V0", w.c("ninf"), "V8", w.mask(9, 2))
}

// logistic emits func <kind><width>(dst, src *float32, n int), n a
// multiple of the lane count, performing exactly the float32 (and, for
// gelu, float64) operations of sigmoid1, silu1 and gelu1 in funcs.go:
// e = e^-|u| (for gelu e^h·(1+lo), u split in two), then sel/(1+e)
// (sigmoid) or x·sel/(1+e), sel = e where x < 0, else 1.
func logistic(w width, kind string) {
	name := kind + w.name
	header(name, "dst, src *float32, n int", w.lanes, 24)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("SHRQ $%d, CX", w.log2())
	w.p("JEQ %s%s_done", kind, w.tag)
	label(kind + w.tag + "_loop")
	w.p("VMOVUPS (SI), V7")
	if kind == "gelu" {
		split(w, func() { // a = -|c2·(f + ((k·f)·f)·f)|
			w.p("VMULPD %s, V9, V10", w.d("gk"))
			w.p("VMULPD V9, V10, V10")
			w.p("VMULPD V9, V10, V10")
			w.p("VADDPD V9, V10, V10")
			w.p("VMULPD %s, V10, V10", w.d("gc2"))
			w.p("%s %s, V10, V10", w.or64, w.d("sign"))
		})
	} else {
		w.p("%s %s, V7, V0", w.or32, w.c("sign")) // -|x|
	}
	expBody(w, false)
	if kind == "gelu" { // e += e·lo
		w.p("VMULPS V8, V4, V9")
		w.p("VADDPS V9, V4, V4")
	}
	w.p("VADDPS %s, V4, V10", w.c("one")) // 1 + e
	w.p("%s V13, V13, V13", w.xor)
	m := w.mask(11, 3)
	w.p("VCMPPS $1, V13, V7, %s", m) // x < 0
	w.p("VMOVUPS %s, V12", w.c("one"))
	w.blend(m, "V4", "V12") // sel
	if kind != "sigmoid" {
		w.p("VMULPS V7, V12, V12")
	}
	w.p("VDIVPS V10, V12, V12")
	w.p("VMOVUPS V12, (DI)")
	w.p("ADDQ $%d, SI", w.bytes())
	w.p("ADDQ $%d, DI", w.bytes())
	w.p("DECQ CX")
	w.p("JNE %s%s_loop", kind, w.tag)
	label(kind + w.tag + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}

// expShift emits func expShift<width>(dst, src *float32, n int, shift
// float64, lanes *[8]float64), n a multiple of the lane count: softmax1's
// dst[i] = e^(src[i]-shift) with the difference formed in float64 and
// split in two, and lanes[i%8] += float64(dst[i]) in index order, so the
// sums are the same on every width.
func expShift(w width) {
	header("expShift"+w.name, "dst, src *float32, n int, shift float64, lanes *[8]float64", w.lanes, 40)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("MOVQ lanes+32(FP), DX")
	// The 8 float64 sums fill V14 on AVX-512, V14 and V15 on AVX2.
	sums := 16 / w.lanes
	for i := range sums {
		w.p("VMOVUPD %s, V%d", mem(w.bytes()*i, "DX"), 14+i)
	}
	form := func() { w.p("VSUBPD V15, V9, V10") }
	if sums == 1 {
		w.p("VBROADCASTSD shift+24(FP), V15")
	} else { // no register is left to hold shift
		form = func() {
			w.p("VBROADCASTSD shift+24(FP), V10")
			w.p("VSUBPD V10, V9, V10")
		}
	}
	w.p("SHRQ $%d, CX", w.log2())
	w.p("JEQ shift%s_done", w.tag)
	label("shift" + w.tag + "_loop")
	w.p("VMOVUPS (SI), V7")
	split(w, form)
	expBody(w, false)
	w.p("VMULPS V8, V4, V9")
	w.p("VADDPS V9, V4, V4")
	w.p("VMOVUPS V4, (DI)")
	w.p("VCVTPS2PD H4, V9")
	w.p("VADDPD V9, V14, V14")
	w.p("%s $1, V4, H10", w.extract)
	w.p("VCVTPS2PD H10, V10")
	w.p("VADDPD V10, V%d, V%d", 13+sums, 13+sums) // the high half's sums
	w.p("ADDQ $%d, SI", w.bytes())
	w.p("ADDQ $%d, DI", w.bytes())
	w.p("DECQ CX")
	w.p("JNE shift%s_loop", w.tag)
	label("shift" + w.tag + "_done")
	for i := range sums {
		w.p("VMOVUPD V%d, %s", 14+i, mem(w.bytes()*i, "DX"))
	}
	w.p("VZEROUPPER")
	w.p("RET")
}

// mem is the operand off(reg).
func mem(off int, reg string) string {
	if off == 0 {
		return "(" + reg + ")"
	}
	return fmt.Sprintf("%d(%s)", off, reg)
}

// div emits func div<width>(x *float32, n int, s float32): x[i] /= s, n
// a multiple of the lane count (IEEE division: the same bits as Go's).
func div(w width) {
	header("div"+w.name, "x *float32, n int, s float32", w.lanes, 20)
	w.p("MOVQ x+0(FP), DI")
	w.p("MOVQ n+8(FP), CX")
	w.p("VBROADCASTSS s+16(FP), V1")
	w.p("SHRQ $%d, CX", w.log2())
	w.p("JEQ div%s_done", w.tag)
	label("div" + w.tag + "_loop")
	w.p("VMOVUPS (DI), V0")
	w.p("VDIVPS V1, V0, V0")
	w.p("VMOVUPS V0, (DI)")
	w.p("ADDQ $%d, DI", w.bytes())
	w.p("DECQ CX")
	w.p("JNE div%s_loop", w.tag)
	label("div" + w.tag + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}

// relu emits func relu<width>(dst, src *float32, n int), n a multiple of
// 4 vectors: dst[i] = 0 where src[i] < 0, else src[i] (NaN and -0 pass
// through): MAXPS with 0 as the first source returns the second unless
// 0 > x.
func relu(w width) {
	name := "relu" + w.name
	header(name, "dst, src *float32, n int", 4*w.lanes, 24)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("%s V4, V4, V4", w.xor)
	w.p("SHRQ $%d, CX", w.log2()+2)
	w.p("JEQ %s_done", name)
	label(name + "_loop")
	for i := range 4 {
		w.p("VMOVUPS %d(SI), V%d", w.bytes()*i, i)
	}
	for i := range 4 {
		w.p("VMAXPS V%d, V4, V%d", i, i)
	}
	for i := range 4 {
		w.p("VMOVUPS V%d, %d(DI)", i, w.bytes()*i)
	}
	w.p("ADDQ $%d, SI", 4*w.bytes())
	w.p("ADDQ $%d, DI", 4*w.bytes())
	w.p("DECQ CX")
	w.p("JNE %s_loop", name)
	label(name + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}

// normOut emits func <base><width>(dst, src, gamma, beta *float32, n
// int, mean, inv float64), n a multiple of half the lane count: norm's
// output loop in float64 lanes,
// dst[j] = float32(((float64(src[j])-mean)·inv)·float64(gamma[j])
// (+ float64(beta[j]) when withBeta)), each operation rounded on its own
// as in the Go loop.
func normOut(w width, base string, withBeta bool) {
	name := base + w.name
	header(name, "dst, src, gamma, beta *float32, n int, mean, inv float64", w.lanes/2, 56)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ gamma+16(FP), R8")
	w.p("MOVQ beta+24(FP), R9")
	w.p("MOVQ n+32(FP), CX")
	w.p("VBROADCASTSD mean+40(FP), V6")
	w.p("VBROADCASTSD inv+48(FP), V7")
	w.p("SHRQ $%d, CX", w.log2()-1)
	w.p("JEQ %s_done", name)
	label(name + "_loop")
	step := w.bytes() / 2
	w.p("VCVTPS2PD (SI), V0")
	w.p("VCVTPS2PD (R8), V1")
	w.p("VSUBPD V6, V0, V0")
	w.p("VMULPD V7, V0, V0")
	w.p("VMULPD V1, V0, V0")
	if withBeta {
		w.p("VCVTPS2PD (R9), V2")
		w.p("VADDPD V2, V0, V0")
		w.p("ADDQ $%d, R9", step)
	}
	w.p("%s V0, H0", w.cvtpd2ps)
	w.p("VMOVUPS H0, (DI)")
	w.p("ADDQ $%d, SI", step)
	w.p("ADDQ $%d, R8", step)
	w.p("ADDQ $%d, DI", step)
	w.p("DECQ CX")
	w.p("JNE %s_loop", name)
	label(name + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}

// maxLanes emits func maxLanes<width>(src *float32, n int, lanes
// *[lanes]float32), n a multiple of the lane count: lanes[l] = the
// largest of lanes[l] and src[i] for i%lanes = l, a NaN never taken
// (MAXPS with x first keeps the running value unless x > it, as
// Softmax's Go loop does).
func maxLanes(w width) {
	header("maxLanes"+w.name, fmt.Sprintf("src *float32, n int, lanes *[%d]float32", w.lanes), w.lanes, 24)
	w.p("MOVQ src+0(FP), SI")
	w.p("MOVQ n+8(FP), CX")
	w.p("MOVQ lanes+16(FP), DX")
	w.p("VMOVUPS (DX), V0")
	w.p("SHRQ $%d, CX", w.log2())
	w.p("JEQ max%s_done", w.tag)
	label("max" + w.tag + "_loop")
	w.p("VMOVUPS (SI), V1")
	w.p("VMAXPS V0, V1, V0") // x > acc ? x : acc
	w.p("ADDQ $%d, SI", w.bytes())
	w.p("DECQ CX")
	w.p("JNE max%s_loop", w.tag)
	label("max" + w.tag + "_done")
	w.p("VMOVUPS V0, (DX)")
	w.p("VZEROUPPER")
	w.p("RET")
}

// hard emits func hardSigmoid<width>(dst, src *float32, n int, alpha,
// beta float32), n a multiple of 2 vectors: hardSigmoid1's float32
// operations, h = alpha·x + beta (no FMA), MAXPS with 0 as the first
// source (0 only where 0 > h, so NaN and -0 pass), MINPS with 1 first (1
// only where 1 < h); times x for hardSwish<width>.
func hard(w width, swish bool) {
	name := "hardSigmoid" + w.name
	if swish {
		name = "hardSwish" + w.name
	}
	header(name, "dst, src *float32, n int, alpha, beta float32", 2*w.lanes, 32)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("VBROADCASTSS alpha+24(FP), V6")
	w.p("VBROADCASTSS beta+28(FP), V7")
	w.p("%s V4, V4, V4", w.xor)
	w.p("VMOVUPS %s, V5", w.c("one"))
	w.p("SHRQ $%d, CX", w.log2()+1)
	w.p("JEQ %s_done", name)
	label(name + "_loop")
	for i := range 2 {
		w.p("VMOVUPS %d(SI), V%d", w.bytes()*i, i)
	}
	for i := range 2 {
		w.p("VMULPS V6, V%d, V%d", i, i+2)
		w.p("VADDPS V7, V%d, V%d", i+2, i+2)
		w.p("VMAXPS V%d, V4, V%d", i+2, i+2)
		w.p("VMINPS V%d, V5, V%d", i+2, i+2)
		if swish {
			w.p("VMULPS V%d, V%d, V%d", i, i+2, i+2)
		}
	}
	for i := range 2 {
		w.p("VMOVUPS V%d, %d(DI)", i+2, w.bytes()*i)
	}
	w.p("ADDQ $%d, SI", 2*w.bytes())
	w.p("ADDQ $%d, DI", 2*w.bytes())
	w.p("DECQ CX")
	w.p("JNE %s_loop", name)
	label(name + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}

// clip emits func clip<width>(dst, src *float32, n int, lo, hi float32),
// n a multiple of 4 vectors: clip1 lane by lane, MAXPS with lo first (lo
// only where lo > x) then MINPS with hi first (hi only where hi < x), so
// NaN passes.
func clip(w width) {
	name := "clip" + w.name
	header(name, "dst, src *float32, n int, lo, hi float32", 4*w.lanes, 32)
	w.p("MOVQ dst+0(FP), DI")
	w.p("MOVQ src+8(FP), SI")
	w.p("MOVQ n+16(FP), CX")
	w.p("VBROADCASTSS lo+24(FP), V4")
	w.p("VBROADCASTSS hi+28(FP), V5")
	w.p("SHRQ $%d, CX", w.log2()+2)
	w.p("JEQ %s_done", name)
	label(name + "_loop")
	for i := range 4 {
		w.p("VMOVUPS %d(SI), V%d", w.bytes()*i, i)
	}
	for i := range 4 {
		w.p("VMAXPS V%d, V4, V%d", i, i)
		w.p("VMINPS V%d, V5, V%d", i, i)
	}
	for i := range 4 {
		w.p("VMOVUPS V%d, %d(DI)", i, w.bytes()*i)
	}
	w.p("ADDQ $%d, SI", 4*w.bytes())
	w.p("ADDQ $%d, DI", 4*w.bytes())
	w.p("DECQ CX")
	w.p("JNE %s_loop", name)
	label(name + "_done")
	w.p("VZEROUPPER")
	w.p("RET")
}
