package onnx

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// converter builds one ONNX node; it returns one value per node output
// (nil for an optional output it does not produce).
type converter func(c *nodeCtx) ([]*value, error)

// converters is filled by the init functions of the ops_*.go files.
var converters = map[string]converter{}

func one(v *value, err error) ([]*value, error) {
	if err != nil {
		return nil, err
	}
	return []*value{v}, nil
}

func init() {
	for name, op := range map[string]ge.OpType{"Add": ge.OpAdd, "Sub": ge.OpSub, "Mul": ge.OpMul, "Div": ge.OpDiv,
		"Equal": ge.OpEqual, "Less": ge.OpLess, "Greater": ge.OpGreater, "PRelu": ge.OpPRelu} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(2, 2); err != nil {
				return nil, err
			}
			b, err := c.legacyBroadcast(c.ins[0], c.ins[1])
			if err != nil {
				return nil, err
			}
			if x := c.ins[0].desc.Dims; op == ge.OpPRelu && c.im.opset < 7 && len(b.desc.Dims) == 1 && len(x) > 2 && b.desc.Dims[0] == x[1] {
				// PRelu before opset 7 applies a [C] slope per channel (dim 1).
				dims := make([]int64, len(x)-1)
				for i := range dims {
					dims[i] = 1
				}
				dims[0] = x[1]
				if b, err = c.reshape(b, dims); err != nil {
					return nil, err
				}
			}
			return one(c.emit(op, nil, c.ins[0], b))
		}
	}
	converters["Pow"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		e, err := c.legacyBroadcast(c.ins[0], c.ins[1])
		if err != nil {
			return nil, err
		}
		// ge's Pow takes an exponent of another type than the base (Pow-12).
		return one(c.emit(ge.OpPow, nil, c.ins[0], e))
	}
	for name, op := range map[string]ge.OpType{"Max": ge.OpMax, "Min": ge.OpMin, "Sum": ge.OpAdd, "Mean": ge.OpAdd} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1<<20); err != nil {
				return nil, err
			}
			acc := c.ins[0]
			for _, v := range c.ins[1:] {
				if v == nil {
					return nil, c.errf(ErrInvalidModel, "variadic inputs cannot be omitted")
				}
				var err error
				if acc, err = c.emit(op, nil, acc, v); err != nil {
					return nil, err
				}
			}
			if c.op == "Mean" && len(c.ins) > 1 {
				n, err := scalar(acc.desc.DataType, nil, float64(len(c.ins)))
				if err != nil {
					return nil, c.wrap(err)
				}
				return one(c.emit(ge.OpDiv, nil, acc, n))
			}
			if len(c.ins) == 1 {
				return one(c.emit(ge.OpIdentity, nil, acc))
			}
			return []*value{acc}, nil
		}
	}
	for name, op := range map[string]ge.OpType{"Relu": ge.OpRelu, "Sigmoid": ge.OpSigmoid, "Tanh": ge.OpTanh,
		"Erf": ge.OpErf, "Exp": ge.OpExp, "Log": ge.OpLog, "Sqrt": ge.OpSqrt, "Reciprocal": ge.OpReciprocal,
		"Neg": ge.OpNeg, "Abs": ge.OpAbs, "Softplus": ge.OpSoftplus} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			return one(c.emit(op, nil, c.ins[0]))
		}
	}
	converters["LeakyRelu"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpLeakyRelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(c.floatAttr("alpha", 0.01))}, c.ins[0]))
	}
	converters["Clip"] = convClip
	converters["Elu"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpElu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(c.floatAttr("alpha", 1))}, c.ins[0]))
	}
	converters["Selu"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpSelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(c.floatAttr("alpha", 1.67326319217681884765625)),
			ge.AttrGamma: ge.FloatAttr(c.floatAttr("gamma", 1.05070102214813232421875))}, c.ins[0]))
	}
	converters["Where"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(3, 3); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpWhere, nil, c.ins[0], c.ins[1], c.ins[2]))
	}
	converters["Softmax"] = convSoftmax(ge.OpSoftmax)
	converters["LogSoftmax"] = convSoftmax(ge.OpLogSoftmax)
	converters["Gemm"] = convGemm
	converters["MatMul"] = convMatMul
}

