package onnx_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// The converters of ops_elem.go whose opsets (18–20) or attributes the
// ONNX 1.12 backend tests do not cover.

// ONNX TensorProto element types used here.
const (
	elemFloat = 1
	elemUint8 = 2
	elemInt32 = 6
	elemBool  = 9
)

type elemInput struct {
	name string
	typ  int32
	dims []int64
	data []byte
}

// elemModel builds y = op(inputs...) at opset with every input a graph
// input.
func elemModel(t *testing.T, op string, opset int64, attrs []*pb.AttributeProto, ins []elemInput) []byte {
	t.Helper()
	vi := func(name string, typ int32, dims []int64) *pb.ValueInfoProto {
		var ds []*pb.TensorShapeProto_Dimension
		for _, d := range dims {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		tt := &pb.TypeProto_Tensor{ElemType: proto.Int32(typ), Shape: &pb.TensorShapeProto{Dim: ds}}
		return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: tt}}}
	}
	var names []string
	var inputs []*pb.ValueInfoProto
	for _, in := range ins {
		names = append(names, in.name)
		inputs = append(inputs, vi(in.name, in.typ, in.dims))
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph: &pb.GraphProto{Name: proto.String("g"),
			Node:   []*pb.NodeProto{{Name: proto.String("n0"), OpType: proto.String(op), Input: names, Output: []string{"y"}, Attribute: attrs}},
			Input:  inputs,
			Output: []*pb.ValueInfoProto{{Name: proto.String("y")}}}}
	data, err := proto.Marshal(m)
	require.NoError(t, err)
	return data
}

// runElem compiles and runs the model and returns output 0 and its type.
func runElem(t *testing.T, data []byte, ins []elemInput) ([]byte, acl.DataType) {
	t.Helper()
	m, err := onnx.Compile(data)
	require.NoError(t, err)
	var bufs [][]byte
	for _, in := range ins {
		bufs = append(bufs, in.data)
	}
	outs, err := getest.Run(m, bufs)
	require.NoError(t, err)
	return outs[0], m.Outputs[0].DataType
}

func elemF32In(name string, v ...float32) elemInput {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return elemInput{name, elemFloat, []int64{int64(len(v))}, b}
}

func elemI32In(name string, v ...int32) elemInput {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return elemInput{name, elemInt32, []int64{int64(len(v))}, b}
}

func elemI32s(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func elemF32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func strAttr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), S: []byte(v), Type: pb.AttributeProto_STRING.Enum()}
}

func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), I: proto.Int64(v), Type: pb.AttributeProto_INT.Enum()}
}

