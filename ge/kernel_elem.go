package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/par"
)

// Element-wise ops of ONNX beyond the activations: trigonometric and
// rounding functions, the parametrised activations (Celu, HardSigmoid,
// Shrink, ThresholdedRelu), Sign, IsNaN/IsInf, the logical and bitwise
// ops, BitShift, Mod and the ≥/≤ comparisons. This file also holds the
// dtype classes and the float64 and integer paths the older element-wise
// ops (Add ... Min, Neg, Abs, Relu, Clip, Exp, ...) take for float64 and
// integer tensors: those compute in float64 (real types) or int64/uint64
// (integer types) and round or wrap once into the output type.
const (
	OpAcos      OpType = 200
	OpAcosh     OpType = 201
	OpAsin      OpType = 202
	OpAsinh     OpType = 203
	OpAtan      OpType = 204
	OpAtanh     OpType = 205
	OpCos       OpType = 206
	OpCosh      OpType = 207
	OpSin       OpType = 208
	OpSinh      OpType = 209
	OpTan       OpType = 210
	OpCeil      OpType = 211
	OpFloor     OpType = 212
	OpRound     OpType = 213 // half to even
	OpSoftsign  OpType = 214 // x / (1 + |x|)
	OpMish      OpType = 215 // x · tanh(softplus(x))
	OpHardSwish OpType = 216 // x · HardSigmoid(x) with alpha 1/6, beta 1/2
	OpGeluErf   OpType = 217 // x · Φ(x), the exact Gelu (OpGelu is the tanh form)

	OpCelu            OpType = 220 // max(0, x) + min(0, alpha·(exp(x/alpha) − 1))
	OpHardSigmoid     OpType = 221 // max(0, min(1, alpha·x + beta))
	OpShrink          OpType = 222 // x+bias below −lambd, x−bias above lambd, 0 between
	OpThresholdedRelu OpType = 223 // x above alpha, 0 elsewhere

	OpSign  OpType = 230 // −1, 0 or 1 (NaN stays NaN)
	OpIsNaN OpType = 231 // bool
	OpIsInf OpType = 232 // bool; attributes detect_negative/detect_positive

	OpAnd      OpType = 240 // logical on bool, bitwise on integers
	OpOr       OpType = 241
	OpXor      OpType = 242
	OpNot      OpType = 243
	OpBitShift OpType = 244 // unsigned integers; attribute shift_left

	OpMod          OpType = 250 // attribute fmod
	OpGreaterEqual OpType = 251
	OpLessEqual    OpType = 252
)

// Attributes of the ops in this file.
const (
	AttrBeta           = "beta"            // HardSigmoid: float offset
	AttrBias           = "bias"            // Shrink: float
	AttrLambd          = "lambd"           // Shrink: float threshold
	AttrDetectNegative = "detect_negative" // IsInf: bool (absent: true)
	AttrDetectPositive = "detect_positive" // IsInf: bool (absent: true)
	AttrShiftLeft      = "shift_left"      // BitShift: bool, true shifts left, false or absent right
	AttrFmod           = "fmod"            // Mod: bool, C fmod (sign of the dividend) instead of the divisor's sign
)

