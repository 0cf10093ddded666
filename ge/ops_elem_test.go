package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

var (
	elemRealTypes     = []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Float64}
	elemSignedTypes   = []acl.DataType{acl.Int8, acl.Int16, acl.Int32, acl.Int64}
	elemUnsignedTypes = []acl.DataType{acl.Uint8, acl.Uint16, acl.Uint32, acl.Uint64}
	elemIntTypes      = append(append([]acl.DataType{}, elemSignedTypes...), elemUnsignedTypes...)
)

// elemGenFunc draws input k's values of type dt.
type elemGenFunc func(r *rand.Rand, k int, dt acl.DataType) float64

// elemGen: normal floats (sd 2), ints in [-20, 20] or [0, 40].
func elemGen(r *rand.Rand, _ int, dt acl.DataType) float64 {
	switch {
	case dt == acl.Bool:
		return float64(r.IntN(2))
	case elemIsInt(dt) && elemIsSigned(dt):
		return float64(r.IntN(41) - 20)
	case elemIsInt(dt):
		return float64(r.IntN(41))
	}
	return r.NormFloat64() * 2
}

// elemGenDivisor is elemGen with input 1 never 0 (Div, Mod).
func elemGenDivisor(r *rand.Rand, k int, dt acl.DataType) float64 {
	for {
		if v := elemGen(r, k, dt); k == 0 || v != 0 {
			return v
		}
	}
}

func elemGenNonZero(r *rand.Rand, _ int, _ acl.DataType) float64 {
	return (0.1 + r.Float64()) * float64(1-2*r.IntN(2))
}

func elemIsSigned(dt acl.DataType) bool {
	return dt == acl.Int8 || dt == acl.Int16 || dt == acl.Int32 || dt == acl.Int64
}

// checkElem builds op over one Data per input (types dts, dims dims,
// values from gen), runs it compiled (arena and zero-copy) and folded
// (EvalOp), and compares both with the reference: within tolerance for
// float outputs, exactly for integer and bool ones.
func checkElem(t *testing.T, r *rand.Rand, op ge.OpType, attrs ge.Attrs, dts []acl.DataType, dims [][]int64, gen elemGenFunc) {
	t.Helper()
	g := ge.NewGraph("elem")
	var ins []*ge.Tensor
	var data [][]byte
	var vals []refVal
	var hs []ge.HostTensor
	for k := range dims {
		ins = append(ins, g.Data(fmt.Sprintf("in%d", k), k, dts[k], dims[k]))
		v := make([]float64, numel(dims[k]))
		for i := range v {
			v[i] = gen(r, k, dts[k])
		}
		b := encodeAny(dts[k], v)
		data = append(data, b)
		vals = append(vals, refVal{dts[k], dims[k], decodeAll(dts[k], b, len(v))})
		hs = append(hs, ge.HostTensor{Desc: ge.TensorDesc{DataType: dts[k], Dims: dims[k]}, Data: b})
	}
	out := g.AddOp(op, ins, attrs).Output(0)
	g.Output(out)
	require.NoError(t, g.Err())
	ref := refOps[op]
	if f, ok := elemArith[op]; ok {
		ref = f
	}
	require.NotNil(t, ref, "no reference for %s", op)
	od := out.Desc()
	want := ref(t, vals, attrs, od)
	got := runGraph(t, g, data)[0]
	folded, err := ge.EvalOp(op, attrs, hs)
	require.NoError(t, err)
	require.Equal(t, got, folded[0].Data, "EvalOp and the compiled model agree")
	if od.DataType == acl.Float32 || od.DataType == acl.Float16 || od.DataType == acl.BFloat16 || od.DataType == acl.Float64 {
		requireClose(t, want, got, tolerance(od.DataType), t.Name())
		return
	}
	require.Equal(t, want.v, decodeAll(od.DataType, got, len(want.v)), "inputs %v", vals)
}

var elemShapes = [][2][]int64{{{3, 5}, {3, 5}}, {{2, 3, 4}, {4}}, {{1, 3, 1}, {2, 1, 4}}, {{}, {2, 3}}}

