package onnx_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

func readPB(t *testing.T, path string) ge.HostTensor {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h, err := onnx.DecodeTensor(b)
	require.NoError(t, err)
	return h
}

func f32s(h ge.HostTensor) []float32 {
	v := make([]float32, len(h.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(uint32(h.Data[4*i]) | uint32(h.Data[4*i+1])<<8 | uint32(h.Data[4*i+2])<<16 | uint32(h.Data[4*i+3])<<24)
	}
	return v
}

// TestSampleModels runs the gonnx sample models and a small CNN against
// NumPy outputs written by testdata/gen.py.
func TestSampleModels(t *testing.T) {
	for _, tc := range []struct {
		name, model, in, out string
		opts                 []onnx.Option
	}{
		{"gonnx-mlp", "gonnx/mlp.onnx", "gonnx/mlp_input_0.pb", "gonnx/mlp_output_0.pb",
			[]onnx.Option{onnx.WithInputShape("data_input", []int64{4, 3})}},
		{"gonnx-scaler", "gonnx/scaler.onnx", "gonnx/scaler_input_0.pb", "gonnx/scaler_output_0.pb",
			[]onnx.Option{onnx.WithInputShape("X", []int64{5, 3})}},
		{"cnn", "cnn.onnx", "cnn_input_0.pb", "cnn_output_0.pb", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := onnx.CompileFile(filepath.Join("testdata", tc.model), tc.opts...)
			require.NoError(t, err)
			in := readPB(t, filepath.Join("testdata", tc.in))
			want := readPB(t, filepath.Join("testdata", tc.out))
			require.Len(t, m.Inputs, 1)
			require.Equal(t, in.Desc.Dims, m.Inputs[0].Dims)
			outs, err := getest.Run(m, [][]byte{in.Data})
			require.NoError(t, err)
			require.Equal(t, want.Desc.Dims, m.Outputs[0].Dims)
			got, exp := f32s(ge.HostTensor{Data: outs[0]}), f32s(want)
			for i := range exp {
				require.InDelta(t, exp[i], got[i], 1e-5+1e-4*math.Abs(float64(exp[i])), "element %d", i)
			}
		})
	}
}

// TestSymbolicDimNeedsShape: a symbolic batch dim is refused as a dynamic
// shape naming the input, until WithInputShape fixes it.
func TestSymbolicDimNeedsShape(t *testing.T) {
	data, err := os.ReadFile("testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	_, err = onnx.Import(data)
	require.ErrorIs(t, err, onnx.ErrDynamicShape)
	require.ErrorContains(t, err, `"data_input"`)
	require.ErrorContains(t, err, "batch_size")
	require.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	_, err = onnx.Import(data, onnx.WithInputShape("data_input", []int64{2, 4}))
	require.ErrorIs(t, err, onnx.ErrInvalidModel, "a known dim that disagrees")
}

// model builds a one-node ModelProto: y = op(x, w) with w an initializer.
func model(op string, opset int64, attrs []*pb.AttributeProto, w *pb.TensorProto) *pb.ModelProto {
	f := int32(1)
	vi := func(name string, dims ...int64) *pb.ValueInfoProto {
		var ds []*pb.TensorShapeProto_Dimension
		for _, d := range dims {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
			TensorType: &pb.TypeProto_Tensor{ElemType: &f, Shape: &pb.TensorShapeProto{Dim: ds}}}}}
	}
	return &pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph: &pb.GraphProto{Name: proto.String("g"),
			Node:        []*pb.NodeProto{{Name: proto.String("n0"), OpType: proto.String(op), Input: []string{"x", "w"}, Output: []string{"y"}, Attribute: attrs}},
			Initializer: []*pb.TensorProto{w},
			Input:       []*pb.ValueInfoProto{vi("x", 2, 3)},
			Output:      []*pb.ValueInfoProto{vi("y")}}}
}

func weight(name string, dims []int64, vals []float32) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(1), FloatData: vals}
}

