package hcclsim

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// AVX2 kernels (simd_amd64.s) for the common reductions: SUM of every
// integer and float type, PROD of floats (fp16 and bf16 included, widened
// to float32 and rounded once). Each kernel combines any number of sources
// into any number of destinations over whole chunks (kernS); the caller
// finishes the rest. The s forms store non-temporally (32-byte aligned
// destinations), the c forms through the cache (any alignment). IEEE add
// and multiply give the same bits in vector and scalar form, so results do
// not depend on the path taken.

// kernS is a reduction kernel: every one of nd destinations gets the
// reduction of ns sources over n bytes (a multiple of the kernel's chunk:
// 128 bytes for same-type kernels, 64 for the narrow floats).
type kernS func(dsts, srcs *unsafe.Pointer, nd, ns, n int)

// Same-type kernels (VSTREAM).

//go:noescape
func addF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI8s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI8c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI32c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI64c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

// Narrow-float kernels (VNARROW).

//go:noescape
func addBF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulBF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addBF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulBF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF16c(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func copyNT(dst, src unsafe.Pointer, n int)

var hasAVX2 = cpu.X86.HasAVX2

// sameKernels is indexed by element kind (f32, f64, i8, i16, i32, i64),
// then [PROD][cached]; nil where the op has no kernel (integer PROD).
var sameKernels = [6][2][2]kernS{
	{{addF32s, addF32c}, {mulF32s, mulF32c}},
	{{addF64s, addF64c}, {mulF64s, mulF64c}},
	{{addI8s, addI8c}, {}},
	{{addI16s, addI16c}, {}},
	{{addI32s, addI32c}, {}},
	{{addI64s, addI64c}, {}},
}

// vecKernel returns the kernel of op on T that stores non-temporally (nt)
// or through the cache, or nil.
func vecKernel[T number](op redOp, nt bool) kernS {
	if !hasAVX2 || (op != opSum && op != opProd) {
		return nil
	}
	var z T
	kind := -1
	switch any(z).(type) {
	case float32:
		kind = 0
	case float64:
		kind = 1
	case int8, uint8:
		kind = 2
	case int16, uint16:
		kind = 3
	case int32, uint32:
		kind = 4
	case int64, uint64:
		kind = 5
	}
	if kind < 0 {
		return nil
	}
	return sameKernels[kind][b2i(op == opProd)][b2i(!nt)]
}

// narrowKernels is indexed by [float16][PROD][cached].
var narrowKernels = [2][2][2]kernS{
	{{addBF16s, addBF16c}, {mulBF16s, mulBF16c}},
	{{addF16s, addF16c}, {mulF16s, mulF16c}},
}

// narrowKernel returns the kernel of op on bfloat16 or float16 that
// stores non-temporally (nt) or through the cache, or nil. float16 needs
// F16C for its conversions.
func narrowKernel(dt dtype, op redOp, nt bool) kernS {
	if !hasAVX2 || (op != opSum && op != opProd) || (dt != dtBF16 && dt != dtFP16) ||
		(dt == dtFP16 && !cpu.X86.HasF16C) {
		return nil
	}
	return narrowKernels[b2i(dt == dtFP16)][b2i(op == opProd)][b2i(!nt)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// storeNT copies src to dst, bypassing the cache for the whole 32-byte
// lanes when dst is 32-byte aligned; it reports false (copying nothing)
// when it cannot.
func storeNT(dst, src []byte) bool {
	n := len(src) / 32 * 32
	if !hasAVX2 || n == 0 || uintptr(unsafe.Pointer(&dst[0]))%32 != 0 {
		return false
	}
	copyNT(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n)
	copy(dst[n:len(src)], src[n:])
	return true
}

// simd sets a[i] (and b[i] when b is not nil) = op(x[i], y[i]) for a
// prefix of the elements with the cached kernel and returns how many it
// did (0 when no kernel applies).
func simd[T number](r *reducer, op redOp, a, b, x, y []T) int {
	k := vecKernel[T](op, false)
	if k == nil || len(a) == 0 {
		return 0
	}
	var z T
	esz := int(unsafe.Sizeof(z))
	n := len(a) * esz / 128 * 128
	if n == 0 {
		return 0
	}
	ab := unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), n)
	xb := unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), n)
	yb := unsafe.Slice((*byte)(unsafe.Pointer(&y[0])), n)
	if b == nil {
		r.runKernel(k, [][]byte{ab}, [][]byte{xb, yb}, 0, n)
	} else {
		bb := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n)
		r.runKernel(k, [][]byte{ab, bb}, [][]byte{xb, yb}, 0, n)
	}
	return n / esz
}
