package hcclsim

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// AVX2 kernels (simd_amd64.s) for the common reductions: SUM of every
// integer and float type, PROD of floats, each in a one-output and a
// two-output form. They process whole 32-byte lanes; the caller finishes
// the tail. IEEE add and multiply give the same bits in vector and scalar
// form, so results do not depend on the path taken.

type kern1 func(dst, x, y unsafe.Pointer, n int)
type kern2 func(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addF32x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addF64x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func mulF32x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func mulF64x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addI8x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addI16x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addI32x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addI64x(dst, x, y unsafe.Pointer, n int)

//go:noescape
func addF32x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addF64x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func mulF32x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func mulF64x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addI8x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addI16x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addI32x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func addI64x2(dst, dst2, x, y unsafe.Pointer, n int)

//go:noescape
func copyNT(dst, src unsafe.Pointer, n int)

// kernS is a streaming reduction (simd_amd64.s, VSTREAM): every one of
// nd destinations gets the reduction of ns sources over n bytes.
type kernS func(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func mulF64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI8s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI16s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI32s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

//go:noescape
func addI64s(dsts, srcs *unsafe.Pointer, nd, ns, n int)

// Narrow-float kernels (VNARROW): the same contract as kernS, n a
// multiple of 64; the s forms store with non-temporal stores (32-byte
// aligned destinations), the c forms through the cache (any alignment).

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

// streamKernel returns the streaming kernel of op on T, or nil.
func streamKernel[T number](op redOp) kernS {
	if !hasAVX2 {
		return nil
	}
	var z T
	var sum, prod kernS
	switch any(z).(type) {
	case float32:
		sum, prod = addF32s, mulF32s
	case float64:
		sum, prod = addF64s, mulF64s
	case int8, uint8:
		sum = addI8s
	case int16, uint16:
		sum = addI16s
	case int32, uint32:
		sum = addI32s
	case int64, uint64:
		sum = addI64s
	}
	switch op {
	case opSum:
		return sum
	case opProd:
		return prod
	}
	return nil
}

var hasAVX2 = cpu.X86.HasAVX2

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

// kernels returns the vector kernels of op on T, or nils.
func kernels[T number](op redOp) (kern1, kern2) {
	var z T
	var s1, p1 kern1
	var s2, p2 kern2
	switch any(z).(type) {
	case float32:
		s1, p1, s2, p2 = addF32x, mulF32x, addF32x2, mulF32x2
	case float64:
		s1, p1, s2, p2 = addF64x, mulF64x, addF64x2, mulF64x2
	case int8, uint8:
		s1, s2 = addI8x, addI8x2
	case int16, uint16:
		s1, s2 = addI16x, addI16x2
	case int32, uint32:
		s1, s2 = addI32x, addI32x2
	case int64, uint64:
		s1, s2 = addI64x, addI64x2
	}
	switch op {
	case opSum:
		return s1, s2
	case opProd:
		return p1, p2
	}
	return nil, nil
}

// simd sets a[i] (and b[i] when b is not nil) = op(x[i], y[i]) for a
// prefix of the elements with AVX2 and returns how many it did (0 when no
// kernel applies).
func simd[T number](op redOp, a, b, x, y []T) int {
	if !hasAVX2 || len(a) == 0 {
		return 0
	}
	var z T
	esz := int(unsafe.Sizeof(z))
	n := len(a) * esz / 32 * 32
	if n == 0 {
		return 0
	}
	k1, k2 := kernels[T](op)
	switch {
	case b == nil && k1 != nil:
		k1(unsafe.Pointer(&a[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	case b != nil && k2 != nil:
		k2(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	default:
		return 0
	}
	return n / esz
}