func init() {
	for _, op := range []struct {
		t OpType
		n string
	}{{OpAcos, "Acos"}, {OpAcosh, "Acosh"}, {OpAsin, "Asin"}, {OpAsinh, "Asinh"}, {OpAtan, "Atan"},
		{OpAtanh, "Atanh"}, {OpCos, "Cos"}, {OpCosh, "Cosh"}, {OpSin, "Sin"}, {OpSinh, "Sinh"}, {OpTan, "Tan"},
		{OpCeil, "Ceil"}, {OpFloor, "Floor"}, {OpRound, "Round"}, {OpSoftsign, "Softsign"}, {OpMish, "Mish"},
		{OpHardSwish, "HardSwish"}, {OpGeluErf, "GeluErf"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 1, maxIn: 1, infer: inferUnaryReal, kernel: elemUnaryKernel})
	}
	registerOp(OpCelu, &opSpec{name: "Celu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat}, infer: inferUnaryReal, kernel: elemUnaryKernel})
	registerOp(OpHardSigmoid, &opSpec{name: "HardSigmoid", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat, AttrBeta: AttrFloat}, infer: inferUnaryReal, kernel: elemUnaryKernel})
	registerOp(OpShrink, &opSpec{name: "Shrink", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrBias: AttrFloat, AttrLambd: AttrFloat}, infer: inferUnaryNumeric, kernel: elemUnaryKernel})
	registerOp(OpThresholdedRelu, &opSpec{name: "ThresholdedRelu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAlpha: AttrFloat}, infer: inferUnaryReal, kernel: elemUnaryKernel})
	registerOp(OpSign, &opSpec{name: "Sign", minIn: 1, maxIn: 1, infer: inferUnaryNumeric, kernel: elemUnaryKernel})
	registerOp(OpIsNaN, &opSpec{name: "IsNaN", minIn: 1, maxIn: 1, infer: inferFloatTest, kernel: floatTestKernel})
	registerOp(OpIsInf, &opSpec{name: "IsInf", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrDetectNegative: AttrBool, AttrDetectPositive: AttrBool}, infer: inferFloatTest, kernel: floatTestKernel})
	for _, op := range []struct {
		t OpType
		n string
	}{{OpAnd, "And"}, {OpOr, "Or"}, {OpXor, "Xor"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 2, maxIn: 2, infer: inferLogical, kernel: intBinaryKernel})
	}
	registerOp(OpNot, &opSpec{name: "Not", minIn: 1, maxIn: 1, infer: inferNot, kernel: elemUnaryKernel})
	registerOp(OpBitShift, &opSpec{name: "BitShift", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrShiftLeft: AttrBool}, infer: inferBitShift, kernel: intBinaryKernel})
	registerOp(OpMod, &opSpec{name: "Mod", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrFmod: AttrBool}, infer: inferBinary, kernel: binaryKernel})
	registerOp(OpGreaterEqual, &opSpec{name: "GreaterEqual", minIn: 2, maxIn: 2, infer: inferCompare, kernel: compareKernel})
	registerOp(OpLessEqual, &opSpec{name: "LessEqual", minIn: 2, maxIn: 2, infer: inferCompare, kernel: compareKernel})
}

// Mod returns the remainder of a / b: with the sign of b (Python's %,
// numpy.mod) unless fmod, then with the sign of a (C fmod). Integer
// division by zero fails the task.
func (g *Graph) Mod(a, b *Tensor, fmod bool, opts ...OpOption) *Tensor {
	return g.single(OpMod, []*Tensor{a, b}, Attrs{AttrFmod: BoolAttr(fmod)}, opts)
}

// Logical applies OpAnd, OpOr or OpXor with numpy broadcasting: logical
// on bool tensors, bitwise on integer ones (OpNot is a Unary op).
func (g *Graph) Logical(op OpType, a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(op, []*Tensor{a, b}, nil, opts)
}

// BitShift shifts the unsigned integers of x left or right by the amounts
// in y (broadcast); a shift by the type's width or more gives 0.
func (g *Graph) BitShift(x, y *Tensor, left bool, opts ...OpOption) *Tensor {
	return g.single(OpBitShift, []*Tensor{x, y}, Attrs{AttrShiftLeft: BoolAttr(left)}, opts)
}

// IsInf returns where x is +Inf (if detectPositive) or -Inf (if
// detectNegative).
func (g *Graph) IsInf(x *Tensor, detectNegative, detectPositive bool, opts ...OpOption) *Tensor {
	return g.single(OpIsInf, []*Tensor{x}, Attrs{AttrDetectNegative: BoolAttr(detectNegative), AttrDetectPositive: BoolAttr(detectPositive)}, opts)
}

// The dtype classes of the element-wise ops.

func isSigned(t acl.DataType) bool {
	return t == acl.Int8 || t == acl.Int16 || t == acl.Int32 || t == acl.Int64
}

func isUnsigned(t acl.DataType) bool {
	return t == acl.Uint8 || t == acl.Uint16 || t == acl.Uint32 || t == acl.Uint64
}

func isInteger(t acl.DataType) bool { return isSigned(t) || isUnsigned(t) }

// isReal reports the float types the element-wise ops compute: the
// float32 family and float64.
func isReal(t acl.DataType) bool { return isFloat(t) || t == acl.Float64 }

func isNumeric(t acl.DataType) bool { return isReal(t) || isInteger(t) }

func needNumeric(what string, t acl.DataType) error {
	if !isNumeric(t) {
		return &dtypeError{fmt.Sprintf("%s has data type %s, want a float or integer type", what, t)}
	}
	return nil
}

