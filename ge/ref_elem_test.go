package ge_test

import (
	"math"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Float64 references of the element-wise ops of kernel_elem.go and of the
// dtype paths the older element-wise ops gained (float64, integers). They
// follow the ONNX definitions directly: real results are computed in
// float64 and rounded once to the output type; integer results are exact
// integers wrapped into the output type's width, as integer casts do.

func init() {
	for op, f := range map[ge.OpType]func(float64) float64{
		ge.OpAcos: math.Acos, ge.OpAcosh: math.Acosh, ge.OpAsin: math.Asin, ge.OpAsinh: math.Asinh,
		ge.OpAtan: math.Atan, ge.OpAtanh: math.Atanh, ge.OpCos: math.Cos, ge.OpCosh: math.Cosh,
		ge.OpSin: math.Sin, ge.OpSinh: math.Sinh, ge.OpTan: math.Tan, ge.OpCeil: math.Ceil,
		ge.OpFloor: math.Floor, ge.OpRound: elemRoundHalfEven,
		ge.OpSoftsign: func(x float64) float64 { return x / (1 + math.Abs(x)) },
		ge.OpMish:     func(x float64) float64 { return x * math.Tanh(math.Log(1+math.Exp(x))) },
		ge.OpHardSwish: func(x float64) float64 {
			return x * math.Max(0, math.Min(1, x/6+0.5))
		},
		ge.OpGeluErf: func(x float64) float64 { return x / 2 * (1 + math.Erf(x/math.Sqrt2)) },
		ge.OpExp:     math.Exp, ge.OpLog: math.Log, ge.OpSqrt: math.Sqrt, ge.OpTanh: math.Tanh, ge.OpErf: math.Erf,
		ge.OpSigmoid:    func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
		ge.OpReciprocal: func(x float64) float64 { return 1 / x },
		ge.OpSoftplus:   func(x float64) float64 { return math.Log(1 + math.Exp(x)) },
	} {
		refOps[op] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
			return elemRefMap(in[0], out, f)
		}
	}
	refOps[ge.OpCelu] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al := a.Float(ge.AttrAlpha, 1)
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Max(0, x) + math.Min(0, al*(math.Exp(x/al)-1)) })
	}
	refOps[ge.OpHardSigmoid] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al, be := a.Float(ge.AttrAlpha, 0.2), a.Float(ge.AttrBeta, 0.5)
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Max(0, math.Min(1, al*x+be)) })
	}
	refOps[ge.OpShrink] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		bias, lambd := a.Float(ge.AttrBias, 0), a.Float(ge.AttrLambd, 0.5)
		return elemRefMap(in[0], out, func(x float64) float64 {
			if x < -lambd {
				return x + bias
			}
			if x > lambd {
				return x - bias
			}
			return 0
		})
	}
	refOps[ge.OpThresholdedRelu] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al := a.Float(ge.AttrAlpha, 1)
		return elemRefMap(in[0], out, func(x float64) float64 {
			if x > al {
				return x
			}
			return 0
		})
	}
	refOps[ge.OpSign] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 {
			if x > 0 {
				return 1
			} else if x < 0 {
				return -1
			}
			return x
		})
	}
	refOps[ge.OpNeg] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 { return -x })
	}
	refOps[ge.OpAbs] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, math.Abs)
	}
	refOps[ge.OpClip] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		lo, hi := math.Inf(-1), math.Inf(1)
		if v, ok := a[ge.AttrMin]; ok {
			lo = v.F
		}
		if v, ok := a[ge.AttrMax]; ok {
			hi = v.F
		}
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Min(math.Max(x, lo), hi) })
	}
	refOps[ge.OpIsNaN] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 { return elemB2F(math.IsNaN(x)) })
	}
	refOps[ge.OpIsInf] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		neg, pos := true, true
		if v, ok := a[ge.AttrDetectNegative]; ok {
			neg = v.I != 0
		}
		if v, ok := a[ge.AttrDetectPositive]; ok {
			pos = v.I != 0
		}
		return elemRefMap(in[0], out, func(x float64) float64 { return elemB2F((pos && math.IsInf(x, 1)) || (neg && math.IsInf(x, -1))) })
	}
	refOps[ge.OpNot] = func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		if out.DataType == acl.Bool {
			return elemRefMap(in[0], out, func(x float64) float64 { return elemB2F(x == 0) })
		}
		return elemRefMap(in[0], out, func(x float64) float64 { return -x - 1 }) // two's complement ^x
	}
	for op, f := range map[ge.OpType]func(x, y float64, a ge.Attrs, dt acl.DataType) float64{
		ge.OpPow: func(x, y float64, _ ge.Attrs, dt acl.DataType) float64 {
			if elemIsInt(dt) {
				// An integer base: the power truncated toward zero (1/x^|y|
				// is 0 unless |x| = 1; x^0.5 of a float exponent truncates).
				return math.Trunc(math.Pow(x, y))
			}
			return math.Pow(x, y)
		},
		ge.OpMax: func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 {
			if math.IsNaN(x) || math.IsNaN(y) {
				return math.NaN()
			}
			return math.Max(x, y)
		},
		ge.OpMin: func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 {
			if math.IsNaN(x) || math.IsNaN(y) {
				return math.NaN()
			}
			return math.Min(x, y)
		},
		ge.OpMod: func(x, y float64, a ge.Attrs, _ acl.DataType) float64 {
			// fmod: C fmod, the sign of x; else the sign of y (Python's %).
			r := math.Mod(x, y)
			if !a.Bool(ge.AttrFmod) && r != 0 && (r < 0) != (y < 0) {
				r += y
			}
			return r
		},
		ge.OpEqual:        func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return elemB2F(x == y) },
		ge.OpLess:         func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return elemB2F(x < y) },
		ge.OpGreater:      func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return elemB2F(x > y) },
		ge.OpLessEqual:    func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return elemB2F(x <= y) },
		ge.OpGreaterEqual: func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return elemB2F(x >= y) },
		ge.OpAnd:          func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return float64(int64(x) & int64(y)) },
		ge.OpOr:           func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return float64(int64(x) | int64(y)) },
		ge.OpXor:          func(x, y float64, _ ge.Attrs, _ acl.DataType) float64 { return float64(int64(x) ^ int64(y)) },
		ge.OpBitShift: func(x, y float64, a ge.Attrs, dt acl.DataType) float64 {
			if y >= float64(dt.Bits()) {
				return 0
			}
			if a.Bool(ge.AttrShiftLeft) {
				return x * math.Exp2(y) // wrapped by elemRefBroadcast
			}
			return math.Floor(x / math.Exp2(y))
		},
	} {
		refOps[op] = func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
			return elemRefBroadcast(in[0], in[1], out, func(x, y float64) float64 { return f(x, y, a, in[0].dt) })
		}
	}
}

