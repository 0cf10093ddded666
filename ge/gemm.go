package ge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// sgemm is the one entry point every float32 matrix product of the package
// goes through (MatMul, Conv's im2col product, ConvTranspose, the recurrent
// cells): C = alpha·op(A)·op(B) + beta·C with row-major A, B, C of leading
// dimensions lda, ldb, ldc; op(A) is m×k and op(B) is k×n. Keeping one
// entry point lets the kernel underneath be replaced without touching the
// ops.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	aRows, aCols := m, k
	if transA {
		ta, aRows, aCols = blas.Trans, k, m
	}
	bRows, bCols := k, n
	if transB {
		tb, bRows, bCols = blas.Trans, n, k
	}
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: aRows, Cols: aCols, Stride: lda, Data: a},
		blas32.General{Rows: bRows, Cols: bCols, Stride: ldb, Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}