// inferUnaryReal: float16, bfloat16, float32 or float64 in and out.
func inferUnaryReal(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if !isReal(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want float32, float16, bfloat16 or float64", in[0].DataType)}
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// inferUnaryNumeric: any float or integer type in and out.
func inferUnaryNumeric(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if err := needNumeric("input", in[0].DataType); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// unaryInfer is the inference of the Relu/Gelu/Silu registrations: Relu
// takes the integer types too (ONNX Relu-14), the other two float types.
func unaryInfer(op OpType) func([]TensorDesc, Attrs) ([]TensorDesc, error) {
	if op == OpRelu {
		return inferUnaryNumeric
	}
	return inferUnaryReal
}

func inferFloatTest(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if !isReal(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float type", in[0].DataType)}
	}
	return []TensorDesc{{DataType: acl.Bool, Format: in[0].Format, Dims: cloneDims(in[0].Dims)}}, nil
}

// inferPow: the base is a float or integer type, the exponent any float
// or integer type (ONNX Pow-12 and later); the result has the base's type.
func inferPow(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	for i, d := range in {
		if err := needNumeric(fmt.Sprintf("input %d", i), d.DataType); err != nil {
			return nil, err
		}
	}
	dims, err := broadcastDims(in[0].Dims, in[1].Dims)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func inferLogical(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if err := sameType(in); err != nil {
		return nil, err
	}
	if dt := in[0].DataType; dt != acl.Bool && !isInteger(dt) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want bool or an integer type", dt)}
	}
	dims, err := broadcastDims(in[0].Dims, in[1].Dims)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func inferNot(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if dt := in[0].DataType; dt != acl.Bool && !isInteger(dt) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want bool or an integer type", dt)}
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

func inferBitShift(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if err := sameType(in); err != nil {
		return nil, err
	}
	if !isUnsigned(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want an unsigned integer type", in[0].DataType)}
	}
	dims, err := broadcastDims(in[0].Dims, in[1].Dims)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// elemUnaryKernel runs a one-input element-wise op on any type its
// inference accepts: integer tensors exactly in int64 (Neg, Abs, Relu,
// Sign, Not, Clip) or through float64 (Shrink), real tensors in float64
// with one rounding into the output type.
func elemUnaryKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	if d.DataType == acl.Bool || isInteger(d.DataType) {
		return intUnaryKernel(t, args)
	}
	if isFloat(d.DataType) && fastUnaryOp(t.Op) {
		return fastUnaryKernel(t, args)
	}
	f := realFunc(t)
	if f == nil {
		return kernelError(t, "no float form for %s", t.Op)
	}
	mapReal(d.DataType, args[0], args[1], prod(d.Dims), f)
	return nil
}

// mapReal sets out = f(x) for n values of float type dt, in chunks split
// over threads when large.
func mapReal(dt acl.DataType, in, out []byte, n int, f func(float64) float64) {
	es := dt.Size()
	run := func(lo, hi int) {
		var buf [1024]float64
		for base := lo; base < hi; base += len(buf) {
			c := min(len(buf), hi-base)
			v := buf[:c]
			readF64(v, dt, in[base*es:(base+c)*es])
			for i, x := range v {
				v[i] = f(x)
			}
			o := out[base*es : (base+c)*es]
			for i, x := range v {
				writeFloat(o, dt, i, x)
			}
		}
	}
	if th := par.Threads(n, parallelElems); th > 1 {
		par.Chunked(th, n, run)
	} else {
		run(0, n)
	}
}

// realFunc returns the float64 form of a one-input op, reading its
// attributes; nil for an op without one.
func realFunc(t *Task) func(float64) float64 {
	a := t.Attrs
	switch t.Op {
	case OpAcos:
		return math.Acos
	case OpAcosh:
		return math.Acosh
	case OpAsin:
		return math.Asin
	case OpAsinh:
		return math.Asinh
	case OpAtan:
		return math.Atan
	case OpAtanh:
		return math.Atanh
	case OpCos:
		return math.Cos
	case OpCosh:
		return math.Cosh
	case OpSin:
		return math.Sin
	case OpSinh:
		return math.Sinh
	case OpTan:
		return math.Tan
	case OpCeil:
		return math.Ceil
	case OpFloor:
		return math.Floor
	case OpRound:
		return math.RoundToEven
	case OpSoftsign:
		return func(x float64) float64 { return x / (1 + math.Abs(x)) }
	case OpMish:
		return func(x float64) float64 { return x * math.Tanh(softplus64(x)) }
	case OpHardSwish:
		return func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }
	case OpGeluErf:
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	case OpGelu:
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}
	case OpSilu:
		return func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	case OpRelu:
		return func(x float64) float64 {
			if x < 0 {
				return 0
			}
			return x
		}
	case OpCelu:
		alpha := a.Float(AttrAlpha, 1)
		return func(x float64) float64 { return math.Max(0, x) + math.Min(0, alpha*math.Expm1(x/alpha)) }
	case OpHardSigmoid:
		alpha, beta := a.Float(AttrAlpha, 0.2), a.Float(AttrBeta, 0.5)
		return func(x float64) float64 { return math.Max(0, math.Min(1, alpha*x+beta)) }
	case OpShrink:
		bias, lambd := a.Float(AttrBias, 0), a.Float(AttrLambd, 0.5)
		return func(x float64) float64 {
			switch {
			case x < -lambd:
				return x + bias
			case x > lambd:
				return x - bias
			}
			return 0
		}
	case OpThresholdedRelu:
		alpha := a.Float(AttrAlpha, 1)
		return func(x float64) float64 {
			if x > alpha {
				return x
			}
			return 0
		}
	case OpSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // ±0 and NaN
		}
	case OpSigmoid:
		return func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	case OpTanh:
		return math.Tanh
	case OpErf:
		return math.Erf
	case OpExp:
		return math.Exp
	case OpLog:
		return math.Log
	case OpSqrt:
		return math.Sqrt
	case OpReciprocal:
		return func(x float64) float64 { return 1 / x }
	case OpNeg:
		return func(x float64) float64 { return -x }
	case OpAbs:
		return math.Abs
	case OpSoftplus:
		return softplus64
	case OpLeakyRelu:
		alpha := a.Float(AttrAlpha, 0.01)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}
	case OpElu:
		alpha := a.Float(AttrAlpha, 1)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * math.Expm1(x)
			}
			return x
		}
	case OpSelu:
		alpha, gamma := a.Float(AttrAlpha, 1.67326319217681884765625), a.Float(AttrGamma, 1.05070102214813232421875)
		return func(x float64) float64 {
			if x <= 0 {
				return gamma * alpha * math.Expm1(x)
			}
			return gamma * x
		}
	case OpClip:
		lo, hi := clipBounds(a)
		return func(x float64) float64 {
			if x < lo {
				x = lo
			}
			if x > hi {
				x = hi
			}
			return x
		}
	}
	return nil
}

