package onnx_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// TestNNAgainstONNXRuntime runs single-node models of the nn family's
// features the official backend data (ONNX 1.12) does not cover: Resize
// 10/18/19 (antialias, axes, keep_aspect_ratio_policy,
// half_pixel_symmetric), Upsample 7/9, GridSample 20 (3-D, every padding
// mode), AffineGrid, LpPool, GlobalLpPool, GroupNormalization 18/21,
// LpNormalization, RoiAlign max and opset 10, integer and indexed
// MaxPool, dilated AveragePool, BatchNormalization training_mode and
// mixed input types, LayerNormalization's Mean/InvStdDev, 1-D/3-D Conv,
// ConvTranspose output_shape/SAME_LOWER/groups, MaxUnpool with pads,
// InstanceNormalization, LRN, MVN and NonMaxSuppression with a score
// threshold. testdata/nn_ort/gen.py builds the models; the expected
// outputs are onnxruntime 1.30's (run.js, a dev tool), converted to the
// backend test layout by prep.py.
func TestNNAgainstONNXRuntime(t *testing.T) {
	dirs, err := filepath.Glob("testdata/nn_ort/test_*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		r := runBackendTest(t, "nn_ort", d)
		require.Equal(t, "pass", r.status, "%s (%s): %s", r.name, r.ops, r.reason)
	}
}

// nnInput is a graph input (init nil) or an initializer of a one-node model.
type nnInput struct {
	name string
	dt   int32 // ONNX element type
	dims []int64
	init *pb.TensorProto
}

// nnModel builds a one-node model of op over the inputs, one output.
func nnModel(op string, opset int64, attrs []*pb.AttributeProto, ins ...nnInput) []byte {
	var names []string
	g := &pb.GraphProto{Name: proto.String("g")}
	for _, in := range ins {
		names = append(names, in.name)
		if in.name == "" {
			continue // an omitted optional input
		}
		if in.init != nil {
			g.Initializer = append(g.Initializer, in.init)
			continue
		}
		var ds []*pb.TensorShapeProto_Dimension
		for _, d := range in.dims {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		dt := in.dt
		g.Input = append(g.Input, &pb.ValueInfoProto{Name: proto.String(in.name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
			TensorType: &pb.TypeProto_Tensor{ElemType: &dt, Shape: &pb.TensorShapeProto{Dim: ds}}}}})
	}
	g.Node = []*pb.NodeProto{{Name: proto.String("n0"), OpType: proto.String(op), Input: names, Output: []string{"y"}, Attribute: attrs}}
	g.Output = []*pb.ValueInfoProto{{Name: proto.String("y")}}
	b, err := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return b
}

func TestNNRefusals(t *testing.T) {
	x := nnInput{name: "x", dt: 1, dims: []int64{1, 1, 4, 4}}
	f32s := func(name string, v ...float32) nnInput {
		return nnInput{name: name, init: &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: proto.Int32(1), FloatData: v}}
	}
	i64s := func(name string, v ...int64) nnInput {
		return nnInput{name: name, init: &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: proto.Int32(7), Int64Data: v}}
	}
	str := func(k, v string) *pb.AttributeProto { return &pb.AttributeProto{Name: proto.String(k), S: []byte(v)} }
	num := func(k string, v int64) *pb.AttributeProto {
		return &pb.AttributeProto{Name: proto.String(k), I: proto.Int64(v)}
	}
	boxes := nnInput{name: "b", dt: 1, dims: []int64{1, 3, 4}}
	scores := nnInput{name: "s", dt: 1, dims: []int64{1, 1, 3}}
	for _, c := range []struct {
		name string
		data []byte
		kind error
	}{
		{"resize scales at run time", nnModel("Resize", 13, nil, x, nnInput{}, nnInput{name: "sc", dt: 1, dims: []int64{4}}), onnx.ErrDynamicShape},
		{"resize mode", nnModel("Resize", 13, []*pb.AttributeProto{str("mode", "area")}, x, nnInput{}, f32s("sc", 1, 1, 2, 2)), onnx.ErrInvalidModel},
		{"resize to nothing", nnModel("Resize", 13, nil, x, nnInput{}, f32s("sc", 1, 1, 0.1, 1)), onnx.ErrEmptyTensor},
		{"resize aspect policy", nnModel("Resize", 18, []*pb.AttributeProto{str("keep_aspect_ratio_policy", "fit")}, x, nnInput{}, nnInput{}, i64s("sz", 1, 1, 2, 2)), onnx.ErrUnsupportedAttr},
		{"nms boxes at run time", nnModel("NonMaxSuppression", 11, nil, boxes, scores, i64s("m", 2)), onnx.ErrDynamicShape},
		{"nms selects nothing", nnModel("NonMaxSuppression", 11, nil, boxes, scores, i64s("m", 0)), onnx.ErrEmptyTensor},
		{"lppool p", nnModel("LpPool", 11, []*pb.AttributeProto{num("p", 0), {Name: proto.String("kernel_shape"), Ints: []int64{2, 2}}}, x), onnx.ErrInvalidModel},
		{"gridsample padding", nnModel("GridSample", 16, []*pb.AttributeProto{str("padding_mode", "wrap")}, x, nnInput{name: "g", dt: 1, dims: []int64{1, 2, 2, 2}}), onnx.ErrInvalidModel},
		{"groupnorm groups", nnModel("GroupNormalization", 18, []*pb.AttributeProto{num("num_groups", 3)}, nnInput{name: "x", dt: 1, dims: []int64{1, 4, 2}}, f32s("s", 1, 1, 1), f32s("b", 1, 1, 1)), onnx.ErrInvalidModel},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Import(c.data)
			require.Error(t, err)
			require.ErrorIs(t, err, c.kind, "%v", err)
		})
	}
}