// elemArith are the references of Add/Sub/Mul/Div/Relu for the integer
// and float64 paths (refEval has its own float ones): integer division
// truncates toward zero.
var elemArith = map[ge.OpType]func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal{
	ge.OpAdd: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefBroadcast(in[0], in[1], out, func(x, y float64) float64 { return x + y })
	},
	ge.OpSub: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefBroadcast(in[0], in[1], out, func(x, y float64) float64 { return x - y })
	},
	ge.OpMul: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefBroadcast(in[0], in[1], out, func(x, y float64) float64 { return x * y })
	},
	ge.OpDiv: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefBroadcast(in[0], in[1], out, func(x, y float64) float64 {
			if elemIsInt(out.DataType) {
				return math.Trunc(x / y)
			}
			return x / y
		})
	},
	ge.OpRelu: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Max(x, 0) })
	},
	// The float64 paths of the other activations.
	ge.OpGelu: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 {
			return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		})
	},
	ge.OpSilu: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefMap(in[0], out, func(x float64) float64 { return x / (1 + math.Exp(-x)) })
	},
	ge.OpLeakyRelu: func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al := a.Float(ge.AttrAlpha, 0.01)
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Max(x, 0) + al*math.Min(x, 0) })
	},
	ge.OpElu: func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al := a.Float(ge.AttrAlpha, 1)
		return elemRefMap(in[0], out, func(x float64) float64 { return math.Max(x, 0) + al*(math.Exp(math.Min(x, 0))-1) })
	},
	ge.OpSelu: func(_ testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		al, ga := a.Float(ge.AttrAlpha, 1.67326319217681884765625), a.Float(ge.AttrGamma, 1.05070102214813232421875)
		return elemRefMap(in[0], out, func(x float64) float64 {
			if x > 0 {
				return ga * x
			}
			return ga * al * (math.Exp(x) - 1)
		})
	},
	ge.OpPRelu: func(_ testing.TB, in []refVal, _ ge.Attrs, out ge.TensorDesc) refVal {
		return elemRefBroadcast(in[0], in[1], out, func(x, s float64) float64 { return math.Max(x, 0) + s*math.Min(x, 0) })
	},
}

func elemB2F(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func elemRoundHalfEven(x float64) float64 {
	r := math.Floor(x)
	switch d := x - r; {
	case d > 0.5:
		r++
	case d == 0.5 && math.Mod(r, 2) != 0:
		r++
	}
	return r
}

func elemIsInt(dt acl.DataType) bool {
	switch dt {
	case acl.Int8, acl.Int16, acl.Int32, acl.Int64, acl.Uint8, acl.Uint16, acl.Uint32, acl.Uint64:
		return true
	}
	return false
}

// store maps an exact result into the output type: rounded for floats,
// wrapped (two's complement) for integers, 0/1 for bool.
func elemStore(dt acl.DataType, v float64) float64 {
	switch {
	case dt == acl.Bool:
		return elemB2F(v != 0)
	case dt == acl.Int64:
		return v // the tests' int64 values never overflow; 2^64 - |v| would round in float64
	case elemIsInt(dt):
		m := math.Exp2(float64(dt.Bits()))
		r := math.Mod(v, m)
		if r < 0 {
			r += m
		}
		if (dt == acl.Int8 || dt == acl.Int16 || dt == acl.Int32 || dt == acl.Int64) && r >= m/2 {
			r -= m
		}
		return r
	}
	return roundTo(dt, v)
}

func elemRefMap(x refVal, out ge.TensorDesc, f func(float64) float64) refVal {
	v := make([]float64, len(x.v))
	for i, e := range x.v {
		v[i] = elemStore(out.DataType, f(e))
		if elemIsInt(out.DataType) && elemIsInt(x.dt) {
			v[i] = elemStore(out.DataType, math.Trunc(f(e)))
		}
	}
	return refVal{out.DataType, out.Dims, v}
}

func elemRefBroadcast(a, b refVal, out ge.TensorDesc, f func(x, y float64) float64) refVal {
	v := make([]float64, numel(out.Dims))
	for i := range v {
		idx := unravel(i, out.Dims)
		v[i] = elemStore(out.DataType, f(a.v[bcastIndex(idx, a.dims)], b.v[bcastIndex(idx, b.dims)]))
	}
	return refVal{out.DataType, out.Dims, v}
}