func softplus64(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func clipBounds(a Attrs) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if v, ok := a[AttrMin]; ok {
		lo = v.F
	}
	if v, ok := a[AttrMax]; ok {
		hi = v.F
	}
	return lo, hi
}

// intUnaryKernel runs a one-input op on bool or integer tensors: values
// widen to int64 (uint64 keeps its bit pattern), results wrap into the
// output type as integer casts do (Neg and Abs of the minimum wrap to
// it).
func intUnaryKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	dt := d.DataType
	x := intsOf(dt, args[0], prod(d.Dims))
	u := dt == acl.Uint64
	switch t.Op {
	case OpNeg:
		for i, v := range x {
			x[i] = -v
		}
	case OpAbs:
		if isSigned(dt) {
			for i, v := range x {
				if v < 0 {
					x[i] = -v
				}
			}
		}
	case OpRelu:
		if isSigned(dt) {
			for i, v := range x {
				x[i] = max(v, 0)
			}
		}
	case OpSign:
		for i, v := range x {
			switch {
			case v == 0:
			case v < 0 && !u:
				x[i] = -1
			default:
				x[i] = 1
			}
		}
	case OpNot:
		for i, v := range x {
			if dt == acl.Bool {
				x[i] = boolInt(v == 0)
			} else {
				x[i] = ^v
			}
		}
	case OpClip:
		lo, hi := clipBounds(t.Attrs)
		for i, v := range x {
			f := intToF64(dt, v)
			if f < lo {
				x[i] = floatToInt(math.Ceil(lo), dt)
			} else if f > hi {
				x[i] = floatToInt(math.Floor(hi), dt)
			}
		}
	case OpShrink:
		f := realFunc(t)
		for i, v := range x {
			x[i] = floatToInt(f(intToF64(dt, v)), dt)
		}
	default:
		return kernelError(t, "%s does not take %s", t.Op, dt)
	}
	storeInts(dt, args[1], x)
	return nil
}

