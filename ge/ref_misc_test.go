package ge_test

import (
	"math"
	"slices"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Float64 references of the misc family (reductions, losses,
// quantization, signal), written from the ONNX operator definitions.

func init() {
	for _, op := range []ge.OpType{ge.OpReduceL1, ge.OpReduceL2, ge.OpReduceLogSum, ge.OpReduceLogSumExp,
		ge.OpReduceSumSquare, ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceMax, ge.OpReduceMin, ge.OpReduceProd} {
		refOps[op] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
			return refReduce(op, in[0], a.Ints(ge.AttrAxes), out)
		}
	}
}

// refReduce groups the elements of x by their index with the reduced axes
// dropped and applies the reduction to each group.
func refReduce(op ge.OpType, x refVal, axes []int64, out ge.TensorDesc) refVal {
	red := make([]bool, len(x.dims))
	for _, ax := range axes {
		red[normAxisRef(ax, len(x.dims))] = true
	}
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	var kept []int64
	for i, d := range x.dims {
		if !red[i] {
			kept = append(kept, d)
		}
	}
	groups := make([][]float64, numel(kept))
	for i, v := range x.v {
		idx := unravel(i, x.dims)
		var k []int
		for j := range idx {
			if !red[j] {
				k = append(k, idx[j])
			}
		}
		g := ravel(k, kept)
		groups[g] = append(groups[g], v)
	}
	res := make([]float64, len(groups))
	for g, vs := range groups {
		var r float64
		switch op {
		case ge.OpReduceSum, ge.OpReduceMean, ge.OpReduceLogSum:
			for _, v := range vs {
				r += v
			}
		case ge.OpReduceL1:
			for _, v := range vs {
				r += math.Abs(v)
			}
		case ge.OpReduceL2, ge.OpReduceSumSquare:
			for _, v := range vs {
				r += v * v
			}
		case ge.OpReduceLogSumExp:
			for _, v := range vs {
				r += math.Exp(v)
			}
			r = math.Log(r)
		case ge.OpReduceMax:
			r = slices.Max(vs)
		case ge.OpReduceMin:
			r = slices.Min(vs)
		case ge.OpReduceProd:
			r = 1
			for _, v := range vs {
				r *= v
			}
		}
		switch op {
		case ge.OpReduceMean:
			r /= float64(len(vs))
		case ge.OpReduceL2:
			r = math.Sqrt(r)
		case ge.OpReduceLogSum:
			r = math.Log(r)
		}
		if isIntRef(out.DataType) {
			r = wrapInt(out.DataType, math.Trunc(r))
		}
		res[g] = r
	}
	return rounded(out.DataType, out.Dims, res)
}

func isIntRef(dt acl.DataType) bool {
	switch dt {
	case acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64:
		return true
	}
	return false
}

// wrapInt wraps an integral value into dt's range (two's complement), as
// integer arithmetic does on overflow.
func wrapInt(dt acl.DataType, r float64) float64 {
	switch dt {
	case acl.Int32:
		return float64(int32(int64(r)))
	case acl.Int8:
		return float64(int8(int64(r)))
	case acl.Uint8:
		return float64(uint8(int64(r)))
	case acl.Int16:
		return float64(int16(int64(r)))
	}
	return r
}

func init() {
	refOps[ge.OpNLLLoss] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		x, tg := in[0], in[1]
		n, c := int(x.dims[0]), int(x.dims[1])
		inner := numel(x.dims[2:])
		ig, hasIg := a[ge.AttrIgnoreIndex]
		loss := make([]float64, n*inner)
		var sum, wsum float64
		for i := range loss {
			b, j := i/inner, i%inner
			cls := int(tg.v[i])
			if hasIg && int64(cls) == ig.I {
				continue
			}
			w := 1.0
			if len(in) == 3 {
				w = in[2].v[cls]
			}
			loss[i] = -x.v[(b*c+cls)*inner+j] * w
			sum += loss[i]
			wsum += w
		}
		switch a.String(ge.AttrReduction) {
		case "none":
			return rounded(out.DataType, out.Dims, loss)
		case "sum":
			return rounded(out.DataType, out.Dims, []float64{sum})
		}
		return rounded(out.DataType, out.Dims, []float64{sum / wsum})
	}
}
