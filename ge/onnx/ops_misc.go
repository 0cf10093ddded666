package onnx

import (
	"github.com/ascend-go/cann/ge"
)

// The "misc" family: every reduction, the losses, quantization, random
// number generators and signal ops.

func init() {
	// These registrations supersede the Reduce* entries of ops_math.go
	// (init functions run in file-name order, ops_misc.go after
	// ops_math.go): convReduceOp also covers the reductions whose result
	// on a scalar is not the scalar itself (L1 of -2 is 2).
	for name, op := range map[string]ge.OpType{"ReduceMean": ge.OpReduceMean, "ReduceSum": ge.OpReduceSum,
		"ReduceMax": ge.OpReduceMax, "ReduceMin": ge.OpReduceMin, "ReduceProd": ge.OpReduceProd,
		"ReduceL1": ge.OpReduceL1, "ReduceL2": ge.OpReduceL2, "ReduceLogSum": ge.OpReduceLogSum,
		"ReduceLogSumExp": ge.OpReduceLogSumExp, "ReduceSumSquare": ge.OpReduceSumSquare} {
		converters[name] = convReduceOp(op)
	}
	converters["NegativeLogLikelihoodLoss"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 3); err != nil {
			return nil, err
		}
		return one(c.nllLoss(c.ins[0], c.ins[1], c.in(2)))
	}
	// SoftmaxCrossEntropyLoss is NLLLoss of LogSoftmax over the classes
	// (axis 1); its optional second output is that LogSoftmax.
	converters["SoftmaxCrossEntropyLoss"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 3); err != nil {
			return nil, err
		}
		if len(c.ins[0].desc.Dims) < 2 {
			return nil, c.errf(ErrInvalidModel, "scores %s must be [N, C, d...]", c.ins[0].desc)
		}
		lp, err := c.emit(ge.OpLogSoftmax, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}, c.ins[0])
		if err != nil {
			return nil, err
		}
		loss, err := c.nllLoss(lp, c.ins[1], c.in(2))
		if err != nil {
			return nil, err
		}
		return []*value{loss, lp}, nil
	}
}

// nllLoss emits NLLLoss with the node's reduction and ignore_index.
func (c *nodeCtx) nllLoss(x, target, weight *value) (*value, error) {
	a := ge.Attrs{ge.AttrReduction: ge.StringAttr(c.strAttr("reduction", "mean"))}
	if c.has("ignore_index") {
		a[ge.AttrIgnoreIndex] = ge.IntAttr(c.intAttr("ignore_index", 0))
	}
	ins := []*value{x, target}
	if weight != nil {
		ins = append(ins, weight)
	}
	return c.emit(ge.OpNLLLoss, a, ins...)
}

// convReduceOp: axes are an attribute before opset 13 (ReduceSum) or 18
// (the others) and an optional constant input from then on; an empty axes
// list reduces every axis unless noop_with_empty_axes (opset 13/18 on)
// makes it the identity.
func convReduceOp(op ge.OpType) converter {
	return func(c *nodeCtx) ([]*value, error) {
		inputAxes := c.im.opset >= 18 || (op == ge.OpReduceSum && c.im.opset >= 13)
		var axes []int64
		if inputAxes {
			if err := c.need(1, 2); err != nil {
				return nil, err
			}
			if v := c.in(1); v != nil {
				var err error
				if axes, err = c.constInts(v, "axes"); err != nil {
					return nil, err
				}
			}
		} else {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			axes, _ = c.intsAttr("axes")
		}
		keep := c.intAttr("keepdims", 1) != 0
		noop := c.intAttr("noop_with_empty_axes", 0) != 0
		x := c.ins[0]
		if len(axes) == 0 && noop {
			return one(c.emit(ge.OpIdentity, nil, x))
		}
		a := ge.Attrs{ge.AttrKeepDims: ge.BoolAttr(keep)}
		if len(axes) > 0 {
			a[ge.AttrAxes] = ge.IntsAttr(axes)
		}
		return one(c.emit(op, a, x))
	}
}
