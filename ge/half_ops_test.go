package ge_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// castTo converts a host tensor to dt with ge's Cast (round to nearest even).
func castTo(t *testing.T, h ge.HostTensor, dt acl.DataType) ge.HostTensor {
	out, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, []ge.HostTensor{h})
	require.NoError(t, err)
	return out[0]
}

func f64s(t *testing.T, h ge.HostTensor) []float64 {
	d := castTo(t, h, acl.Float64)
	v := make([]float64, len(d.Data)/8)
	for i := range v {
		v[i] = math.Float64frombits(leU64(d.Data[8*i:]))
	}
	return v
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestHalfOpsMatchFloat32: every float op added for ONNX computes in
// float32 and rounds once, so on float16/bfloat16 inputs it gives the
// float32 result (on the same, exactly representable, values) rounded to
// the half type — checked within one unit in the last place.
func TestHalfOpsMatchFloat32(t *testing.T) {
	r := newRand(t)
	type input struct {
		dims []int64
		pos  bool // positive values (Log, Sqrt, Pow base, variance)
	}
	cases := []struct {
		name  string
		op    ge.OpType
		attrs ge.Attrs
		ins   []input
	}{
		{"sigmoid", ge.OpSigmoid, nil, []input{{dims: []int64{3, 7}}}},
		{"tanh", ge.OpTanh, nil, []input{{dims: []int64{3, 7}}}},
		{"erf", ge.OpErf, nil, []input{{dims: []int64{3, 7}}}},
		{"exp", ge.OpExp, nil, []input{{dims: []int64{3, 7}}}},
		{"log", ge.OpLog, nil, []input{{dims: []int64{3, 7}, pos: true}}},
		{"sqrt", ge.OpSqrt, nil, []input{{dims: []int64{3, 7}, pos: true}}},
		{"reciprocal", ge.OpReciprocal, nil, []input{{dims: []int64{3, 7}, pos: true}}},
		{"neg", ge.OpNeg, nil, []input{{dims: []int64{3, 7}}}},
		{"abs", ge.OpAbs, nil, []input{{dims: []int64{3, 7}}}},
		{"elu", ge.OpElu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.7)}, []input{{dims: []int64{3, 7}}}},
		{"selu", ge.OpSelu, nil, []input{{dims: []int64{3, 7}}}},
		{"softplus", ge.OpSoftplus, nil, []input{{dims: []int64{3, 7}}}},
		{"leakyrelu", ge.OpLeakyRelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.1)}, []input{{dims: []int64{3, 7}}}},
		{"clip", ge.OpClip, ge.Attrs{ge.AttrMin: ge.FloatAttr(-0.5), ge.AttrMax: ge.FloatAttr(0.5)}, []input{{dims: []int64{3, 7}}}},
		{"pow", ge.OpPow, nil, []input{{dims: []int64{3, 7}, pos: true}, {dims: []int64{7}}}},
		{"max", ge.OpMax, nil, []input{{dims: []int64{3, 7}}, {dims: []int64{3, 1}}}},
		{"min", ge.OpMin, nil, []input{{dims: []int64{3, 7}}, {dims: []int64{7}}}},
		{"prelu", ge.OpPRelu, nil, []input{{dims: []int64{2, 3, 4}}, {dims: []int64{3, 1}}}},
		{"conv", ge.OpConv, ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 0, 1, 2}), ge.AttrStrides: ge.IntsAttr([]int64{2, 1}), ge.AttrGroups: ge.IntAttr(2)},
			[]input{{dims: []int64{2, 4, 6, 5}}, {dims: []int64{6, 2, 3, 2}}, {dims: []int64{6}}}},
		{"convtranspose", ge.OpConvTranspose, ge.Attrs{ge.AttrStrides: ge.IntsAttr([]int64{2, 2}), ge.AttrPads: ge.IntsAttr([]int64{0, 1, 1, 0})},
			[]input{{dims: []int64{1, 3, 4, 4}}, {dims: []int64{3, 2, 3, 3}}}},
		{"maxpool", ge.OpMaxPool, ge.Attrs{ge.AttrKernelShape: ge.IntsAttr([]int64{3, 3}), ge.AttrStrides: ge.IntsAttr([]int64{2, 2}), ge.AttrCeilMode: ge.BoolAttr(true)},
			[]input{{dims: []int64{1, 2, 7, 8}}}},
		{"avgpool", ge.OpAvgPool, ge.Attrs{ge.AttrKernelShape: ge.IntsAttr([]int64{3}), ge.AttrPads: ge.IntsAttr([]int64{1, 1})},
			[]input{{dims: []int64{2, 3, 9}}}},
		{"batchnorm", ge.OpBatchNorm, ge.Attrs{ge.AttrEpsilon: ge.FloatAttr(1e-3)},
			[]input{{dims: []int64{2, 3, 4}}, {dims: []int64{3}}, {dims: []int64{3}}, {dims: []int64{3}}, {dims: []int64{3}, pos: true}}},
		{"reducemean", ge.OpReduceMean, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{0, -1}), ge.AttrKeepDims: ge.BoolAttr(true)}, []input{{dims: []int64{3, 4, 5}}}},
		{"reducesum", ge.OpReduceSum, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{1})}, []input{{dims: []int64{3, 4, 5}}}},
		{"reducemax", ge.OpReduceMax, nil, []input{{dims: []int64{3, 4, 5}}}},
		{"reducemin", ge.OpReduceMin, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{2})}, []input{{dims: []int64{3, 4, 5}}}},
		{"reduceprod", ge.OpReduceProd, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{0})}, []input{{dims: []int64{3, 4, 5}}}},
		{"logsoftmax", ge.OpLogSoftmax, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}, []input{{dims: []int64{3, 4, 5}}}},
		{"gru", ge.OpGRU, ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4), ge.AttrLinearBeforeReset: ge.BoolAttr(false)},
			[]input{{dims: []int64{3, 2, 5}}, {dims: []int64{1, 12, 5}}, {dims: []int64{1, 12, 4}}, {dims: []int64{1, 24}}, {dims: []int64{1, 2, 4}}}},
		{"lstm", ge.OpLSTM, ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(4)},
			[]input{{dims: []int64{3, 2, 5}}, {dims: []int64{1, 16, 5}}, {dims: []int64{1, 16, 4}}, {dims: []int64{1, 32}}, {dims: []int64{1, 2, 4}}, {dims: []int64{1, 2, 4}}, {dims: []int64{1, 12}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f32 []ge.HostTensor
			for _, in := range tc.ins {
				n := 1
				for _, d := range in.dims {
					n *= int(d)
				}
				v := make([]float64, n)
				for i := range v {
					v[i] = r.NormFloat64()
					if in.pos {
						v[i] = math.Abs(v[i]) + 0.25
					}
				}
				b := make([]byte, 8*n)
				for i, x := range v {
					u := math.Float64bits(x)
					for k := range 8 {
						b[8*i+k] = byte(u >> (8 * k))
					}
				}
				// Values representable in bfloat16 (and so in float16 for
				// this range), so every type sees the same inputs.
				h := castTo(t, castTo(t, ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: in.dims}, Data: b}, acl.BFloat16), acl.Float32)
				f32 = append(f32, h)
			}
			want, err := ge.EvalOp(tc.op, tc.attrs, f32)
			require.NoError(t, err)
			for _, dt := range []acl.DataType{acl.Float16, acl.BFloat16} {
				var ins []ge.HostTensor
				for _, h := range f32 {
					ins = append(ins, castTo(t, h, dt))
				}
				got, err := ge.EvalOp(tc.op, tc.attrs, ins)
				require.NoError(t, err, "%s", dt)
				ulp := math.Ldexp(1, -10)
				if dt == acl.BFloat16 {
					ulp = math.Ldexp(1, -7)
				}
				for o := range want {
					require.Equal(t, want[o].Desc.Dims, got[o].Desc.Dims)
					w, g := f64s(t, castTo(t, want[o], dt)), f64s(t, got[o])
					for i := range w {
						require.InDelta(t, w[i], g[i], ulp*math.Max(math.Abs(w[i]), 1e-2)+1e-6, "%s output %d element %d", dt, o, i)
					}
				}
			}
		})
	}
}