func TestElemGeluAndMish(t *testing.T) {
	xs := []float32{-3, -1, -0.25, 0, 0.5, 2, 4}
	x := elemF32In("x", xs...)
	for _, c := range []struct {
		op    string
		opset int64
		attrs []*pb.AttributeProto
		f     func(float64) float64
	}{
		{"Gelu", 20, nil, func(v float64) float64 { return v / 2 * (1 + math.Erf(v/math.Sqrt2)) }},
		{"Gelu", 20, []*pb.AttributeProto{strAttr("approximate", "tanh")}, func(v float64) float64 {
			return v / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}},
		{"Mish", 18, nil, func(v float64) float64 { return v * math.Tanh(math.Log1p(math.Exp(v))) }},
		{"HardSwish", 14, nil, func(v float64) float64 { return v * math.Max(0, math.Min(1, v/6+0.5)) }},
	} {
		got, _ := runElem(t, elemModel(t, c.op, c.opset, c.attrs, []elemInput{x}), []elemInput{x})
		for i, v := range elemF32s(got) {
			require.InDelta(t, c.f(float64(xs[i])), float64(v), 1e-6, "%s(%v)", c.op, xs[i])
		}
	}
	_, err := onnx.Import(elemModel(t, "Gelu", 20, []*pb.AttributeProto{strAttr("approximate", "fast")}, []elemInput{x}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel)
}

func TestElemBitwiseAndLogical(t *testing.T) {
	a, b := elemI32In("a", 12, -1, 5, 0), elemI32In("b", 10, 7, -6, 3)
	for op, want := range map[string][]int32{"BitwiseAnd": {8, 7, 0, 0}, "BitwiseOr": {14, -1, -1, 3}, "BitwiseXor": {6, -8, -1, 3}} {
		got, dt := runElem(t, elemModel(t, op, 18, nil, []elemInput{a, b}), []elemInput{a, b})
		require.Equal(t, acl.Int32, dt)
		require.Equal(t, want, elemI32s(got), op)
	}
	got, _ := runElem(t, elemModel(t, "BitwiseNot", 18, nil, []elemInput{a}), []elemInput{a})
	require.Equal(t, []int32{-13, 0, -6, -1}, elemI32s(got))

	p := elemInput{"p", elemBool, []int64{4}, []byte{1, 1, 0, 0}}
	q := elemInput{"q", elemBool, []int64{4}, []byte{1, 0, 1, 0}}
	for op, want := range map[string][]byte{"And": {1, 0, 0, 0}, "Or": {1, 1, 1, 0}, "Xor": {0, 1, 1, 0}} {
		got, dt := runElem(t, elemModel(t, op, 7, nil, []elemInput{p, q}), []elemInput{p, q})
		require.Equal(t, acl.Bool, dt)
		require.Equal(t, want, got, op)
	}
	got, _ = runElem(t, elemModel(t, "Not", 7, nil, []elemInput{p}), []elemInput{p})
	require.Equal(t, []byte{0, 0, 1, 1}, got)

	// The logical ops take bool, the bitwise ones integers.
	for _, c := range []struct {
		op  string
		ins []elemInput
	}{{"And", []elemInput{a, b}}, {"Not", []elemInput{a}}, {"BitwiseAnd", []elemInput{p, q}}, {"BitwiseNot", []elemInput{p}}} {
		_, err := onnx.Import(elemModel(t, c.op, 18, nil, c.ins))
		require.ErrorIs(t, err, onnx.ErrInvalidModel, c.op)
	}
}

func TestElemBitShiftModIsInf(t *testing.T) {
	x := elemInput{"x", elemUint8, []int64{3}, []byte{1, 0x81, 200}}
	s := elemInput{"s", elemUint8, []int64{3}, []byte{1, 1, 9}}
	got, _ := runElem(t, elemModel(t, "BitShift", 11, []*pb.AttributeProto{strAttr("direction", "LEFT")}, []elemInput{x, s}), []elemInput{x, s})
	require.Equal(t, []byte{2, 2, 0}, got)
	got, _ = runElem(t, elemModel(t, "BitShift", 11, []*pb.AttributeProto{strAttr("direction", "RIGHT")}, []elemInput{x, s}), []elemInput{x, s})
	require.Equal(t, []byte{0, 0x40, 0}, got)
	_, err := onnx.Import(elemModel(t, "BitShift", 11, []*pb.AttributeProto{strAttr("direction", "UP")}, []elemInput{x, s}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel)
	_, err = onnx.Import(elemModel(t, "BitShift", 11, nil, []elemInput{x, s}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel, "direction is required")

	a, b := elemI32In("a", -7, 7, -7, 7), elemI32In("b", 3, -3, -3, 3)
	got, _ = runElem(t, elemModel(t, "Mod", 13, nil, []elemInput{a, b}), []elemInput{a, b})
	require.Equal(t, []int32{2, -2, -1, 1}, elemI32s(got), "fmod=0: the divisor's sign")
	got, _ = runElem(t, elemModel(t, "Mod", 13, []*pb.AttributeProto{intAttr("fmod", 1)}, []elemInput{a, b}), []elemInput{a, b})
	require.Equal(t, []int32{-1, 1, -1, 1}, elemI32s(got), "fmod=1: the dividend's sign")

	inf := float32(math.Inf(1))
	f := elemF32In("f", inf, -inf, float32(math.NaN()), 1)
	for _, c := range []struct {
		attrs []*pb.AttributeProto
		want  []byte
	}{
		{nil, []byte{1, 1, 0, 0}},
		{[]*pb.AttributeProto{intAttr("detect_negative", 0)}, []byte{1, 0, 0, 0}},
		{[]*pb.AttributeProto{intAttr("detect_positive", 0)}, []byte{0, 1, 0, 0}},
	} {
		got, _ := runElem(t, elemModel(t, "IsInf", 10, c.attrs, []elemInput{f}), []elemInput{f})
		require.Equal(t, c.want, got)
	}
}

func TestElemCastLike(t *testing.T) {
	x, like := elemF32In("x", 1.9, -2.7, 300), elemI32In("like", 0)
	got, dt := runElem(t, elemModel(t, "CastLike", 15, nil, []elemInput{x, like}), []elemInput{x, like})
	require.Equal(t, acl.Int32, dt)
	require.Equal(t, []int32{1, -2, 300}, elemI32s(got))
	same := elemF32In("like", 0)
	got, dt = runElem(t, elemModel(t, "CastLike", 19, []*pb.AttributeProto{intAttr("saturate", 1)}, []elemInput{x, same}), []elemInput{x, same})
	require.Equal(t, acl.Float32, dt)
	require.Equal(t, x.data, got)
}
