package ge

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// TestConvTransposeTilesIsCol2im: a transposed convolution whose windows
// tile the output (kernel = stride, ocr_det_db's 2×2 upsampling) written
// by col2tiles gives col2im's bits, grouped or not, with and without a
// bias, -0 and NaN among the inputs; an output padding takes col2im.
func TestConvTransposeTilesIsCol2im(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 31))
	tensor := func(dims []int64, v []float32) HostTensor {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return HostTensor{Desc: TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}, Data: b}
	}
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for _, tc := range []struct {
		c, m, groups, h, w, kh, kw int
		bias, outPad               bool
	}{
		{4, 4, 1, 6, 5, 2, 2, true, false},
		{4, 1, 1, 12, 10, 2, 2, true, false},
		{6, 4, 2, 5, 7, 2, 3, false, false},
		{3, 2, 1, 4, 4, 3, 1, true, false},
		{4, 4, 1, 6, 5, 2, 2, true, true},
	} {
		x := rnd(2 * tc.c * tc.h * tc.w)
		x[0], x[1] = float32(math.Copysign(0, -1)), float32(math.NaN())
		wt := rnd(tc.c * tc.m / tc.groups * tc.kh * tc.kw)
		in := []HostTensor{tensor([]int64{2, int64(tc.c), int64(tc.h), int64(tc.w)}, x),
			tensor([]int64{int64(tc.c), int64(tc.m / tc.groups), int64(tc.kh), int64(tc.kw)}, wt)}
		if tc.bias {
			in = append(in, tensor([]int64{int64(tc.m)}, rnd(tc.m)))
		}
		attrs := Attrs{AttrGroups: IntAttr(int64(tc.groups)), AttrStrides: IntsAttr([]int64{int64(tc.kh), int64(tc.kw)})}
		if tc.outPad {
			attrs[AttrOutputPadding] = IntsAttr([]int64{1, 0})
		}
		var g window
		g.in, g.k, g.s, g.d = [3]int{1, tc.h, tc.w}, [3]int{1, tc.kh, tc.kw}, [3]int{1, tc.kh, tc.kw}, [3]int{1, 1, 1}
		g.out = [3]int{1, tc.h * tc.kh, tc.w * tc.kw}
		if tc.outPad {
			g.out[1]++
		}
		require.Equal(t, !tc.outPad, tilesOutput(&g), "%+v", tc)
		got, err := EvalOp(OpConvTranspose, attrs, in)
		require.NoError(t, err)
		convTiles = false
		want, err := EvalOp(OpConvTranspose, attrs, in)
		convTiles = true
		require.NoError(t, err)
		require.Equal(t, want[0].Desc.Dims, got[0].Desc.Dims)
		require.Equal(t, want[0].Data, got[0].Data, "%+v", tc)
	}
}