// legacyBroadcast applies the broadcast/axis attributes of opset 6 and
// earlier: without broadcast the shapes must match; with it, b's dims line
// up with a's starting at axis (default: the trailing dims, as numpy).
func (c *nodeCtx) legacyBroadcast(a, b *value) (*value, error) {
	if c.im.opset >= 7 {
		return b, nil
	}
	if c.intAttr("broadcast", 0) == 0 {
		return b, nil // ge checks the shapes; equal shapes broadcast trivially
	}
	ad, bd := a.desc.Dims, b.desc.Dims
	axis := c.intAttr("axis", int64(len(ad)-len(bd)))
	if axis < 0 {
		axis += int64(len(ad))
	}
	if axis < 0 || int(axis)+len(bd) > len(ad) {
		return nil, c.errf(ErrInvalidModel, "axis %d does not place %v inside %v", axis, bd, ad)
	}
	dims := make([]int64, len(ad)-int(axis))
	for i := range dims {
		dims[i] = 1
	}
	copy(dims, bd)
	return c.reshape(b, dims)
}

// convClip: bounds are attributes before opset 11 and optional constant
// inputs from 11.
func convClip(c *nodeCtx) ([]*value, error) {
	a := ge.Attrs{}
	if c.im.opset < 11 {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		a[ge.AttrMin] = ge.FloatAttr(c.floatAttr("min", -math.MaxFloat32))
		a[ge.AttrMax] = ge.FloatAttr(c.floatAttr("max", math.MaxFloat32))
	} else {
		if err := c.need(1, 3); err != nil {
			return nil, err
		}
		if (c.in(1) != nil && c.in(1).c == nil) || (c.in(2) != nil && c.in(2).c == nil) {
			// Bounds computed at run time: Clip is Min(Max(x, lo), hi).
			y := c.ins[0]
			for i, op := range []ge.OpType{ge.OpMax, ge.OpMin} {
				if v := c.in(1 + i); v != nil {
					var err error
					if y, err = c.emit(op, nil, y, v); err != nil {
						return nil, err
					}
				}
			}
			return []*value{y}, nil
		}
		for i, k := range []string{ge.AttrMin, ge.AttrMax} {
			if v := c.in(1 + i); v != nil {
				f, err := c.constFloat(v, k)
				if err != nil {
					return nil, err
				}
				a[k] = ge.FloatAttr(f)
			}
		}
	}
	return one(c.emit(ge.OpClip, a, c.ins[0]))
}

