package sgemm

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A product with B packed ahead is bit-identical to the product with B as
// stored, for every kernel, with B packed for that kernel's panel width
// (read in place) or any other (re-packed element by element), on the
// tiny, short, blocked and threaded paths, every operand kind, transposed
// or not, and with an epilogue.
func TestPackedBIsStoredB(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 5))
	shapes := [][3]int{{3, 5, 7}, {1, 300, 600}, {4, 70, 40}, {150, 70, 300}, {200, 2100, 30}}
	if raceBuild {
		shapes = [][3]int{{3, 5, 7}, {1, 100, 300}, {50, 40, 300}}
	}
	for _, kern := range kernels {
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			p := newProblem(r, Kind(r.IntN(3)), m, n, k, r.IntN(2) == 1, r.IntN(2) == 1, r.IntN(3), 1, float32(r.IntN(2)))
			p.Epi = Epilogue{Bias: randSlice(r, n), Act: ActRelu}
			for _, nr := range []int{kern.nr, 8, 16, 32, 5} {
				packed := make([]float32, PackedSize(k, n, nr))
				require.NoError(t, PackB(packed, p.b.Matrix, k, n, nr))
				for _, th := range []int{1, 3} {
					p.reset()
					run(&p.Call, kern, th)
					want := bits(p.C)
					p.reset()
					c := p.Call
					c.B = Packed(packed, k, n, nr)
					require.NoError(t, c.validate())
					run(&c, kern, th)
					require.Equal(t, want, bits(c.C), "%s %v nr %d threads %d", kern.name, s, nr, th)
				}
			}
		}
	}
}

func TestPackedBRejectsBadShapes(t *testing.T) {
	b := Matrix{F32: make([]float32, 12), Stride: 4}
	require.ErrorIs(t, PackB(make([]float32, 100), b, 3, 4, 0), ErrShape)
	require.ErrorIs(t, PackB(make([]float32, 100), b, 3, 4, 33), ErrShape)
	require.ErrorIs(t, PackB(make([]float32, 100), b, 4, 4, 8), ErrShape) // B holds 3 rows
	require.ErrorIs(t, PackB(make([]float32, 23), b, 3, 4, 8), ErrShape)  // needs 24
	packed := make([]float32, PackedSize(3, 4, 8))
	require.NoError(t, PackB(packed, b, 3, 4, 8))
	require.ErrorIs(t, PackB(packed, Packed(packed, 3, 4, 8), 3, 4, 8), ErrShape)
	call := func(bm Matrix, k, n int) error {
		return Gemm(&Call{M: 2, N: n, K: k, Alpha: 1, A: Matrix{F32: make([]float32, 2*k), Stride: k}, B: bm, C: make([]float32, 2*n), LDC: n})
	}
	require.NoError(t, call(Packed(packed, 3, 4, 8), 3, 4))
	require.ErrorIs(t, call(Packed(packed, 3, 4, 8), 2, 4), ErrShape) // packed for K=3
	require.ErrorIs(t, call(Packed(packed, 3, 4, 8), 3, 9), ErrShape) // padded to 8 columns
	require.ErrorIs(t, call(Packed(packed[:20], 3, 4, 8), 3, 4), ErrShape)
	bad := Packed(packed, 3, 4, 8)
	bad.Trans = true
	require.ErrorIs(t, call(bad, 3, 4), ErrShape)
	require.ErrorIs(t, Gemm(&Call{M: 4, N: 2, K: 3, Alpha: 1, A: Packed(packed, 3, 4, 8), B: Matrix{F32: make([]float32, 6), Stride: 2},
		C: make([]float32, 8), LDC: 2}), ErrShape)
}