func TestElemUnaryFloat(t *testing.T) {
	r := newRand(t)
	unit := func(r *rand.Rand, _ int, _ acl.DataType) float64 { return r.Float64()*1.98 - 0.99 }
	cases := []struct {
		op    ge.OpType
		attrs ge.Attrs
		gen   elemGenFunc
	}{
		{ge.OpAcos, nil, unit}, {ge.OpAsin, nil, unit}, {ge.OpAtanh, nil, unit},
		{ge.OpAcosh, nil, func(r *rand.Rand, _ int, _ acl.DataType) float64 { return 1 + 3*r.Float64() }},
		{ge.OpAsinh, nil, elemGen}, {ge.OpAtan, nil, elemGen}, {ge.OpCos, nil, elemGen},
		{ge.OpCosh, nil, elemGen}, {ge.OpSin, nil, elemGen}, {ge.OpSinh, nil, elemGen},
		{ge.OpTan, nil, unit}, {ge.OpCeil, nil, elemGen}, {ge.OpFloor, nil, elemGen},
		// Round: halves test the tie rule (to even).
		{ge.OpRound, nil, func(r *rand.Rand, _ int, _ acl.DataType) float64 { return float64(r.IntN(41)-20) / 2 }},
		{ge.OpRound, nil, elemGen},
		{ge.OpSoftsign, nil, elemGen}, {ge.OpMish, nil, elemGen}, {ge.OpHardSwish, nil, elemGen},
		{ge.OpGeluErf, nil, elemGen}, {ge.OpSign, nil, elemGen},
		{ge.OpCelu, nil, elemGen}, {ge.OpCelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.7)}, elemGen},
		{ge.OpHardSigmoid, nil, elemGen},
		{ge.OpHardSigmoid, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.3), ge.AttrBeta: ge.FloatAttr(0.4)}, elemGen},
		{ge.OpShrink, nil, elemGen},
		{ge.OpShrink, ge.Attrs{ge.AttrBias: ge.FloatAttr(0.2), ge.AttrLambd: ge.FloatAttr(0.6)}, elemGen},
		{ge.OpThresholdedRelu, nil, elemGen}, {ge.OpThresholdedRelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.5)}, elemGen},
		// The float64 paths of the older ops.
		{ge.OpExp, nil, elemGen}, {ge.OpTanh, nil, elemGen}, {ge.OpSigmoid, nil, elemGen},
		{ge.OpNeg, nil, elemGen}, {ge.OpAbs, nil, elemGen}, {ge.OpRelu, nil, elemGen},
		{ge.OpClip, ge.Attrs{ge.AttrMin: ge.FloatAttr(-0.5), ge.AttrMax: ge.FloatAttr(1.5)}, elemGen},
		{ge.OpLog, nil, func(r *rand.Rand, _ int, _ acl.DataType) float64 { return 0.01 + 5*r.Float64() }},
		{ge.OpSqrt, nil, func(r *rand.Rand, _ int, _ acl.DataType) float64 { return 5 * r.Float64() }},
		{ge.OpReciprocal, nil, elemGenNonZero}, {ge.OpErf, nil, elemGen}, {ge.OpSoftplus, nil, elemGen},
		{ge.OpGelu, nil, elemGen}, {ge.OpSilu, nil, elemGen},
		{ge.OpLeakyRelu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.1)}, elemGen},
		{ge.OpElu, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.8)}, elemGen}, {ge.OpSelu, nil, elemGen},
	}
	for _, c := range cases {
		for _, dt := range elemRealTypes {
			if dt != acl.Float64 && c.op < 200 {
				continue // the float32 family of the older ops is tested in ops_test.go
			}
			t.Run(fmt.Sprintf("%s/%s/%v", c.op, dt, c.attrs), func(t *testing.T) {
				checkElem(t, r, c.op, c.attrs, []acl.DataType{dt}, [][]int64{{7, 33}}, c.gen)
			})
		}
	}
}

// TestElemRoundHalfEven pins the tie rule: 0.5 → 0, 1.5 → 2, 2.5 → 2,
// -2.5 → -2.
func TestElemRoundHalfEven(t *testing.T) {
	in := []float64{0.5, 1.5, 2.5, -2.5, -0.5, 2.4999, 3.5000001}
	out, err := ge.EvalOp(ge.OpRound, nil, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{7}}, Data: encodeAny(acl.Float64, in)}})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 2, 2, -2, 0, 2, 4}, decodeAll(acl.Float64, out[0].Data, 7))
}

func TestElemPReluFloat64(t *testing.T) {
	r := newRand(t)
	checkElem(t, r, ge.OpPRelu, nil, []acl.DataType{acl.Float64, acl.Float64}, [][]int64{{2, 3, 4}, {3, 1}}, elemGen)
}

