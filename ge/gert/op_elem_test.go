package gert_test

import (
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
)

// Single-op cases of the element-wise ops of ge/kernel_elem.go.
func init() {
	moreOpCases = append(moreOpCases, elemOpCases)
}

type elemIn func() (gert.IODesc, []byte)

func elemCase(op string, attrs gert.OpAttrs, ins ...elemIn) opCase {
	c := opCase{op: op, attrs: attrs}
	for _, f := range ins {
		d, b := f()
		c.in, c.data = append(c.in, d), append(c.data, b)
	}
	return c
}

// elemF32 draws float32 values from f.
func elemF32(rng *rand.Rand, f func(*rand.Rand) float32, shape ...int64) elemIn {
	return func() (gert.IODesc, []byte) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = f(rng)
		}
		return gert.IODesc{DataType: acl.Float32, Shape: shape, Format: acl.FormatND}, getest.F32Bytes(v)
	}
}

// elemBytes draws one-byte values (uint8 or bool) below lim.
func elemBytes(rng *rand.Rand, dt acl.DataType, lim int, shape ...int64) elemIn {
	return func() (gert.IODesc, []byte) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(lim))
		}
		return gert.IODesc{DataType: dt, Shape: shape, Format: acl.FormatND}, b
	}
}

func elemOpCases(rng *rand.Rand) []opCase {
	norm := func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 2) }
	unit := func(r *rand.Rand) float32 { return r.Float32()*1.9 - 0.95 }
	var cs []opCase
	for _, op := range []string{"Asinh", "Atan", "Cos", "Cosh", "Sin", "Sinh", "Ceil", "Floor", "Round",
		"Softsign", "Mish", "HardSwish", "GeluErf", "Sign", "Celu", "HardSigmoid", "Shrink", "ThresholdedRelu", "IsNaN"} {
		cs = append(cs, elemCase(op, nil, elemF32(rng, norm, 5, 7, 3)))
	}
	for _, op := range []string{"Acos", "Asin", "Atanh", "Tan"} {
		cs = append(cs, elemCase(op, nil, elemF32(rng, unit, 5, 7)))
	}
	special := func(r *rand.Rand) float32 {
		return []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), norm(r)}[r.IntN(4)]
	}
	cs = append(cs,
		elemCase("Acosh", nil, elemF32(rng, func(r *rand.Rand) float32 { return 1 + 3*r.Float32() }, 5, 7)),
		elemCase("Celu", gert.OpAttrs{"alpha": float32(0.6)}, elemF32(rng, norm, 4, 9)),
		elemCase("HardSigmoid", gert.OpAttrs{"alpha": float32(0.3), "beta": float32(0.4)}, elemF32(rng, norm, 4, 9)),
		elemCase("Shrink", gert.OpAttrs{"bias": float32(0.25), "lambd": float32(1)}, elemF32(rng, norm, 4, 9)),
		elemCase("ThresholdedRelu", gert.OpAttrs{"alpha": float32(0.3)}, elemF32(rng, norm, 4, 9)),
		elemCase("IsInf", gert.OpAttrs{"detect_negative": false}, elemF32(rng, special, 4, 9)),
		elemCase("Mod", nil, elemF32(rng, norm, 3, 17), elemF32(rng, norm, 17)),
		elemCase("Mod", gert.OpAttrs{"fmod": true}, elemF32(rng, norm, 3, 17), elemF32(rng, norm, 17)),
		elemCase("Mod", nil, elemBytes(rng, acl.Uint8, 256, 3, 5), elemBytes(rng, acl.Uint8, 255, 5)), // a 0 divisor is possible: see below
		elemCase("GreaterEqual", nil, elemBytes(rng, acl.Uint8, 4, 3, 5), elemBytes(rng, acl.Uint8, 4, 5)),
		elemCase("LessEqual", nil, elemF32(rng, norm, 3, 17), elemF32(rng, norm, 17)),
		elemCase("BitShift", gert.OpAttrs{"shift_left": true}, elemBytes(rng, acl.Uint8, 256, 4, 6), elemBytes(rng, acl.Uint8, 10, 6)),
		elemCase("BitShift", nil, elemBytes(rng, acl.Uint8, 256, 4, 6), elemBytes(rng, acl.Uint8, 10, 1)),
		elemCase("Not", nil, elemBytes(rng, acl.Bool, 2, 4, 6)),
		elemCase("Not", nil, elemBytes(rng, acl.Uint8, 256, 4, 6)),
	)
	for _, op := range []string{"And", "Or", "Xor"} {
		cs = append(cs,
			elemCase(op, nil, elemBytes(rng, acl.Bool, 2, 4, 1, 3), elemBytes(rng, acl.Bool, 2, 5, 1)),
			elemCase(op, nil, elemBytes(rng, acl.Uint8, 256, 4, 6), elemBytes(rng, acl.Uint8, 256, 6)))
	}
	// The uint8 Mod above must not divide by zero: make its divisors
	// 1..255.
	for i := range cs {
		if cs[i].op == "Mod" && cs[i].in[0].DataType == acl.Uint8 {
			for j := range cs[i].data[1] {
				cs[i].data[1][j] |= 1
			}
		}
	}
	return cs
}
