package onnx

import (
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Element-wise ONNX ops beyond the arithmetic of ops_math.go: the
// trigonometric and rounding functions, the parametrised activations,
// Sign, IsNaN/IsInf, the logical and bitwise ops, BitShift, Mod, the ≥/≤
// comparisons, CastLike and Gelu. Each maps to one ge op of
// kernel_elem.go (or of the activations); the ge ops check the data types.

func init() {
	for name, op := range map[string]ge.OpType{"Acos": ge.OpAcos, "Acosh": ge.OpAcosh, "Asin": ge.OpAsin,
		"Asinh": ge.OpAsinh, "Atan": ge.OpAtan, "Atanh": ge.OpAtanh, "Cos": ge.OpCos, "Cosh": ge.OpCosh,
		"Sin": ge.OpSin, "Sinh": ge.OpSinh, "Tan": ge.OpTan, "Ceil": ge.OpCeil, "Floor": ge.OpFloor,
		"Round": ge.OpRound, "Softsign": ge.OpSoftsign, "Mish": ge.OpMish, "HardSwish": ge.OpHardSwish,
		"Sign": ge.OpSign, "IsNaN": ge.OpIsNaN} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			return one(c.emit(op, nil, c.ins[0]))
		}
	}
	// Attribute defaults per the ONNX spec.
	floatAttrs := map[string]struct {
		op    ge.OpType
		attrs map[string]float64
	}{
		"Celu":            {ge.OpCelu, map[string]float64{"alpha": 1}},
		"HardSigmoid":     {ge.OpHardSigmoid, map[string]float64{"alpha": 0.2, "beta": 0.5}},
		"Shrink":          {ge.OpShrink, map[string]float64{"bias": 0, "lambd": 0.5}},
		"ThresholdedRelu": {ge.OpThresholdedRelu, map[string]float64{"alpha": 1}},
	}
	for name, s := range floatAttrs {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			a := ge.Attrs{}
			for k, def := range s.attrs {
				a[k] = ge.FloatAttr(c.floatAttr(k, def))
			}
			return one(c.emit(s.op, a, c.ins[0]))
		}
	}
	converters["IsInf"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpIsInf, ge.Attrs{
			ge.AttrDetectNegative: ge.BoolAttr(c.intAttr("detect_negative", 1) != 0),
			ge.AttrDetectPositive: ge.BoolAttr(c.intAttr("detect_positive", 1) != 0)}, c.ins[0]))
	}
	// And/Or/Xor/Not take bool, the Bitwise ops (opset 18) integers; the
	// ge ops do both.
	for name, op := range map[string]ge.OpType{"And": ge.OpAnd, "Or": ge.OpOr, "Xor": ge.OpXor,
		"BitwiseAnd": ge.OpAnd, "BitwiseOr": ge.OpOr, "BitwiseXor": ge.OpXor} {
		bitwise := strings.HasPrefix(name, "Bitwise")
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(2, 2); err != nil {
				return nil, err
			}
			if err := c.logicalType(c.ins[0], bitwise); err != nil {
				return nil, err
			}
			b, err := c.legacyBroadcast(c.ins[0], c.ins[1])
			if err != nil {
				return nil, err
			}
			return one(c.emit(op, nil, c.ins[0], b))
		}
	}
	for name, bitwise := range map[string]bool{"Not": false, "BitwiseNot": true} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(1, 1); err != nil {
				return nil, err
			}
			if err := c.logicalType(c.ins[0], bitwise); err != nil {
				return nil, err
			}
			return one(c.emit(ge.OpNot, nil, c.ins[0]))
		}
	}
	converters["BitShift"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		d := strings.ToLower(c.strAttr("direction", ""))
		if d != "left" && d != "right" {
			return nil, c.errf(ErrInvalidModel, "direction %q, want LEFT or RIGHT", c.strAttr("direction", ""))
		}
		return one(c.emit(ge.OpBitShift, ge.Attrs{ge.AttrShiftLeft: ge.BoolAttr(d == "left")}, c.ins[0], c.ins[1]))
	}
	converters["Mod"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		// The spec requires fmod=1 for floats; fmod=0 (the sign of the
		// divisor, numpy.mod) is accepted for them too, as ge computes it.
		fmod := c.intAttr("fmod", 0) != 0
		return one(c.emit(ge.OpMod, ge.Attrs{ge.AttrFmod: ge.BoolAttr(fmod)}, c.ins[0], c.ins[1]))
	}
	for name, op := range map[string]ge.OpType{"GreaterOrEqual": ge.OpGreaterEqual, "LessOrEqual": ge.OpLessEqual} {
		converters[name] = func(c *nodeCtx) ([]*value, error) {
			if err := c.need(2, 2); err != nil {
				return nil, err
			}
			return one(c.emit(op, nil, c.ins[0], c.ins[1]))
		}
	}
	converters["CastLike"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		c.ignore("saturate") // affects float8 targets only, which are refused
		dt := c.ins[1].desc.DataType
		if dt == c.ins[0].desc.DataType {
			return one(c.emit(ge.OpIdentity, nil, c.ins[0]))
		}
		return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, c.ins[0]))
	}
	converters["Gelu"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		switch a := c.strAttr("approximate", "none"); a {
		case "none":
			return one(c.emit(ge.OpGeluErf, nil, c.ins[0]))
		case "tanh":
			// ge's Gelu is the tanh approximation.
			return one(c.emit(ge.OpGelu, nil, c.ins[0]))
		default:
			return nil, c.errf(ErrInvalidModel, "approximate %q, want \"none\" or \"tanh\"", a)
		}
	}
}

// logicalType checks the input type of a logical (bool) or bitwise
// (integer) op.
func (c *nodeCtx) logicalType(v *value, bitwise bool) error {
	dt := v.desc.DataType
	switch {
	case !bitwise && dt != acl.Bool:
		return c.errf(ErrInvalidModel, "input has data type %s, %s takes bool", dt, c.op)
	case bitwise && dt == acl.Bool:
		return c.errf(ErrInvalidModel, "input has data type %s, %s takes integers", dt, c.op)
	}
	return nil
}
