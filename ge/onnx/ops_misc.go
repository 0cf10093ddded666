package onnx

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// The "misc" family: every reduction, the losses, quantization, random
// number generators and signal ops.

func init() {
	// Every Reduce*: convReduceOp also covers the reductions whose result
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
		dt := acl.Uint8
		if zp != nil {
			dt = zp.desc.DataType
		}
		if c.has("output_dtype") && c.intAttr("output_dtype", 0) != 0 {
			odt, ok := aclType(int32(c.intAttr("output_dtype", 0)))
			if !ok || (zp != nil && odt != dt) {
				return nil, c.errf(ErrUnsupportedDataType, "output_dtype %d (zero point %s)", c.intAttr("output_dtype", 0), dt)
			}
			dt = odt
		}
		if zp == nil {
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
		ins, err := c.withZeroPoints()
		if err != nil {
			return nil, err
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
		ins, err := c.withZeroPoints()
		if err != nil {
			return nil, err
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

func init() {
	converters["DFT"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 3); err != nil {
			return nil, err
		}
		a := ge.Attrs{ge.AttrInverse: ge.BoolAttr(c.intAttr("inverse", 0) != 0),
			ge.AttrOnesided: ge.BoolAttr(c.intAttr("onesided", 0) != 0)}
		axis := int64(1)
		if c.im.opset >= 20 {
			axis = -2
			if v := c.in(2); v != nil {
				ax, err := c.constInts(v, "axis")
				if err != nil {
					return nil, err
				}
				if len(ax) != 1 {
					return nil, c.errf(ErrInvalidModel, "axis holds %d values", len(ax))
				}
				axis = ax[0]
			}
		} else {
			axis = c.intAttr("axis", 1)
		}
		// A negative axis counts from the back of the whole input, whose
		// last dim is the real/imaginary one (opset 20 defaults to -2).
		a[ge.AttrAxis] = ge.IntAttr(axis)
		if v := c.in(1); v != nil {
			n, err := c.constInts(v, "dft_length")
			if err != nil {
				return nil, err
			}
			if len(n) != 1 || n[0] < 1 {
				return nil, c.errf(ErrInvalidModel, "dft_length %v must be one positive value", n)
			}
			a[ge.AttrLength] = ge.IntAttr(n[0])
		}
		return one(c.emit(ge.OpDFT, a, c.ins[0]))
	}
	converters["STFT"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 4); err != nil {
			return nil, err
		}
		step, err := c.constInts(c.ins[1], "frame_step")
		if err != nil {
			return nil, err
		}
		if len(step) != 1 {
			return nil, c.errf(ErrInvalidModel, "frame_step holds %d values", len(step))
		}
		a := ge.Attrs{ge.AttrFrameStep: ge.IntAttr(step[0]), ge.AttrOnesided: ge.BoolAttr(c.intAttr("onesided", 1) != 0)}
		ins := []*value{c.ins[0]}
		var fl int64
		if w := c.in(2); w != nil {
			if len(w.desc.Dims) != 1 {
				return nil, c.errf(ErrInvalidModel, "window %s must be 1-D", w.desc)
			}
			fl = w.desc.Dims[0]
			ins = append(ins, w)
		}
		if v := c.in(3); v != nil {
			n, err := c.constInts(v, "frame_length")
			if err != nil {
				return nil, err
			}
			if len(n) != 1 || (fl != 0 && n[0] != fl) {
				return nil, c.errf(ErrInvalidModel, "frame_length %v does not match the window (%d)", n, fl)
			}
			fl = n[0]
		}
		if fl == 0 {
			return nil, c.errf(ErrInvalidModel, "STFT needs a window or a frame_length")
		}
		a[ge.AttrFrameLength] = ge.IntAttr(fl)
		return one(c.emit(ge.OpSTFT, a, ins...))
	}
	// The windows depend on their size only: a constant of the model.
	for name, coef := range map[string][]float64{"HannWindow": {0.5, 0.5}, "HammingWindow": {25.0 / 46, 1 - 25.0/46},
		"BlackmanWindow": {0.42, 0.5, 0.08}} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			size, err := c.constInts(c.ins[0], "size")
			if err != nil {
				return nil, err
			}
			if len(size) != 1 || size[0] < 1 || size[0] > maxFoldBytes/8 {
				return nil, c.errf(ErrInvalidModel, "size %v must be one positive value", size)
			}
			n := size[0]
			den := float64(n)
			if c.intAttr("periodic", 1) == 0 {
				den = float64(n - 1)
			}
			w := make([]byte, 8*n)
			for i := range n {
				// a0 - a1·cos(2πi/N) + a2·cos(4πi/N)
				v := coef[0] - coef[1]*math.Cos(2*math.Pi*float64(i)/den)
				if len(coef) == 3 {
					v += coef[2] * math.Cos(4*math.Pi*float64(i)/den)
				}
				if n == 1 {
					v = 1
				}
				binary.LittleEndian.PutUint64(w[8*i:], math.Float64bits(v))
			}
			return c.castTo(konst(acl.Float64, []int64{n}, w), c.intAttr("output_datatype", 1))
		}
	}
	converters["MelWeightMatrix"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(5, 5); err != nil {
			return nil, err
		}
		a := ge.Attrs{}
		for i, k := range []string{ge.AttrNumMelBins, ge.AttrLength, ge.AttrSampleRate} {
			v, err := c.constInts(c.ins[i], k)
			if err != nil {
				return nil, err
			}
			if len(v) != 1 {
				return nil, c.errf(ErrInvalidModel, "%s holds %d values", k, len(v))
			}
			a[k] = ge.IntAttr(v[0])
		}
		dt, ok := aclType(int32(c.intAttr("output_datatype", 1)))
		if !ok {
			return nil, c.errf(ErrUnsupportedDataType, "output_datatype %d", c.intAttr("output_datatype", 1))
		}
		a[ge.AttrDstType] = ge.IntAttr(int64(dt))
		return one(c.emit(ge.OpMelWeightMatrix, a, c.ins[3], c.ins[4]))
	}
}

