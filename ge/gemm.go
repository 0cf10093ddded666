package ge

import (
	"fmt"

	sg "github.com/ascend-go/cann/internal/sgemm"
)

// sgemm is the one entry point for float32 matrix products on plain
// row-major slices (convolutions, recurrent cells): C = alpha·op(A)·op(B)
// + beta·C with leading dimensions lda, ldb, ldc; op(A) is m×k, op(B) k×n.
// It runs on internal/sgemm's packed FMA kernels, deterministic whatever
// GOMAXPROCS is. The kernels validate shapes before calling it, so a
// mismatch here is a bug: it panics, and the task runner reports it.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	err := sg.Gemm(&sg.Call{M: m, N: n, K: k, Alpha: alpha, Beta: beta,
		A: sg.Matrix{F32: a, Stride: lda, Trans: transA},
		B: sg.Matrix{F32: b, Stride: ldb, Trans: transB},
		C: c, LDC: ldc})
	if err != nil {
		panic(fmt.Sprintf("ge: sgemm: %v", err))
	}
}
