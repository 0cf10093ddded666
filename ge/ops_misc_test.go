package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

func TestReductionsMisc(t *testing.T) {
	r := newRand(t)
	ops := []ge.OpType{ge.OpReduceL1, ge.OpReduceL2, ge.OpReduceLogSumExp, ge.OpReduceSumSquare,
		ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceMax, ge.OpReduceMin, ge.OpReduceProd}
	cases := []struct {
		axes []int64
		keep bool
	}{{nil, true}, {nil, false}, {[]int64{1}, true}, {[]int64{-1, 0}, false}, {[]int64{2}, false}}
	for _, op := range ops {
		for _, dt := range append(floatTypes, acl.Int32, acl.Int64) {
			for _, c := range cases {
				if (op == ge.OpReduceLogSumExp || op == ge.OpReduceL2) && isIntRef(dt) {
					continue
				}
				if op == ge.OpReduceProd && isIntRef(dt) && c.axes == nil {
					continue // 60 factors overflow int64, where the float64 reference is inexact
				}
				t.Run(fmt.Sprintf("%s/%s/%v/%v", op, dt, c.axes, c.keep), func(t *testing.T) {
					checkOp(t, r, []acl.DataType{dt}, [][]int64{{3, 4, 5}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
						return g.Reduce(op, in[0], c.axes, c.keep)
					}, dt)
				})
			}
		}
	}
	// ReduceLogSum needs positive sums: ReduceLogSum(|x|+1).
	for _, dt := range floatTypes {
		t.Run("ReduceLogSum/"+dt.String(), func(t *testing.T) {
			checkOp(t, r, []acl.DataType{dt}, [][]int64{{4, 6}}, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
				return g.Reduce(ge.OpReduceLogSum, g.Reduce(ge.OpReduceL1, in[0], []int64{0}, true), nil, false)
			}, dt)
		})
	}
}

// TestReduceLogSumExpLarge: the maximum shift keeps large inputs finite.
func TestReduceLogSumExpLarge(t *testing.T) {
	out, err := ge.EvalOp(ge.OpReduceLogSumExp, ge.Attrs{ge.AttrKeepDims: ge.BoolAttr(false)},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: encodeFloats(acl.Float32, []float64{1000, 1000})}})
	require.NoError(t, err)
	require.InDelta(t, 1000+0.6931471805599453, decodeAll(acl.Float32, out[0].Data, 1)[0], 1e-3)
}

func TestReduceBadInput(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Dims: []int64{2}}, Data: []byte{1, 0}}
	_, err := ge.EvalOp(ge.OpReduceL1, nil, []ge.HostTensor{x})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	x = ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 8)}
	_, err = ge.EvalOp(ge.OpReduceL2, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{3})}, []ge.HostTensor{x})
	require.Error(t, err)
}

func TestNLLLoss(t *testing.T) {
	r := newRand(t)
	three := int64(3)
	for _, dt := range floatTypes {
		for _, it := range []acl.DataType{acl.Int32, acl.Int64} {
			for _, red := range []string{"none", "sum", "mean"} {
				for _, weighted := range []bool{false, true} {
					for _, ig := range []*int64{nil, &three} {
						t.Run(fmt.Sprintf("%s/%s/%s/w%v/ii%v", dt, it, red, weighted, ig != nil), func(t *testing.T) {
							dts := []acl.DataType{dt, it}
							dims := [][]int64{{4, 10, 3}, {4, 3}}
							if weighted {
								dts, dims = append(dts, dt), append(dims, []int64{10})
							}
							checkOp(t, r, dts, dims, func(g *ge.Graph, in []*ge.Tensor) *ge.Tensor {
								var w *ge.Tensor
								if weighted {
									w = in[2]
								}
								return g.NLLLoss(in[0], in[1], w, red, ig)
							}, dt)
						})
					}
				}
			}
		}
	}
}

// TestNLLLossFloat64: -x[n, t[n]] summed, in float64.
func TestNLLLossFloat64(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{2, 3}}, Data: f64b(-1, -2, -3, -4, -5, -6)}
	tg := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{2}}, Data: encodeFloats(acl.Int64, []float64{2, 0})}
	out, err := ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("sum")}, []ge.HostTensor{x, tg})
	require.NoError(t, err)
	require.Equal(t, []float64{7}, decodeAll(acl.Float64, out[0].Data, 1))
}

func f64b(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func TestNLLLossBadInput(t *testing.T) {
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2, 3}}, Data: make([]byte, 24)}
	tg := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{2}}, Data: encodeFloats(acl.Int64, []float64{1, 3})}
	_, err := ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("sum")}, []ge.HostTensor{x, tg})
	require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "out of range")
	// The ignored class may be anything.
	_, err = ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrIgnoreIndex: ge.IntAttr(3)}, []ge.HostTensor{x, tg})
	require.NoError(t, err)
	_, err = ge.EvalOp(ge.OpNLLLoss, ge.Attrs{ge.AttrReduction: ge.StringAttr("max")}, []ge.HostTensor{x, tg})
	require.Error(t, err)
	tg.Desc.DataType, tg.Data = acl.Float32, make([]byte, 8)
	_, err = ge.EvalOp(ge.OpNLLLoss, nil, []ge.HostTensor{x, tg})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
}