// convSoftmax: before opset 13 the input is coerced to 2-D at axis
// (default 1); from 13 the op works on one axis (default -1).
func convSoftmax(op ge.OpType) converter {
	return func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		x := c.ins[0]
		r := len(x.desc.Dims)
		if c.im.opset >= 13 {
			return one(c.emit(op, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", -1))}, x))
		}
		axis, err := c.normAxis(c.intAttr("axis", 1), max(r, 1))
		if err != nil {
			return nil, err
		}
		if axis == r-1 {
			return one(c.emit(op, ge.Attrs{ge.AttrAxis: ge.IntAttr(-1)}, x))
		}
		flat, err := c.reshape(x, []int64{prod(x.desc.Dims[:axis]), prod(x.desc.Dims[axis:])})
		if err != nil {
			return nil, err
		}
		y, err := c.emit(op, ge.Attrs{ge.AttrAxis: ge.IntAttr(1)}, flat)
		if err != nil {
			return nil, err
		}
		return one(c.reshape(y, x.desc.Dims))
	}
}

func prod(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

func (c *nodeCtx) reshape(v *value, dims []int64) (*value, error) {
	return c.emit(ge.OpReshape, ge.Attrs{ge.AttrShape: ge.IntsAttr(dims)}, v)
}

// convGemm: alpha·op(A)·op(B) + beta·C as MatMul, a scale when alpha is
// not 1, and a broadcast Add of beta·C (folded when C is a constant).
func convGemm(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	c.ignore("broadcast")
	a := ge.Attrs{}
	if c.intAttr("transA", 0) != 0 {
		a[ge.AttrTransposeA] = ge.BoolAttr(true)
	}
	if c.intAttr("transB", 0) != 0 {
		a[ge.AttrTransposeB] = ge.BoolAttr(true)
	}
	alpha, beta := c.floatAttr("alpha", 1), c.floatAttr("beta", 1)
	for i := range 2 {
		if len(c.ins[i].desc.Dims) != 2 {
			return nil, c.errf(ErrInvalidModel, "input %d is %s, Gemm takes matrices", i, c.ins[i].desc)
		}
	}
	bm := c.ins[1]
	if a.Bool(ge.AttrTransposeB) && bm.c != nil && bm.desc.Size() <= maxFoldBytes {
		// A constant Bᵀ is transposed once here, so every run takes the
		// faster non-transposed GEMM path.
		t, err := c.emit(ge.OpTranspose, nil, bm)
		if err != nil {
			return nil, err
		}
		bm = t
		delete(a, ge.AttrTransposeB)
	}
	y, err := c.emit(ge.OpMatMul, a, c.ins[0], bm)
	if err != nil {
		return nil, err
	}
	dt := y.desc.DataType
	if alpha != 1 {
		s, err := scalar(dt, nil, alpha)
		if err != nil {
			return nil, c.wrap(err)
		}
		if y, err = c.emit(ge.OpMul, nil, y, s); err != nil {
			return nil, err
		}
	}
	if cv := c.in(2); cv != nil && beta != 0 {
		if beta != 1 {
			s, err := scalar(cv.desc.DataType, nil, beta)
			if err != nil {
				return nil, c.wrap(err)
			}
			if cv, err = c.emit(ge.OpMul, nil, cv, s); err != nil {
				return nil, err
			}
		}
		if y, err = c.emit(ge.OpAdd, nil, y, cv); err != nil {
			return nil, err
		}
	}
	return []*value{y}, nil
}

// convMatMul: numpy matmul; a 1-D operand becomes a matrix and its dim is
// dropped from the result.
func convMatMul(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	x, w := c.ins[0], c.ins[1]
	xd, wd := x.desc.Dims, w.desc.Dims
	if len(xd) == 0 || len(wd) == 0 {
		return nil, c.errf(ErrInvalidModel, "MatMul operands must have rank >= 1")
	}
	var err error
	if len(xd) == 1 {
		if x, err = c.reshape(x, []int64{1, xd[0]}); err != nil {
			return nil, err
		}
	}
	if len(wd) == 1 {
		if w, err = c.reshape(w, []int64{wd[0], 1}); err != nil {
			return nil, err
		}
	}
	y, err := c.emit(ge.OpMatMul, nil, x, w)
	if err != nil || (len(xd) > 1 && len(wd) > 1) {
		return one(y, err)
	}
	yd := y.desc.Dims
	var out []int64
	switch {
	case len(xd) == 1 && len(wd) == 1:
		out = []int64{}
	case len(xd) == 1:
		out = append(append([]int64{}, yd[:len(yd)-2]...), yd[len(yd)-1])
	default:
		out = append([]int64{}, yd[:len(yd)-1]...)
	}
	return one(c.reshape(y, out))
}

func init() {
	// ai.onnx.ml Scaler: y = (x - offset) · scale, per feature (last dim)
	// or one value for all, computed in float32.
	converters["ai.onnx.ml/Scaler"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		x := c.ins[0]
		if x.desc.DataType != acl.Float32 {
			var err error
			if x, err = c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float32))}, x); err != nil {
				return nil, err
			}
		}
		vec := func(name string, def float32) *value {
			a := c.attr(name)
			vals := []float32{def}
			if a != nil && len(a.GetFloats()) > 0 {
				vals = a.GetFloats()
			}
			b := make([]byte, 4*len(vals))
			for i, f := range vals {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			}
			return konst(acl.Float32, []int64{int64(len(vals))}, b)
		}
		y, err := c.emit(ge.OpSub, nil, x, vec("offset", 0))
		if err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpMul, nil, y, vec("scale", 1)))
	}
}