// intToF64 converts an integer read by readInts (uint64 as its bit
// pattern) to float64.
func intToF64(dt acl.DataType, v int64) float64 {
	if dt == acl.Uint64 {
		return float64(uint64(v))
	}
	return float64(v)
}

// errDivZero marks an integer division (or Mod) by zero.
var errDivZero = fmt.Errorf("integer division by zero")

// intBinOp is the scalar form of the two-input ops on integers widened to
// int64; unsigned says the type is uint64 (values are bit patterns, and
// division, remainder, order and exponent are unsigned). Narrower types
// are exact in int64 and wrap when stored. It fails only on a division by
// zero.
func intBinOp(op OpType, x, y int64, unsigned, fmod bool, left bool, bits int) (int64, error) {
	switch op {
	case OpAdd:
		return x + y, nil
	case OpSub:
		return x - y, nil
	case OpMul:
		return x * y, nil
	case OpDiv:
		if y == 0 {
			return 0, errDivZero
		}
		if unsigned {
			return int64(uint64(x) / uint64(y)), nil
		}
		return x / y, nil
	case OpMod:
		if y == 0 {
			return 0, errDivZero
		}
		if unsigned {
			return int64(uint64(x) % uint64(y)), nil
		}
		r := x % y
		if !fmod && r != 0 && (r < 0) != (y < 0) {
			r += y
		}
		return r, nil
	case OpPow:
		if unsigned {
			return int64(upow(uint64(x), uint64(y))), nil
		}
		return ipow(x, y), nil
	case OpMax, OpMin:
		less := x < y
		if unsigned {
			less = uint64(x) < uint64(y)
		}
		if less == (op == OpMin) {
			return x, nil
		}
		return y, nil
	case OpAnd:
		return x & y, nil
	case OpOr:
		return x | y, nil
	case OpXor:
		return x ^ y, nil
	case OpBitShift:
		s := uint64(y)
		if s >= uint64(bits) {
			return 0, nil
		}
		if left {
			return int64(uint64(x) << s), nil
		}
		return int64(uint64(x) >> s), nil
	}
	return 0, fmt.Errorf("op %s has no integer form", op)
}

func upow(x, y uint64) uint64 {
	r := uint64(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// f64BinaryKernel runs a two-input op in float64 with one rounding into
// the output type: float64 tensors, Mod on every float type (fmod of two
// float32 values is exact in float64), and Pow whose exponent type differs
// from the base's and is not integer with it (an integer base is raised
// in float64 and truncated, as ONNX's reference and ONNX Runtime do).
func f64BinaryKernel(t *Task, args [][]byte) error {
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	a, b := f64sOf(ad.DataType, args[0], prod(ad.Dims)), f64sOf(bd.DataType, args[1], prod(bd.Dims))
	out, dt := args[2], od.DataType
	fm := t.Attrs.Bool(AttrFmod)
	bcastWalk(od.Dims, [][]int64{ad.Dims, bd.Dims}, func(i int, o []int) {
		writeNum(out, dt, i, f64BinOp(t.Op, a[o[0]], b[o[1]], fm))
	})
	return nil
}

func f64BinOp(op OpType, x, y float64, fmod bool) float64 {
	switch op {
	case OpAdd:
		return x + y
	case OpSub:
		return x - y
	case OpMul:
		return x * y
	case OpDiv:
		return x / y
	case OpPow:
		return math.Pow(x, y)
	case OpMax:
		if y > x || y != y {
			return y
		}
		return x
	case OpMin:
		if y < x || y != y {
			return y
		}
		return x
	case OpPRelu:
		if x < 0 {
			return x * y
		}
		return x
	case OpMod:
		r := math.Mod(x, y)
		if !fmod && r != 0 && (r < 0) != (y < 0) {
			r += y
		}
		return r
	}
	return math.NaN()
}

// floatTestKernel: IsNaN and IsInf.
func floatTestKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	x := f64sOf(d.DataType, args[0], prod(d.Dims))
	neg, pos := true, true
	if v, ok := t.Attrs[AttrDetectNegative]; ok {
		neg = v.I != 0
	}
	if v, ok := t.Attrs[AttrDetectPositive]; ok {
		pos = v.I != 0
	}
	out := args[1]
	for i, v := range x {
		var r bool
		if t.Op == OpIsNaN {
			r = v != v
		} else {
			r = (pos && math.IsInf(v, 1)) || (neg && math.IsInf(v, -1))
		}
		out[i] = b2u(r)
	}
	return nil
}