func TestElemFloatTests(t *testing.T) {
	r := newRand(t)
	special := func(r *rand.Rand, _ int, _ acl.DataType) float64 {
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, r.NormFloat64(), -1e30}[r.IntN(6)]
	}
	for _, dt := range elemRealTypes {
		for _, a := range []ge.Attrs{nil,
			{ge.AttrDetectNegative: ge.BoolAttr(false)},
			{ge.AttrDetectPositive: ge.BoolAttr(false)},
			{ge.AttrDetectNegative: ge.BoolAttr(false), ge.AttrDetectPositive: ge.BoolAttr(false)}} {
			t.Run(fmt.Sprintf("IsInf/%s/%v", dt, a), func(t *testing.T) {
				checkElem(t, r, ge.OpIsInf, a, []acl.DataType{dt}, [][]int64{{4, 9}}, special)
			})
		}
		t.Run("IsNaN/"+dt.String(), func(t *testing.T) {
			checkElem(t, r, ge.OpIsNaN, nil, []acl.DataType{dt}, [][]int64{{4, 9}}, special)
		})
	}
}

func TestElemUnaryInt(t *testing.T) {
	r := newRand(t)
	cases := []struct {
		op    ge.OpType
		attrs ge.Attrs
	}{
		{ge.OpNeg, nil}, {ge.OpAbs, nil}, {ge.OpRelu, nil}, {ge.OpSign, nil}, {ge.OpNot, nil},
		{ge.OpClip, ge.Attrs{ge.AttrMin: ge.FloatAttr(3), ge.AttrMax: ge.FloatAttr(15)}},
		{ge.OpClip, ge.Attrs{ge.AttrMax: ge.FloatAttr(-2)}},
		{ge.OpShrink, ge.Attrs{ge.AttrBias: ge.FloatAttr(1), ge.AttrLambd: ge.FloatAttr(4)}},
	}
	for _, c := range cases {
		for _, dt := range elemIntTypes {
			if c.op == ge.OpClip && c.attrs.Float(ge.AttrMax, 0) < 0 && !elemIsSigned(dt) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%v", c.op, dt, c.attrs), func(t *testing.T) {
				checkElem(t, r, c.op, c.attrs, []acl.DataType{dt}, [][]int64{{5, 11}}, elemGen)
			})
		}
	}
	t.Run("Not/bool", func(t *testing.T) {
		checkElem(t, r, ge.OpNot, nil, []acl.DataType{acl.Bool}, [][]int64{{5, 11}}, elemGen)
	})
}

func TestElemBinary(t *testing.T) {
	r := newRand(t)
	powGen := func(r *rand.Rand, k int, dt acl.DataType) float64 {
		switch {
		case k == 1 && elemIsInt(dt):
			return float64(r.IntN(5))
		case elemIsInt(dt) && elemIsSigned(dt):
			return float64(r.IntN(11) - 5)
		case elemIsInt(dt):
			return float64(r.IntN(6))
		case k == 0:
			return 0.1 + 3*r.Float64()
		}
		return r.NormFloat64()
	}
	cases := []struct {
		op    ge.OpType
		attrs ge.Attrs
		gen   elemGenFunc
		types []acl.DataType
	}{
		{ge.OpAdd, nil, elemGen, nil}, {ge.OpSub, nil, elemGen, nil}, {ge.OpMul, nil, elemGen, nil},
		{ge.OpDiv, nil, elemGenDivisor, nil}, {ge.OpPow, nil, powGen, nil},
		{ge.OpMax, nil, elemGen, nil}, {ge.OpMin, nil, elemGen, nil},
		{ge.OpMod, nil, elemGenDivisor, nil},
		{ge.OpMod, ge.Attrs{ge.AttrFmod: ge.BoolAttr(true)}, elemGenDivisor, elemRealTypes},
		{ge.OpMod, ge.Attrs{ge.AttrFmod: ge.BoolAttr(true)}, elemGenDivisor, nil},
		{ge.OpMod, ge.Attrs{ge.AttrFmod: ge.BoolAttr(false)}, elemGenDivisor, elemRealTypes},
	}
	for _, c := range cases {
		types := c.types
		if types == nil {
			types = append(append([]acl.DataType{}, elemIntTypes...), acl.Float64)
		}
		for _, dt := range types {
			for _, s := range elemShapes {
				t.Run(fmt.Sprintf("%s/%s/%v/%v%v", c.op, dt, c.attrs, s[0], s[1]), func(t *testing.T) {
					checkElem(t, r, c.op, c.attrs, []acl.DataType{dt, dt}, [][]int64{s[0], s[1]}, c.gen)
				})
			}
		}
	}
}

