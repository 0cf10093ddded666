package ge_test

import (
	"fmt"
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