func TestRefusalsNameNodeOpAndOpset(t *testing.T) {
	w := weight("w", []int64{3}, []float32{1, 2, 3})
	for _, tc := range []struct {
		name  string
		m     *pb.ModelProto
		kind  error
		code  acl.Code
		parts []string
	}{
		{"unsupported op", model("NoSuchOp", 13, nil, w), onnx.ErrUnsupportedOp, acl.CodeGEParamInvalid, []string{`node "n0"`, "NoSuchOp", "opset 13"}},
		{"unknown attribute", model("Add", 14, []*pb.AttributeProto{{Name: proto.String("fancy"), I: proto.Int64(1)}}, w),
			onnx.ErrUnsupportedAttr, acl.CodeGEParamInvalid, []string{`node "n0"`, "(Add, opset 14)", `"fancy"`}},
		{"dtype", model("Add", 14, nil, &pb.TensorProto{Name: proto.String("w"), Dims: []int64{3}, DataType: proto.Int32(8)}),
			onnx.ErrUnsupportedDataType, acl.CodeUnsupportedDataType, []string{"STRING"}},
		{"dynamic", model("Reshape", 14, nil, w), onnx.ErrInvalidModel, acl.CodeGEParamInvalid, []string{"(Reshape, opset 14)", "int64"}},
		{"opset", model("Add", 5, nil, w), onnx.ErrUnsupportedOp, acl.CodeGEParamInvalid, []string{"opset 5"}},
		{"broadcast", model("Add", 14, nil, weight("w", []int64{4}, []float32{1, 2, 3, 4})), onnx.ErrInvalidModel, acl.CodeGEParamInvalid, []string{"do not broadcast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := proto.Marshal(tc.m)
			require.NoError(t, err)
			_, err = onnx.Import(data)
			require.Error(t, err)
			var e *onnx.Error
			require.True(t, errors.As(err, &e))
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.code, acl.CodeOf(err))
			for _, p := range tc.parts {
				require.ErrorContains(t, err, p)
			}
		})
	}
}

// TestExternalData: a weight in a side file is read from the model
// directory; a location escaping it, or a missing directory, is refused.
func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	vals := []float32{0.5, -2, 4}
	raw := make([]byte, 12+5)
	for i, v := range vals {
		b := math.Float32bits(v)
		raw[5+4*i], raw[5+4*i+1], raw[5+4*i+2], raw[5+4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.bin"), raw, 0o644))
	ext := func(loc string) *pb.TensorProto {
		return &pb.TensorProto{Name: proto.String("w"), Dims: []int64{3}, DataType: proto.Int32(1),
			DataLocation: pb.TensorProto_EXTERNAL.Enum(),
			ExternalData: []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(loc)},
				{Key: proto.String("offset"), Value: proto.String("5")}, {Key: proto.String("length"), Value: proto.String("12")}}}
	}
	data, err := proto.Marshal(model("Mul", 14, nil, ext("w.bin")))
	require.NoError(t, err)
	m, err := onnx.Compile(data, onnx.WithExternalDataDir(dir))
	require.NoError(t, err)
	x := []float32{1, 2, 3, 4, 5, 6}
	xb := make([]byte, 24)
	for i, v := range x {
		b := math.Float32bits(v)
		xb[4*i], xb[4*i+1], xb[4*i+2], xb[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	outs, err := getest.Run(m, [][]byte{xb})
	require.NoError(t, err)
	got := f32s(ge.HostTensor{Data: outs[0]})
	for i := range x {
		require.Equal(t, x[i]*vals[i%3], got[i])
	}
	_, err = onnx.Compile(data)
	require.ErrorIs(t, err, onnx.ErrInvalidModel)
	require.ErrorContains(t, err, "WithExternalDataDir")
	for _, loc := range []string{"../w.bin", "/etc/passwd", "missing.bin"} {
		data, err := proto.Marshal(model("Mul", 14, nil, ext(loc)))
		require.NoError(t, err)
		_, err = onnx.Compile(data, onnx.WithExternalDataDir(dir))
		require.ErrorIs(t, err, onnx.ErrInvalidModel, loc)
	}
}