// TestIntArithmetic: Add/Sub/Mul/Div/Max/Min/Pow on int64 are exact, and
// integer division by zero fails the task instead of panicking.
func TestIntArithmetic(t *testing.T) {
	mk := func(v ...int64) ge.HostTensor {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			for k := range 8 {
				b[8*i+k] = byte(uint64(x) >> (8 * k))
			}
		}
		return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{int64(len(v))}}, Data: b}
	}
	a, b := mk(7, -7, 1<<40, 3), mk(2, 2, 3, -1)
	for _, tc := range []struct {
		op   ge.OpType
		want []int64
	}{
		{ge.OpAdd, []int64{9, -5, 1<<40 + 3, 2}}, {ge.OpSub, []int64{5, -9, 1<<40 - 3, 4}},
		{ge.OpMul, []int64{14, -14, 3 << 40, -3}}, {ge.OpDiv, []int64{3, -3, (1 << 40) / 3, -3}},
		{ge.OpMax, []int64{7, 2, 1 << 40, 3}}, {ge.OpMin, []int64{2, -7, 3, -1}}, {ge.OpPow, []int64{49, 49, 0, 0}},
	} {
		out, err := ge.EvalOp(tc.op, nil, []ge.HostTensor{a, b})
		require.NoError(t, err)
		// Pow: (2^40)^3 wraps to 0 in int64, 3^-1 is 0 (truncated).
		require.Equal(t, mk(tc.want...).Data, out[0].Data, "%s", tc.op)
	}
	_, err := ge.EvalOp(ge.OpDiv, nil, []ge.HostTensor{a, mk(1, 0, 1, 1)})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err))
}
