package onnx

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

func init() {
	converters["Conv"] = convConv
	converters["ConvTranspose"] = convConvTranspose
	converters["MaxPool"] = convPool(ge.OpMaxPool)
	converters["AveragePool"] = convPool(ge.OpAvgPool)
	converters["GlobalAveragePool"] = convGlobalPool(ge.OpAvgPool)
	converters["GlobalMaxPool"] = convGlobalPool(ge.OpMaxPool)
	converters["BatchNormalization"] = convBatchNorm
	converters["LayerNormalization"] = convLayerNorm
}

// spatialAttrs reads strides, dilations and pads of a window op over the
// spatial dims of x with kernel k, resolving auto_pad (SAME_UPPER puts the
// odd pad at the end, SAME_LOWER at the beginning, VALID pads nothing).
func (c *nodeCtx) spatialAttrs(x []int64, k []int64, withDilation bool) (ge.Attrs, error) {
	sp := len(x) - 2
	if sp < 1 || sp > 3 {
		return nil, c.errf(ErrUnsupportedAttr, "input %v: 1 to 3 spatial dims are supported", x)
	}
	list := func(name string, n int, def int64) ([]int64, error) {
		v, ok := c.intsAttr(name)
		if !ok {
			v = make([]int64, n)
			for i := range v {
				v[i] = def
			}
		}
		if len(v) != n {
			return nil, c.errf(ErrInvalidModel, "%s %v: want %d values", name, v, n)
		}
		return v, nil
	}
	strides, err := list("strides", sp, 1)
	if err != nil {
		return nil, err
	}
	dil := make([]int64, sp)
	for i := range dil {
		dil[i] = 1
	}
	if withDilation || c.has("dilations") {
		if dil, err = list("dilations", sp, 1); err != nil {
			return nil, err
		}
	}
	pads, err := list("pads", 2*sp, 0)
	if err != nil {
		return nil, err
	}
	switch ap := c.strAttr("auto_pad", "NOTSET"); ap {
	case "NOTSET":
	case "VALID":
		clear(pads)
	case "SAME_UPPER", "SAME_LOWER":
		for i := range sp {
			in, s := x[2+i], strides[i]
			eff := (k[i]-1)*dil[i] + 1
			out := (in + s - 1) / s
			total := max(0, (out-1)*s+eff-in)
			lo := total / 2
			if ap == "SAME_LOWER" {
				lo = total - total/2
			}
			pads[i], pads[sp+i] = lo, total-lo
		}
	default:
		return nil, c.errf(ErrUnsupportedAttr, "auto_pad %q", ap)
	}
	return ge.Attrs{ge.AttrStrides: ge.IntsAttr(strides), ge.AttrDilations: ge.IntsAttr(dil), ge.AttrPads: ge.IntsAttr(pads)}, nil
}

// kernelShape checks the optional kernel_shape attribute against the weight.
func (c *nodeCtx) kernelShape(w []int64) error {
	if ks, ok := c.intsAttr("kernel_shape"); ok {
		if len(ks) != len(w)-2 {
			return c.errf(ErrInvalidModel, "kernel_shape %v does not match weight %v", ks, w)
		}
		for i := range ks {
			if ks[i] != w[2+i] {
				return c.errf(ErrInvalidModel, "kernel_shape %v does not match weight %v", ks, w)
			}
		}
	}
	return nil
}

func convConv(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	x, w := c.ins[0].desc.Dims, c.ins[1].desc.Dims
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
	ins := []*value{c.ins[0], c.ins[1]}
	if b := c.in(2); b != nil {
		ins = append(ins, b)
	}
	return one(c.emit(ge.OpConv, a, ins...))
}

