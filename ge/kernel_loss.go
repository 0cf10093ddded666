package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
)

// OpNLLLoss is ONNX's NegativeLogLikelihoodLoss: input [N, C, d...] holds
// log-probabilities, target [N, d...] (int32 or int64) a class per
// element, optional weight [C] a weight per class. Per element the loss is
// -input[n, target, d...]·weight[target]; an element whose target equals
// AttrIgnoreIndex (when set) contributes 0 and no weight. AttrReduction
// "none" returns the [N, d...] losses, "sum" their sum and "mean" (the
// default) their sum divided by the sum of the weights taken (ONNX: 0/0 is
// NaN when every element is ignored). A target outside [0, C) that is not
// ignored is a kernel error. Accumulation is in float64.
// SoftmaxCrossEntropyLoss is LogSoftmax on axis 1 followed by this op.
const OpNLLLoss OpType = 510

// AttrIgnoreIndex is NLLLoss's target value to skip (int; absent: none).
// Its AttrReduction (shared with HcclAllReduce) is "none", "sum" or
// "mean".
const AttrIgnoreIndex = "ignore_index"

func init() {
	registerOp(OpNLLLoss, &opSpec{name: "NLLLoss", minIn: 2, maxIn: 3,
		attrs: map[string]AttrKind{AttrReduction: AttrString, AttrIgnoreIndex: AttrInt},
		infer: inferNLLLoss, kernel: nllLossKernel})
}

// NLLLoss applies OpNLLLoss; weight may be nil, ignore nil means no
// ignored class.
func (g *Graph) NLLLoss(input, target, weight *Tensor, reduction string, ignore *int64, opts ...OpOption) *Tensor {
	a := Attrs{AttrReduction: StringAttr(reduction)}
	if ignore != nil {
		a[AttrIgnoreIndex] = IntAttr(*ignore)
	}
	in := []*Tensor{input, target}
	if weight != nil {
		in = append(in, weight)
	}
	return g.single(OpNLLLoss, in, a, opts)
}

// lossFloat reports whether a loss takes values of type t.
func lossFloat(t acl.DataType) bool { return isFloat(t) || t == acl.Float64 }

func inferNLLLoss(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, tg := in[0], in[1]
	if !lossFloat(x.DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float type", x.DataType)}
	}
	if tg.DataType != acl.Int32 && tg.DataType != acl.Int64 {
		return nil, &dtypeError{fmt.Sprintf("target has data type %s, want int32 or int64", tg.DataType)}
	}
	if len(x.Dims) < 2 {
		return nil, fmt.Errorf("input %s must be [N, C, d...]", dimsString(x.Dims))
	}
	want := append([]int64{x.Dims[0]}, x.Dims[2:]...)
	if !dimsEqual(tg.Dims, want) {
		return nil, fmt.Errorf("target is %s, want %s for input %s", dimsString(tg.Dims), dimsString(want), dimsString(x.Dims))
	}
	if len(in) == 3 {
		if in[2].DataType != x.DataType {
			return nil, &dtypeError{fmt.Sprintf("weight has data type %s, input has %s", in[2].DataType, x.DataType)}
		}
		if !dimsEqual(in[2].Dims, x.Dims[1:2]) {
			return nil, fmt.Errorf("weight is %s, want [%d]", dimsString(in[2].Dims), x.Dims[1])
		}
	}
	switch r := a.String(AttrReduction); r {
	case "none":
		return []TensorDesc{{DataType: x.DataType, Format: acl.FormatND, Dims: want}}, nil
	case "", "mean", "sum":
		return []TensorDesc{{DataType: x.DataType, Format: acl.FormatND, Dims: []int64{}}}, nil
	default:
		return nil, fmt.Errorf("reduction %q is not none, sum or mean", r)
	}
}

func nllLossKernel(t *Task, args [][]byte) error {
	x, tg := t.Inputs[0], t.Inputs[1]
	n, c := int(x.Dims[0]), int(x.Dims[1])
	inner := prod(x.Dims[2:])
	xv := make([]float64, prod(x.Dims))
	readF64(xv, x.DataType, args[0])
	tv := make([]int64, n*inner)
	readInts(tv, tg.DataType, args[1])
	w := make([]float64, c)
	for i := range w {
		w[i] = 1
	}
	outArg := 2
	if len(t.Inputs) == 3 {
		readF64(w, x.DataType, args[2])
		outArg = 3
	}
	ignore, hasIgnore := t.Attrs[AttrIgnoreIndex]
	loss := make([]float64, n*inner)
	var sum, wsum float64
	for b := range n {
		for j := range inner {
			k := b*inner + j
			cls := tv[k]
			if hasIgnore && cls == ignore.I {
				continue
			}
			if cls < 0 || cls >= int64(c) {
				return kernelError(t, "target %d at element %d is out of range [0, %d)", cls, k, c)
			}
			wt := w[cls]
			loss[k] = -xv[(b*c+int(cls))*inner+j] * wt
			sum += loss[k]
			wsum += wt
		}
	}
	dt := t.Outputs[0].DataType
	switch t.Attrs.String(AttrReduction) {
	case "none":
		writeFromF64(args[outArg], dt, loss)
	case "sum":
		writeFromF64(args[outArg], dt, []float64{sum})
	default:
		v := sum / wsum
		if wsum == 0 {
			v = math.NaN()
		}
		writeFromF64(args[outArg], dt, []float64{v})
	}
	return nil
}
