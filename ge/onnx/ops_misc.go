package onnx

import (
	"github.com/ascend-go/cann/acl"
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

func init() {
	converters["QuantizeLinear"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 3); err != nil {
			return nil, err
		}
		zp := c.in(2)
		if zp == nil {
			dt := acl.Uint8
			if c.has("output_dtype") {
				var ok bool
				if dt, ok = aclType(int32(c.intAttr("output_dtype", 0))); !ok {
					return nil, c.errf(ErrUnsupportedDataType, "output_dtype %d", c.intAttr("output_dtype", 0))
				}
			}
			var err error
			if zp, err = c.zero(dt); err != nil {
				return nil, err
			}
		}
		if err := c.quantAttrs(); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpQuantizeLinear, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 1))}, c.ins[0], c.ins[1], zp))
	}
	converters["DequantizeLinear"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 3); err != nil {
			return nil, err
		}
		zp := c.in(2)
		if zp == nil {
			var err error
			if zp, err = c.zero(c.ins[0].desc.DataType); err != nil {
				return nil, err
			}
		}
		if err := c.quantAttrs(); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpDequantizeLinear, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 1))}, c.ins[0], c.ins[1], zp))
	}
	converters["DynamicQuantizeLinear"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return c.emitN(ge.OpDynamicQuantizeLinear, nil, c.ins[0])
	}
	converters["MatMulInteger"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 4); err != nil {
			return nil, err
		}
		ins := []*value{c.ins[0], c.ins[1], c.in(2), c.in(3)}
		for i := 2; i < 4; i++ {
			if ins[i] == nil {
				var err error
				if ins[i], err = c.zero(ins[i-2].desc.DataType); err != nil {
					return nil, err
				}
			}
		}
		return c.matmulLike(ge.OpMatMulInteger, ins, 0, 1)
	}
	converters["QLinearMatMul"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(8, 8); err != nil {
			return nil, err
		}
		return c.matmulLike(ge.OpQLinearMatMul, c.ins, 0, 3)
	}
	converters["ConvInteger"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 4); err != nil {
			return nil, err
		}
		ins := []*value{c.ins[0], c.ins[1], c.in(2), c.in(3)}
		for i := 2; i < 4; i++ {
			if ins[i] == nil {
				var err error
				if ins[i], err = c.zero(ins[i-2].desc.DataType); err != nil {
					return nil, err
				}
			}
		}
		return c.convLike(ge.OpConvInteger, ins, 0, 1)
	}
	converters["QLinearConv"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(8, 9); err != nil {
			return nil, err
		}
		ins := c.ins
		if len(ins) == 9 && ins[8] == nil {
			ins = ins[:8]
		}
		return c.convLike(ge.OpQLinearConv, ins, 0, 3)
	}
}

// quantAttrs reads the attributes of the later opsets of QuantizeLinear
// and DequantizeLinear: saturate (float8 only, so moot here) and
// block_size (blocked quantization is not supported).
func (c *nodeCtx) quantAttrs() error {
	c.ignore("saturate")
	if c.intAttr("block_size", 0) != 0 {
		return c.errf(ErrUnsupportedAttr, "block_size %d (blocked quantization)", c.intAttr("block_size", 0))
	}
	return nil
}

// zero makes a scalar zero of type dt (an absent zero point).
func (c *nodeCtx) zero(dt acl.DataType) (*value, error) {
	v, err := scalar(dt, nil, 0)
	if err != nil {
		return nil, c.wrap(err)
	}
	return v, nil
}

// matmulLike emits an integer matmul whose operands are ins[a] and ins[b],
// with numpy's 1-D operand rules (as convMatMul).
func (c *nodeCtx) matmulLike(op ge.OpType, ins []*value, a, b int) ([]*value, error) {
	ins = append([]*value(nil), ins...)
	ad, bd := ins[a].desc.Dims, ins[b].desc.Dims
	if len(ad) == 0 || len(bd) == 0 {
		return nil, c.errf(ErrInvalidModel, "matmul operands must have rank >= 1")
	}
	var err error
	if len(ad) == 1 {
		if ins[a], err = c.reshape(ins[a], []int64{1, ad[0]}); err != nil {
			return nil, err
		}
	}
	if len(bd) == 1 {
		if ins[b], err = c.reshape(ins[b], []int64{bd[0], 1}); err != nil {
			return nil, err
		}
	}
	y, err := c.emit(op, nil, ins...)
	if err != nil || (len(ad) > 1 && len(bd) > 1) {
		return one(y, err)
	}
	yd := y.desc.Dims
	var out []int64
	switch {
	case len(ad) == 1 && len(bd) == 1:
		out = []int64{}
	case len(ad) == 1:
		out = append(append([]int64{}, yd[:len(yd)-2]...), yd[len(yd)-1])
	default:
		out = append([]int64{}, yd[:len(yd)-1]...)
	}
	return one(c.reshape(y, out))
}

// convLike emits an integer convolution of ins[x] by ins[w] with Conv's
// attributes.
func (c *nodeCtx) convLike(op ge.OpType, ins []*value, xi, wi int) ([]*value, error) {
	x, w := ins[xi].desc.Dims, ins[wi].desc.Dims
	if len(w) != len(x) || len(x) < 3 {
		return nil, c.errf(ErrInvalidModel, "input %v and weight %v do not form a convolution", x, w)
	}
	if err := c.kernelShape(w); err != nil {
		return nil, err
	}
	a, err := c.spatialAttrs(x, w[2:], true)
	if err != nil {
		return nil, err
	}
	a[ge.AttrGroups] = ge.IntAttr(c.intAttr("group", 1))
	return one(c.emit(op, a, ins...))
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