// TestElemPowMixed: Pow's exponent may have another type than the base
// (ONNX Pow-12); integer bases raised to float exponents truncate.
func TestElemPowMixed(t *testing.T) {
	r := newRand(t)
	gen := func(r *rand.Rand, k int, dt acl.DataType) float64 {
		switch {
		case k == 0 && elemIsInt(dt):
			return float64(r.IntN(9) + 1)
		case k == 0:
			return 0.1 + 3*r.Float64()
		case elemIsInt(dt):
			return float64(r.IntN(5))
		}
		return float64(r.IntN(9))/2 - 1 // halves: square roots, negative powers
	}
	for _, p := range [][2]acl.DataType{{acl.Int32, acl.Float32}, {acl.Int64, acl.Float64}, {acl.Float32, acl.Int64},
		{acl.Float16, acl.Int32}, {acl.Int32, acl.Int64}, {acl.Uint8, acl.Int32}, {acl.Float32, acl.Uint32},
		{acl.Float64, acl.Float32}, {acl.BFloat16, acl.Float32}} {
		t.Run(fmt.Sprintf("%s^%s", p[0], p[1]), func(t *testing.T) {
			checkElem(t, r, ge.OpPow, nil, p[:], [][]int64{{3, 4}, {4}}, gen)
		})
	}
}

func TestElemCompare(t *testing.T) {
	r := newRand(t)
	// Small ranges, so that equal pairs occur.
	gen := func(r *rand.Rand, _ int, dt acl.DataType) float64 {
		if dt == acl.Bool {
			return float64(r.IntN(2))
		}
		v := float64(r.IntN(5))
		if elemIsSigned(dt) || !elemIsInt(dt) {
			v -= 2
		}
		return v
	}
	for _, op := range []ge.OpType{ge.OpEqual, ge.OpLess, ge.OpGreater, ge.OpLessEqual, ge.OpGreaterEqual} {
		for _, dt := range append(append(append([]acl.DataType{}, elemIntTypes...), elemRealTypes...), acl.Bool) {
			t.Run(fmt.Sprintf("%s/%s", op, dt), func(t *testing.T) {
				checkElem(t, r, op, nil, []acl.DataType{dt, dt}, [][]int64{{2, 3, 4}, {3, 1}}, gen)
			})
		}
	}
}

func TestElemLogical(t *testing.T) {
	r := newRand(t)
	for _, op := range []ge.OpType{ge.OpAnd, ge.OpOr, ge.OpXor} {
		for _, dt := range append([]acl.DataType{acl.Bool}, elemIntTypes...) {
			for _, s := range elemShapes {
				t.Run(fmt.Sprintf("%s/%s/%v%v", op, dt, s[0], s[1]), func(t *testing.T) {
					checkElem(t, r, op, nil, []acl.DataType{dt, dt}, [][]int64{s[0], s[1]}, elemGen)
				})
			}
		}
	}
	for _, left := range []bool{true, false} {
		for _, dt := range elemUnsignedTypes {
			gen := func(r *rand.Rand, k int, dt acl.DataType) float64 {
				if k == 1 {
					return float64(r.IntN(dt.Bits() + 3)) // past the width gives 0
				}
				return float64(r.IntN(256))
			}
			t.Run(fmt.Sprintf("BitShift/left=%v/%s", left, dt), func(t *testing.T) {
				checkElem(t, r, ge.OpBitShift, ge.Attrs{ge.AttrShiftLeft: ge.BoolAttr(left)},
					[]acl.DataType{dt, dt}, [][]int64{{3, 7}, {7}}, gen)
			})
		}
	}
}

func elemU64s(v ...uint64) ge.HostTensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Uint64, Dims: []int64{int64(len(v))}}, Data: b}
}

