package onnx_test

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/proto"

	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// A small ONNX builder for tests: graphs as exporters write them, with
// symbolic dims and subgraphs.

// ONNX element types.
const (
	tFloat = 1
	tInt64 = 7
	tBool  = 9
)

// vi describes a tensor: dims are int (fixed) or string (symbolic); no dims
// at all is a scalar.
func vi(name string, elem int32, dims ...any) *pb.ValueInfoProto {
	ds := []*pb.TensorShapeProto_Dimension{}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		case string:
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		}
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(elem), Shape: &pb.TensorShapeProto{Dim: ds}}}}}
}

// viAny describes a tensor of unknown shape.
func viAny(name string, elem int32) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(elem)}}}}
}

func nd(op string, ins, outs []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(op), Input: ins, Output: outs, Attribute: attrs}
}

func attrI(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrIs(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func attrG(name string, g *pb.GraphProto) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_GRAPH.Enum(), G: g}
}

func graph(name string, nodes []*pb.NodeProto, ins, outs []*pb.ValueInfoProto, inits ...*pb.TensorProto) *pb.GraphProto {
	return &pb.GraphProto{Name: proto.String(name), Node: nodes, Input: ins, Output: outs, Initializer: inits}
}

func modelBytes(g *pb.GraphProto, opset int64) []byte {
	b, err := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}, Graph: g})
	if err != nil {
		panic(err)
	}
	return b
}

func f32Tensor(name string, dims []int64, vals []float32) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(tFloat), FloatData: vals}
}

func i64Tensor(name string, dims []int64, vals ...int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(tInt64), Int64Data: vals}
}

func boolTensor(name string, v bool) *pb.TensorProto {
	x := int32(0)
	if v {
		x = 1
	}
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(tBool), Int32Data: []int32{x}}
}

// endlessLoop: a Loop with trip count 2^62 and a condition that stays
// true, counting its iterations: y = number of iterations run.
func endlessLoop() []byte {
	body := graph("body",
		[]*pb.NodeProto{
			nd("Identity", []string{"cond_in"}, []string{"cond_out"}),
			nd("Add", []string{"n_in", "one"}, []string{"n_out"}),
		},
		[]*pb.ValueInfoProto{vi("i", tInt64), vi("cond_in", tBool), vi("n_in", tInt64)},
		[]*pb.ValueInfoProto{vi("cond_out", tBool), vi("n_out", tInt64)},
		i64Tensor("one", nil, 1))
	g := graph("endless",
		[]*pb.NodeProto{nd("Loop", []string{"M", "cond", "n0"}, []string{"y"}, attrG("body", body))},
		[]*pb.ValueInfoProto{vi("n0", tInt64)},
		[]*pb.ValueInfoProto{vi("y", tInt64)},
		i64Tensor("M", nil, 1<<62), boolTensor("cond", true))
	return modelBytes(g, 13)
}

// symbolicMLP: y[N,3] = Relu(x[N,4]·W + b), then reshaped through shape
// arithmetic (Shape → Gather → Unsqueeze → Concat → Reshape) to [N,3] again,
// as torch.onnx exports a view.
func symbolicMLP() []byte {
	w := make([]float32, 12)
	for i := range w {
		w[i] = float32(i%5) - 2
	}
	g := graph("mlp",
		[]*pb.NodeProto{
			nd("MatMul", []string{"x", "W"}, []string{"xw"}),
			nd("Add", []string{"xw", "b"}, []string{"h"}),
			nd("Relu", []string{"h"}, []string{"r"}),
			nd("Shape", []string{"x"}, []string{"sx"}),
			nd("Gather", []string{"sx", "zero"}, []string{"n"}, attrI("axis", 0)),
			nd("Unsqueeze", []string{"n", "axes0"}, []string{"n1"}),
			nd("Concat", []string{"n1", "three"}, []string{"shape"}, attrI("axis", 0)),
			nd("Reshape", []string{"r", "shape"}, []string{"y"}),
		},
		[]*pb.ValueInfoProto{vi("x", tFloat, "N", 4)},
		[]*pb.ValueInfoProto{vi("y", tFloat, "N", 3)},
		f32Tensor("W", []int64{4, 3}, w), f32Tensor("b", []int64{3}, []float32{0.5, -0.25, 0}),
		i64Tensor("zero", nil, 0), i64Tensor("axes0", []int64{1}, 0), i64Tensor("three", []int64{1}, 3))
	return modelBytes(g, 13)
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func i64Bytes(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}
