package ge

import (
	"math"

	"github.com/ascend-go/cann/internal/vmath"
)

// Element-wise float functions. Each computes in float64 (float32 for the
// cheap ones) and rounds once into the output type.
const (
	OpSigmoid    OpType = 60
	OpTanh       OpType = 61
	OpErf        OpType = 62
	OpExp        OpType = 63
	OpLog        OpType = 64
	OpSqrt       OpType = 65
	OpReciprocal OpType = 66
	OpNeg        OpType = 67
	OpAbs        OpType = 68
	OpLeakyRelu  OpType = 69
	OpClip       OpType = 70
	OpElu        OpType = 77
	OpSelu       OpType = 78
	OpSoftplus   OpType = 79
)

// Attributes of the activations.
const (
	AttrAlpha = "alpha" // LeakyRelu: float slope of the negative part
	AttrMin   = "min"   // Clip: float lower bound (absent: none)
	AttrMax   = "max"   // Clip: float upper bound (absent: none)
	AttrGamma = "gamma" // Selu: float scale
)

func init() {
	for _, op := range []struct {
		t OpType
		n string
	}{{OpSigmoid, "Sigmoid"}, {OpTanh, "Tanh"}, {OpErf, "Erf"}, {OpExp, "Exp"}, {OpLog, "Log"},
		{OpSqrt, "Sqrt"}, {OpReciprocal, "Reciprocal"}, {OpSoftplus, "Softplus"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 1, maxIn: 1, infer: inferUnaryReal, kernel: activationKernel})
	}
	// Neg and Abs also take the integer types.
	registerOp(OpNeg, &opSpec{name: "Neg", minIn: 1, maxIn: 1, infer: inferUnaryNumeric, kernel: activationKernel})
	registerOp(OpAbs, &opSpec{name: "Abs", minIn: 1, maxIn: 1, infer: inferUnaryNumeric, kernel: activationKernel})
	registerOp(OpLeakyRelu, &opSpec{name: "LeakyRelu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat}, infer: inferUnaryReal, kernel: activationKernel})
	registerOp(OpElu, &opSpec{name: "Elu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat}, infer: inferUnaryReal, kernel: activationKernel})
	registerOp(OpSelu, &opSpec{name: "Selu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat, AttrGamma: AttrFloat}, infer: inferUnaryReal, kernel: activationKernel})
	registerOp(OpClip, &opSpec{name: "Clip", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrMin: AttrFloat, AttrMax: AttrFloat}, infer: inferUnaryNumeric, kernel: activationKernel})
}

// Unary applies a one-input element-wise op (OpSigmoid ... OpAbs, OpRelu,
// OpGelu, OpSilu, or the parameterless ops of kernel_elem.go: OpAcos ...
// OpGeluErf, OpSign, OpIsNaN, OpNot) to x.
func (g *Graph) Unary(op OpType, x *Tensor, opts ...OpOption) *Tensor {
	return g.single(op, []*Tensor{x}, nil, opts)
}

// LeakyRelu returns x for x >= 0 and alpha·x elsewhere.
func (g *Graph) LeakyRelu(x *Tensor, alpha float64, opts ...OpOption) *Tensor {
	return g.single(OpLeakyRelu, []*Tensor{x}, Attrs{AttrAlpha: FloatAttr(alpha)}, opts)
}

// Clip limits x to [lo, hi]; a nil bound is no bound. NaN stays NaN.
func (g *Graph) Clip(x *Tensor, lo, hi *float64, opts ...OpOption) *Tensor {
	a := Attrs{}
	if lo != nil {
		a[AttrMin] = FloatAttr(*lo)
	}
	if hi != nil {
		a[AttrMax] = FloatAttr(*hi)
	}
	return g.single(OpClip, []*Tensor{x}, a, opts)
}

func activationKernel(t *Task, args [][]byte) error {
	if !isFloat(t.Inputs[0].DataType) {
		return elemUnaryKernel(t, args) // float64, integers
	}
	if fastUnaryOp(t.Op) {
		return fastUnaryKernel(t, args)
	}
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n := prod(d.Dims)
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], n)
	if floatUnary(t.Op, out, x) {
		storeFloats(d.DataType, args[1], out)
		return nil
	}
	f64 := func(f func(float64) float64) {
		for i, v := range x {
			out[i] = float32(f(float64(v)))
		}
	}
	switch t.Op {
	case OpLeakyRelu:
		alpha := float32(t.Attrs.Float(AttrAlpha, 0.01))
		for i, v := range x {
			if v < 0 {
				v *= alpha
			}
			out[i] = v
		}
	case OpElu:
		alpha := t.Attrs.Float(AttrAlpha, 1)
		f64(func(v float64) float64 {
			if v < 0 {
				return alpha * math.Expm1(v)
			}
			return v
		})
	case OpSelu:
		alpha, gamma := t.Attrs.Float(AttrAlpha, 1.67326319217681884765625), t.Attrs.Float(AttrGamma, 1.05070102214813232421875)
		f64(func(v float64) float64 {
			if v <= 0 {
				return gamma * alpha * math.Expm1(v)
			}
			return gamma * v
		})
	case OpSoftplus:
		f64(func(v float64) float64 {
			if v > 30 {
				return v
			}
			return math.Log1p(math.Exp(v))
		})
	case OpClip:
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		if v, ok := t.Attrs[AttrMin]; ok {
			lo = float32(v.F)
		}
		if v, ok := t.Attrs[AttrMax]; ok {
			hi = float32(v.F)
		}
		vmath.Clip(out, x, lo, hi)
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// floatUnary sets out = op(x) for the ops computed in float64 and rounded
// once (Log, Sqrt, Abs) or exactly in float32 (Reciprocal, Neg), and
// reports whether op is one of them; the stand-alone kernel and
// element-wise chains share it, so a chain step has the kernel's bits.
func floatUnary(op OpType, out, x []float32) bool {
	f64 := func(f func(float64) float64) {
		for i, v := range x {
			out[i] = float32(f(float64(v)))
		}
	}
	switch op {
	case OpLog:
		f64(math.Log)
	case OpSqrt:
		f64(math.Sqrt)
	case OpAbs:
		f64(math.Abs)
	case OpReciprocal:
		for i, v := range x {
			out[i] = 1 / v
		}
	case OpNeg:
		for i, v := range x {
			out[i] = -v
		}
	default:
		return false
	}
	return true
}