// TestElemUint64: values at and above 2^63 keep unsigned order, division
// and remainder, and cast to and from float64 exactly where representable.
func TestElemUint64(t *testing.T) {
	const big = uint64(1) << 63
	a, b := elemU64s(big+5, 3, math.MaxUint64), elemU64s(2, big, 10)
	for _, c := range []struct {
		op   ge.OpType
		want ge.HostTensor
	}{
		{ge.OpMax, elemU64s(big+5, big, math.MaxUint64)},
		{ge.OpMin, elemU64s(2, 3, 10)},
		{ge.OpDiv, elemU64s((big+5)/2, 0, math.MaxUint64/10)},
		{ge.OpMod, elemU64s((big+5)%2, 3, math.MaxUint64%10)},
		{ge.OpAdd, elemU64s(big+7, big+3, 9)},
	} {
		out, err := ge.EvalOp(c.op, nil, []ge.HostTensor{a, b})
		require.NoError(t, err)
		require.Equal(t, c.want.Data, out[0].Data, "%s", c.op)
	}
	for op, want := range map[ge.OpType][]byte{ge.OpLess: {0, 1, 0}, ge.OpGreaterEqual: {1, 0, 1}} {
		out, err := ge.EvalOp(op, nil, []ge.HostTensor{a, b})
		require.NoError(t, err)
		require.Equal(t, want, out[0].Data, "%s", op)
	}
	f, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float64))}, []ge.HostTensor{elemU64s(big, 7)})
	require.NoError(t, err)
	require.Equal(t, []float64{float64(big), 7}, decodeAll(acl.Float64, f[0].Data, 2))
	back, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Uint64))},
		[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float64, Dims: []int64{4}}, Data: encodeAny(acl.Float64, []float64{float64(big), 7.9, -3, 1e30})}})
	require.NoError(t, err)
	require.Equal(t, elemU64s(big, 7, 0, math.MaxUint64).Data, back[0].Data, "truncates, saturates")
	for _, dt := range []acl.DataType{acl.Uint16, acl.Uint32} {
		c, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Int64))},
			[]ge.HostTensor{{Desc: ge.TensorDesc{DataType: dt, Dims: []int64{2}}, Data: encodeAny(dt, []float64{math.Exp2(float64(dt.Bits())) - 1, 3})}})
		require.NoError(t, err)
		require.Equal(t, []float64{math.Exp2(float64(dt.Bits())) - 1, 3}, decodeAll(acl.Int64, c[0].Data, 2), "%s zero-extends", dt)
	}
}

// TestElemErrors: integer division and remainder by zero fail the task;
// types and attributes an op does not take are refused at inference.
func TestElemErrors(t *testing.T) {
	i32 := func(v ...float64) ge.HostTensor {
		return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int32, Dims: []int64{int64(len(v))}}, Data: encodeAny(acl.Int32, v)}
	}
	for _, op := range []ge.OpType{ge.OpDiv, ge.OpMod} {
		_, err := ge.EvalOp(op, nil, []ge.HostTensor{i32(1, 2), i32(1, 0)})
		require.Error(t, err)
		require.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(err), "%s: %v", op, err)
		require.Contains(t, err.Error(), "division by zero")
	}
	f32 := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 8)}
	b := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Bool, Dims: []int64{2}}, Data: make([]byte, 2)}
	for _, c := range []struct {
		name  string
		op    ge.OpType
		attrs ge.Attrs
		in    []ge.HostTensor
	}{
		{"acos int", ge.OpAcos, nil, []ge.HostTensor{i32(1, 2)}},
		{"isnan int", ge.OpIsNaN, nil, []ge.HostTensor{i32(1, 2)}},
		{"and float", ge.OpAnd, nil, []ge.HostTensor{f32, f32}},
		{"not float", ge.OpNot, nil, []ge.HostTensor{f32}},
		{"and mixed", ge.OpAnd, nil, []ge.HostTensor{b, i32(1, 0)}},
		{"shift signed", ge.OpBitShift, ge.Attrs{ge.AttrShiftLeft: ge.BoolAttr(true)}, []ge.HostTensor{i32(1, 2), i32(1, 2)}},
		{"mod bool", ge.OpMod, nil, []ge.HostTensor{b, b}},
		{"sign bool", ge.OpSign, nil, []ge.HostTensor{b}},
		{"add bool", ge.OpAdd, nil, []ge.HostTensor{b, b}},
	} {
		_, err := ge.EvalOp(c.op, c.attrs, c.in)
		require.Error(t, err, c.name)
		require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%s: %v", c.name, err)
	}
	u8 := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Uint8, Dims: []int64{2}}, Data: []byte{1, 2}}
	_, err := ge.EvalOp(ge.OpBitShift, ge.Attrs{ge.AttrShiftLeft: ge.IntAttr(1)}, []ge.HostTensor{u8, u8})
	require.Error(t, err, "shift_left must be a bool")
	_, err = ge.EvalOp(ge.OpIsInf, ge.Attrs{ge.AttrDetectNegative: ge.FloatAttr(1)}, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 8)}})
	require.Error(t, err, "detect_negative must be a bool")
}
