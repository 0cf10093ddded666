//go:build !amd64

package hcclsim

import "unsafe"

// simd has no vector kernels on this architecture: the Go loops do all.
func simd[T number](r *reducer, op redOp, a, b, x, y []T) int { return 0 }

// kernS is a streaming reduction kernel; none exist here.
type kernS func(dsts, srcs *unsafe.Pointer, nd, ns, n int)

// vecKernel has no vector kernels here.
func vecKernel[T number](op redOp, nt bool) kernS { return nil }

// narrowKernel has no narrow-float kernels here.
func narrowKernel(dt dtype, op redOp, nt bool) kernS { return nil }

// storeNT has no non-temporal path here.
func storeNT(dst, src []byte) bool { return false }

// hasAVX2 is false off amd64.
const hasAVX2 = false
