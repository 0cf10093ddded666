//go:build !amd64

package hcclsim

// simd has no vector kernels on this architecture: the Go loops do all.
func simd[T number](op redOp, a, b, x, y []T) int { return 0 }

// storeNT has no non-temporal path here.
func storeNT(dst, src []byte) bool { return false }

// hasAVX2 is false off amd64.
const hasAVX2 = false
