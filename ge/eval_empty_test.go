package ge_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// TestEvalOpEmpty: host evaluation takes empty tensors where a compiled
// model cannot: a slice past the end is empty, an op whose results are all
// empty runs no kernel, Concat drops its empty operands; an op whose
// result is not empty refuses an empty operand; a graph refuses them all.
func TestEvalOpEmpty(t *testing.T) {
	f32 := func(dims []int64, v ...float32) ge.HostTensor {
		return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: dims}, Data: getest.F32Bytes(v)}
	}
	x := f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	out, err := ge.EvalOp(ge.OpStridedSlice, ge.Attrs{ge.AttrStarts: ge.IntsAttr([]int64{0, 5}), ge.AttrEnds: ge.IntsAttr([]int64{2, 9}), ge.AttrSteps: ge.IntsAttr([]int64{1, 1})}, []ge.HostTensor{x})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 0}, out[0].Desc.Dims)
	require.Empty(t, out[0].Data)

	empty := out[0]
	sum, err := ge.EvalOp(ge.OpAdd, nil, []ge.HostTensor{empty, empty})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 0}, sum[0].Desc.Dims)

	cat, err := ge.EvalOp(ge.OpConcat, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}, []ge.HostTensor{empty, x, empty})
	require.NoError(t, err)
	require.Equal(t, x.Desc.Dims, cat[0].Desc.Dims)
	require.Equal(t, x.Data, cat[0].Data)

	_, err = ge.EvalOp(ge.OpReduceSum, ge.Attrs{ge.AttrAxes: ge.IntsAttr([]int64{1})}, []ge.HostTensor{empty})
	require.Error(t, err, "a non-empty result of an empty operand")
	require.ErrorContains(t, err, "empty tensors are not supported")

	g := ge.NewGraph("empty")
	d := g.Data("x", 0, acl.Float32, []int64{2, 0})
	g.Output(g.Relu(d))
	require.ErrorContains(t, g.Err(), "empty tensors are not supported in a model")
}