func init() {
	for name, op := range map[string]ge.OpType{"RandomUniform": ge.OpRandomUniform, "RandomNormal": ge.OpRandomNormal,
		"RandomUniformLike": ge.OpRandomUniform, "RandomNormalLike": ge.OpRandomNormal} {
		like := strings.HasSuffix(name, "Like")
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			a := c.randomAttrs()
			if op == ge.OpRandomUniform {
				a[ge.AttrLow], a[ge.AttrHigh] = ge.FloatAttr(c.floatAttr("low", 0)), ge.FloatAttr(c.floatAttr("high", 1))
			} else {
				a[ge.AttrMean], a[ge.AttrScale] = ge.FloatAttr(c.floatAttr("mean", 0)), ge.FloatAttr(c.floatAttr("scale", 1))
			}
			dt := acl.Float32
			if like {
				if err := c.need(1, 1); err != nil {
					return nil, err
				}
				dt = c.ins[0].desc.DataType
				a[ge.AttrShape] = ge.IntsAttr(c.ins[0].desc.Dims)
			} else {
				if err := c.need(0, 0); err != nil {
					return nil, err
				}
				shape, ok := c.intsAttr("shape")
				if !ok {
					return nil, c.errf(ErrInvalidModel, "shape is required")
				}
				a[ge.AttrShape] = ge.IntsAttr(shape)
			}
			if c.has("dtype") {
				var ok bool
				if dt, ok = aclType(int32(c.intAttr("dtype", 1))); !ok {
					return nil, c.errf(ErrUnsupportedDataType, "dtype %d", c.intAttr("dtype", 1))
				}
			}
			a[ge.AttrDstType] = ge.IntAttr(int64(dt))
			return c.emitRandom(op, a)
		}
	}
	converters["Bernoulli"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		a := c.randomAttrs()
		if c.has("dtype") {
			dt, ok := aclType(int32(c.intAttr("dtype", 1)))
			if !ok {
				return nil, c.errf(ErrUnsupportedDataType, "dtype %d", c.intAttr("dtype", 1))
			}
			a[ge.AttrDstType] = ge.IntAttr(int64(dt))
		}
		return c.emitRandom(ge.OpBernoulli, a, c.ins[0])
	}
	converters["Multinomial"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		a := c.randomAttrs()
		dt, ok := aclType(int32(c.intAttr("dtype", 6)))
		if !ok {
			return nil, c.errf(ErrUnsupportedDataType, "dtype %d", c.intAttr("dtype", 6))
		}
		a[ge.AttrDstType] = ge.IntAttr(int64(dt))
		a[ge.AttrSampleSize] = ge.IntAttr(c.intAttr("sample_size", 1))
		return c.emitRandom(ge.OpMultinomial, a, c.ins[0])
	}
}

// randomAttrs returns the seed of a random node: the node's seed (a
// float, by its bits), or else an FNV-1a hash of the node's name, so that
// two unseeded generators of a model draw different numbers while every
// run of the model draws the same ones.
func (c *nodeCtx) randomAttrs() ge.Attrs {
	var seed uint64
	if c.has("seed") {
		seed = math.Float64bits(c.floatAttr("seed", 0))
	} else {
		h := fnv.New64a()
		h.Write([]byte(c.name))
		seed = h.Sum64()
	}
	return ge.Attrs{ge.AttrSeed: ge.IntAttr(int64(seed))}
}

// emitRandom adds a random op to the graph, never folding it (emitN
// would fold an op of constant inputs, freezing one draw into the model).
func (c *nodeCtx) emitRandom(op ge.OpType, attrs ge.Attrs, ins ...*value) ([]*value, error) {
	ts := make([]*ge.Tensor, len(ins))
	for i, v := range ins {
		t, err := c.tensor(v)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	nd := c.im.g.AddOp(op, ts, attrs, ge.Name(c.im.uniq(c.name)))
	if err := c.im.g.Err(); err != nil {
		return nil, c.wrap(err)
	}
	return []*value{{desc: nd.Output(0).Desc(), t: nd.Output(0)}}, nil
}

// castTo converts v to the ONNX element type onnxType.
func (c *nodeCtx) castTo(v *value, onnxType int64) ([]*value, error) {
	dt, ok := aclType(int32(onnxType))
	if !ok {
		return nil, c.errf(ErrUnsupportedDataType, "output_datatype %d", onnxType)
	}
	return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, v))
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
// withZeroPoints returns MatMulInteger's or ConvInteger's inputs (a, b,
// a's zero point, b's zero point) with an absent zero point a zero of its
// operand's type.
func (c *nodeCtx) withZeroPoints() ([]*value, error) {
	ins := []*value{c.ins[0], c.ins[1], c.in(2), c.in(3)}
	for i := 2; i < 4; i++ {
		if ins[i] == nil {
			var err error
			if ins[i], err = c.zero(ins[i-2].desc.DataType); err != nil {
				return nil, err
			}
		}
	}
	return ins, nil
}

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