// convConvTranspose resolves output_shape and auto_pad into explicit pads
// as the ONNX spec gives them.
func convConvTranspose(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	x, w := c.ins[0].desc.Dims, c.ins[1].desc.Dims
	if len(w) != len(x) || len(x) < 3 {
		return nil, c.errf(ErrInvalidModel, "input %v and weight %v do not form a convolution", x, w)
	}
	if err := c.kernelShape(w); err != nil {
		return nil, err
	}
	sp := len(x) - 2
	autoPad := c.strAttr("auto_pad", "NOTSET")
	delete(c.attrs, "auto_pad")
	a, err := c.spatialAttrs(x, w[2:], true)
	if err != nil {
		return nil, err
	}
	c.read["auto_pad"] = true
	opad, ok := c.intsAttr("output_padding")
	if !ok {
		opad = make([]int64, sp)
	}
	if len(opad) != sp {
		return nil, c.errf(ErrInvalidModel, "output_padding %v: want %d values", opad, sp)
	}
	strides, dil, pads := a.Ints(ge.AttrStrides), a.Ints(ge.AttrDilations), a.Ints(ge.AttrPads)
	outShape, hasOut := c.intsAttr("output_shape")
	if hasOut && len(outShape) == len(x) {
		outShape = outShape[2:]
	}
	if hasOut && len(outShape) != sp {
		return nil, c.errf(ErrInvalidModel, "output_shape %v: want %d values", outShape, sp)
	}
	if hasOut || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" {
		for i := range sp {
			eff := (w[2+i]-1)*dil[i] + 1
			target := x[2+i] * strides[i]
			if hasOut {
				target = outShape[i]
			}
			total := strides[i]*(x[2+i]-1) + opad[i] + eff - target
			if total < 0 {
				// A larger output than the input gives is reached by
				// output padding, as the ONNX reference does.
				opad[i] -= total
				total = 0
			}
			if autoPad == "SAME_UPPER" || (autoPad != "SAME_LOWER" && !hasOut) {
				pads[i], pads[sp+i] = total/2, total-total/2
			} else {
				pads[i], pads[sp+i] = total-total/2, total/2
			}
		}
	} else if autoPad == "VALID" {
		clear(pads)
	} else if autoPad != "NOTSET" {
		return nil, c.errf(ErrUnsupportedAttr, "auto_pad %q", autoPad)
	}
	a[ge.AttrPads] = ge.IntsAttr(pads)
	a[ge.AttrOutputPadding] = ge.IntsAttr(opad)
	a[ge.AttrGroups] = ge.IntAttr(c.intAttr("group", 1))
	ins := []*value{c.ins[0], c.ins[1]}
	if b := c.in(2); b != nil {
		ins = append(ins, b)
	}
	return one(c.emit(ge.OpConvTranspose, a, ins...))
}

func convPool(op ge.OpType) converter {
	return func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		x := c.ins[0].desc.Dims
		k, ok := c.intsAttr("kernel_shape")
		if !ok || len(k) != len(x)-2 {
			return nil, c.errf(ErrInvalidModel, "kernel_shape %v does not fit input %v", k, x)
		}
		a, err := c.spatialAttrs(x, k, op == ge.OpMaxPool)
		if err != nil {
			return nil, err
		}
		a[ge.AttrKernelShape] = ge.IntsAttr(k)
		a[ge.AttrCeilMode] = ge.BoolAttr(c.intAttr("ceil_mode", 0) != 0)
		if op == ge.OpAvgPool {
			a[ge.AttrCountIncludePad] = ge.BoolAttr(c.intAttr("count_include_pad", 0) != 0)
		}
		if op == ge.OpMaxPool {
			// The Indices output (and storage_order, which only affects
			// it) take MaxPoolWithIndices.
			so := c.intAttr("storage_order", 0)
			if outs := c.n.GetOutput(); len(outs) > 1 && outs[1] != "" {
				a[ge.AttrStorageOrder] = ge.IntAttr(so)
				return c.emitN(ge.OpMaxPoolWithIndices, a, c.ins[0])
			}
		}
		return one(c.emit(op, a, c.ins[0]))
	}
}

func convGlobalPool(op ge.OpType) converter {
	return func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		x := c.ins[0].desc.Dims
		if len(x) < 3 || len(x) > 5 {
			return nil, c.errf(ErrUnsupportedAttr, "input %v: 1 to 3 spatial dims are supported", x)
		}
		return one(c.emit(op, ge.Attrs{ge.AttrKernelShape: ge.IntsAttr(x[2:])}, c.ins[0]))
	}
}

func convBatchNorm(c *nodeCtx) ([]*value, error) {
	if err := c.need(5, 5); err != nil {
		return nil, err
	}
	if c.im.opset < 9 && c.intAttr("spatial", 1) != 1 {
		return nil, c.errf(ErrUnsupportedAttr, "spatial=0 (per-activation statistics)")
	}
	if c.intAttr("is_test", 1) == 0 && c.im.opset < 7 {
		return nil, c.errf(ErrUnsupportedAttr, "training mode before opset 7")
	}
	eps := c.floatAttr("epsilon", 1e-5)
	// Opset 15 lets scale/bias (T1) and mean/var (T2) differ from x:
	// mixed types compute in float32, and y rounds once to x's type.
	x := c.ins[0]
	ct := x.desc.DataType
	for _, p := range c.ins[1:] {
		if p.desc.DataType != x.desc.DataType {
			ct = acl.Float32
		}
	}
	var ins []*value
	for _, p := range c.ins {
		if p.desc.DataType != ct {
			var err error
			if p, err = c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(ct))}, p); err != nil {
				return nil, err
			}
		}
		ins = append(ins, p)
	}
	back := func(v *value, dt acl.DataType) (*value, error) {
		if v.desc.DataType == dt {
			return v, nil
		}
		return c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, v)
	}
	if c.intAttr("training_mode", 0) != 0 {
		// Batch statistics; outputs 1 and 2 are the updated running
		// mean and variance, in the type of the given ones.
		outs, err := c.emitN(ge.OpBatchNormTrain, ge.Attrs{ge.AttrEpsilon: ge.FloatAttr(eps), ge.AttrMomentum: ge.FloatAttr(c.floatAttr("momentum", 0.9))}, ins...)
		if err != nil {
			return nil, err
		}
		// y in x's type, the running statistics in mean's and var's.
		for i, dt := range []acl.DataType{x.desc.DataType, c.ins[3].desc.DataType, c.ins[4].desc.DataType} {
			if outs[i], err = back(outs[i], dt); err != nil {
				return nil, err
			}
		}
		return outs, nil
	}
	c.ignore("momentum")
	y, err := c.emit(ge.OpBatchNorm, ge.Attrs{ge.AttrEpsilon: ge.FloatAttr(eps)}, ins...)
	if err != nil {
		return nil, err
	}
	return one(back(y, x.desc.DataType))
}

