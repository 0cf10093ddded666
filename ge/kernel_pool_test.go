package ge_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/ge"
)

// TestPoolFastPathsMatchGeneric: the plane-at-once paths of 2-D pooling
// (windows of 1×2, 2×1, 2×2 tiling the input; global pooling) give what
// the generic 3-D path gives on the same planes, and a float64 reference
// within float32 rounding, with NaN, ±0 and -Inf among the inputs and
// odd sizes whose last row or column no window covers.
func TestPoolFastPathsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 7))
	// 13×11: odd sizes; 9×40: rows of 20 outputs (a vector step and a tail).
	for _, hw := range [][2]int{{13, 11}, {9, 40}} {
		poolFastCase(t, rng, hw[0], hw[1])
	}
}

func poolFastCase(t *testing.T, rng *rand.Rand, h, w int) {
	const n, c = 2, 3
	x := randF32(rng, n*c*h*w)
	// No +Inf: the reference's math.Max(+Inf, NaN) is +Inf, where pooling
	// propagates the NaN.
	special := []float32{float32(math.NaN()), 0, float32(math.Copysign(0, -1)), float32(math.Inf(-1))}
	for i := range 24 {
		x[rng.IntN(len(x))] = special[i%len(special)]
	}
	// x as [n, c, h, w] takes the 2-D paths; as [n, 1, c, h, w] pooled
	// with windows one deep, the same planes take the generic 3-D path.
	for _, k := range [][]int64{{2, 2}, {2, 1}, {1, 2}, {int64(h), int64(w)}} {
		for _, op := range []ge.OpType{ge.OpMaxPool, ge.OpAvgPool} {
			attrs := ge.Attrs{ge.AttrKernelShape: ge.IntsAttr(k), ge.AttrStrides: ge.IntsAttr(k)}
			out2, err := ge.EvalOp(op, attrs, []ge.HostTensor{f32Tensor([]int64{n, c, int64(h), int64(w)}, x)})
			require.NoError(t, err)
			attrs3 := ge.Attrs{ge.AttrKernelShape: ge.IntsAttr([]int64{1, k[0], k[1]}), ge.AttrStrides: ge.IntsAttr([]int64{1, k[0], k[1]})}
			out3, err := ge.EvalOp(op, attrs3, []ge.HostTensor{f32Tensor([]int64{n, c / 3, 3, int64(h), int64(w)}, x)})
			require.NoError(t, err)
			got, gen := f32s(out2[0]), f32s(out3[0])
			require.Len(t, gen, len(got))
			want, _, _ := poolRef(x, n, c, h, w, []int{int(k[0]), int(k[1])}, []int{int(k[0]), int(k[1])}, []int{1, 1}, []int{0, 0, 0, 0}, false, op == ge.OpMaxPool, false)
			for i := range got {
				if op == ge.OpMaxPool && !(gen[i] != gen[i] && got[i] != got[i]) { // any NaN
					require.Equal(t, math.Float32bits(gen[i]), math.Float32bits(got[i]), "%s %v [%d]: %v, generic %v", op, k, i, got[i], gen[i])
				}
				if math.IsNaN(want[i]) || math.IsInf(want[i], 0) {
					require.Equal(t, math.IsNaN(want[i]), math.IsNaN(float64(got[i])), "%s %v [%d]", op, k, i)
					if math.IsInf(want[i], 0) {
						require.Equal(t, want[i], float64(got[i]), "%s %v [%d]", op, k, i)
					}
					continue
				}
				require.InDelta(t, want[i], float64(got[i]), 1e-5*(1+math.Abs(want[i])), "%s %v [%d]", op, k, i)
				if op == ge.OpMaxPool && want[i] == 0 {
					require.Equal(t, math.Signbit(want[i]), math.Signbit(float64(got[i])), "%s %v [%d]: the sign of zero", op, k, i)
				}
			}
		}
	}
}
