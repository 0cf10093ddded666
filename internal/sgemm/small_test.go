package sgemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSmallDotsIsGeneric: the four-column and four-row dot products of
// small (row-major A, transposed B: a recurrent step's product; or B one
// contiguous column: a 1×1 convolution of a 1×1 image) give the generic
// loop's bits, NaN and Inf entries included, with strided operands and C.
func TestSmallDotsIsGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for range 300 {
		m, n, k := 1+r.IntN(6), 1+r.IntN(70), 1+r.IntN(40)
		lda, ldb, ldc := k+r.IntN(3), k+r.IntN(3), n+r.IntN(3)
		a, b, c := randSlice(r, m*lda), randSlice(r, n*ldb), randSlice(r, m*ldc)
		for _, s := range [][]float32{a, b, c} {
			if r.IntN(4) == 0 {
				s[r.IntN(len(s))] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
			}
		}
		alpha, beta := float32(r.NormFloat64()), []float32{0, 1, float32(r.NormFloat64())}[r.IntN(3)]
		call := func(out []float32) Call {
			return Call{M: m, N: n, K: k, Alpha: alpha, Beta: beta, A: Matrix{F32: a, Stride: lda},
				B: Matrix{F32: b, Stride: ldb, Trans: true}, C: out, LDC: ldc}
		}
		want, got := slices.Clone(c), slices.Clone(c)
		cw, cg := call(want), call(got)
		if r.IntN(3) == 0 { // a matrix-vector product: B one contiguous column
			n, ldc = 1, 1+r.IntN(3)
			for _, cc := range []*Call{&cw, &cg} {
				cc.N, cc.LDC, cc.B = n, ldc, Matrix{F32: b[:k], Stride: 1}
			}
		}
		smallGeneric(&cw)
		small(&cg)
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(got[j] != got[j] && want[j] != want[j]) {
				t.Fatalf("%dx%dx%d: C[%d] = %v, the generic loop gives %v", m, n, k, j, got[j], want[j])
			}
		}
	}
}