// convLayerNorm normalises over dims [axis, rank): x is viewed as
// [outer, inner] and scale and bias as [inner], so ge's last-axis
// LayerNorm computes it; a missing bias is zero.
func convLayerNorm(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	stash := c.intAttr("stash_type", 1)
	x := c.ins[0]
	r := len(x.desc.Dims)
	axis, err := c.normAxis(c.intAttr("axis", -1), max(r, 1))
	if err != nil {
		return nil, err
	}
	inner := prod(x.desc.Dims[axis:])
	flat := []int64{prod(x.desc.Dims[:axis]), inner}
	params := make([]*value, 2)
	for i := range 2 {
		p := c.in(1 + i)
		if p == nil {
			if p, err = scalar(x.desc.DataType, []int64{inner}, 0); err != nil {
				return nil, c.wrap(err)
			}
		}
		if prod(p.desc.Dims) != inner {
			if p, err = c.emit(ge.OpExpand, ge.Attrs{ge.AttrShape: ge.IntsAttr(x.desc.Dims[axis:])}, p); err != nil {
				return nil, err
			}
		}
		if params[i], err = c.reshape(p, []int64{inner}); err != nil {
			return nil, err
		}
	}
	xf, err := c.reshape(x, flat)
	if err != nil {
		return nil, err
	}
	eps := c.floatAttr("epsilon", 1e-5)
	y, err := c.emit(ge.OpLayerNorm, ge.Attrs{ge.AttrEpsilon: ge.FloatAttr(eps)}, xf, params[0], params[1])
	if err != nil {
		return nil, err
	}
	if y, err = c.reshape(y, x.desc.Dims); err != nil {
		return nil, err
	}
	outs := []*value{y}
	if len(c.n.GetOutput()) > 1 {
		// The optional Mean and InvStdDev outputs, over dims [axis, rank)
		// kept as 1: mean(x) and 1/√(mean((x-mean)²)+eps), in the stash
		// type (float32 by default; 1 is ONNX's FLOAT).
		st := x
		switch {
		case stash == 1 && x.desc.DataType != acl.Float32:
			if st, err = c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float32))}, x); err != nil {
				return nil, err
			}
		case stash != 1:
			if dt, ok := aclType(int32(stash)); !ok || dt != x.desc.DataType {
				return nil, c.errf(ErrUnsupportedAttr, "stash_type %d for %s input", stash, x.desc.DataType)
			}
		}
		mean, inv, err := c.moments(st, axis, eps)
		if err != nil {
			return nil, err
		}
		outs = append(outs, mean, inv)
	}
	return outs, nil
}

// moments returns the mean and the inverse standard deviation of x over
// dims [axis, rank), keeping them as size-1 dims.
func (c *nodeCtx) moments(x *value, axis int, eps float64) (mean, inv *value, err error) {
	var axes []int64
	for i := axis; i < len(x.desc.Dims); i++ {
		axes = append(axes, int64(i))
	}
	red := ge.Attrs{ge.AttrAxes: ge.IntsAttr(axes), ge.AttrKeepDims: ge.BoolAttr(true)}
	if mean, err = c.emit(ge.OpReduceMean, red, x); err != nil {
		return nil, nil, err
	}
	d, err := c.emit(ge.OpSub, nil, x, mean)
	if err != nil {
		return nil, nil, err
	}
	if d, err = c.emit(ge.OpMul, nil, d, d); err != nil {
		return nil, nil, err
	}
	if d, err = c.emit(ge.OpReduceMean, red, d); err != nil {
		return nil, nil, err
	}
	e, err := scalar(x.desc.DataType, nil, eps)
	if err != nil {
		return nil, nil, c.wrap(err)
	}
	if d, err = c.emit(ge.OpAdd, nil, d, e); err != nil {
		return nil, nil, err
	}
	if d, err = c.emit(ge.OpSqrt, nil, d); err != nil {
		return nil, nil, err
	}
	inv, err = c.emit(ge.OpReciprocal, nil, d)
	return mean, inv, err
}
