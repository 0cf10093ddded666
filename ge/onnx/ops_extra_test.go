package onnx_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// The converters of ops_extra.go beyond what the backend tests cover:
// TfIdfVectorizer's weighted modes and refusals, and the training domain's
// import rules.

func extraAttrS(name, s string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(s)}
}

func extraAttrF(name string, f float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(f)}
}

func extraAttrFs(name string, f ...float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOATS.Enum(), Floats: f}
}

// tfidfModel: X int64 [2, 6] → TfIdfVectorizer with 1-grams {3, 7} and
// 2-grams {3 3} {7 8}, at output coordinates 3, 0, 1, 2.
func tfidfModel(extra ...*pb.AttributeProto) []byte {
	attrs := append([]*pb.AttributeProto{attrI("min_gram_length", 1), attrI("max_gram_length", 2), attrI("max_skip_count", 1),
		attrIs("ngram_counts", 0, 2), attrIs("ngram_indexes", 3, 0, 1, 2), attrIs("pool_int64s", 3, 7, 3, 3, 7, 8)}, extra...)
	g := graph("tfidf", []*pb.NodeProto{nd("TfIdfVectorizer", []string{"x"}, []string{"y"}, attrs...)},
		[]*pb.ValueInfoProto{vi("x", tInt64, 2, 6)}, []*pb.ValueInfoProto{vi("y", tFloat, 2, 4)})
	return modelBytes(g, 9)
}

func TestExtraTfIdfModes(t *testing.T) {
	// Row 0: 3 3 3 7 8 7; row 1: 7 1 8 3 5 3.
	x := i64Bytes(3, 3, 3, 7, 8, 7, 7, 1, 8, 3, 5, 3)
	// Counts of the pool n-grams (1-gram 3, 1-gram 7, 2-gram 3 3, 2-gram
	// 7 8) with skips 0 and 1. Row 0: 3 3 3 7 8 7 holds 3 three times, 7
	// twice, 3 3 at (0,1) (1,2) and skip 1 (0,2), 7 8 at (3,4). Row 1: 7 1
	// 8 3 5 3 holds 3 twice, 7 once, 3 _ 3 and 7 _ 8 at skip 1.
	counts := [2][4]float32{{3, 2, 3, 1}, {2, 1, 1, 1}}
	weights := []float32{0.5, 2, 4, 8}
	at := []int{3, 0, 1, 2} // ngram_indexes
	for _, c := range []struct {
		mode string
		w    bool
		f    func(n, w float32) float32
	}{
		{"TF", false, func(n, _ float32) float32 { return n }},
		{"TF", true, func(n, _ float32) float32 { return n }}, // TF ignores the weights
		{"IDF", false, func(n, _ float32) float32 { return min(n, 1) }},
		{"IDF", true, func(n, w float32) float32 { return min(n, 1) * w }},
		{"TFIDF", true, func(n, w float32) float32 { return n * w }},
	} {
		attrs := []*pb.AttributeProto{extraAttrS("mode", c.mode)}
		if c.w {
			attrs = append(attrs, extraAttrFs("weights", weights...))
		}
		m, err := onnx.Compile(tfidfModel(attrs...))
		require.NoError(t, err, c.mode)
		out, err := getest.Run(m, [][]byte{x})
		require.NoError(t, err)
		want := make([]float32, 8)
		for r := range 2 {
			for i, n := range counts[r] {
				want[4*r+at[i]] = c.f(n, weights[i])
			}
		}
		require.Equal(t, want, bytesF32(out[0]), "mode %s weights %v", c.mode, c.w)
	}
}

func TestExtraTfIdfRefusals(t *testing.T) {
	_, err := onnx.Compile(tfidfModel(extraAttrS("mode", "TF"), &pb.AttributeProto{Name: proto.String("pool_strings"),
		Type: pb.AttributeProto_STRINGS.Enum(), Strings: [][]byte{[]byte("a")}}))
	require.ErrorIs(t, err, onnx.ErrUnsupportedDataType)
	_, err = onnx.Compile(tfidfModel(extraAttrS("mode", "BM25")))
	require.ErrorIs(t, err, onnx.ErrInvalidModel)
	_, err = onnx.Compile(tfidfModel(extraAttrS("mode", "TF"), extraAttrFs("weights", 1, 2)))
	require.ErrorIs(t, err, onnx.ErrInvalidModel, "weights must match the pool")
	// Opset 8 has no TfIdfVectorizer.
	g := graph("tfidf", []*pb.NodeProto{nd("TfIdfVectorizer", []string{"x"}, []string{"y"}, extraAttrS("mode", "TF"))},
		[]*pb.ValueInfoProto{vi("x", tInt64, 6)}, []*pb.ValueInfoProto{vi("y", tFloat, 4)})
	_, err = onnx.Compile(modelBytes(g, 8))
	require.ErrorIs(t, err, onnx.ErrUnsupportedOp)
}

// trainingModel: Momentum on two tensors, importing the training domain at
// version, and the default domain too when opset > 0.
func trainingModel(version, opset int64, nodes ...*pb.NodeProto) []byte {
	mom := nd("Momentum", []string{"r", "t", "x1", "x2", "g1", "g2", "v1", "v2"}, []string{"x1n", "x2n", "v1n", "v2n"},
		extraAttrF("alpha", 0.9), extraAttrF("beta", 0.5), extraAttrF("norm_coefficient", 0), extraAttrS("mode", "standard"))
	mom.Domain = proto.String("ai.onnx.preview.training")
	ins := []*pb.ValueInfoProto{vi("r", tFloat), vi("t", tInt64)}
	for _, n := range []string{"x1", "x2", "g1", "g2", "v1", "v2"} {
		d := 2
		if n[1] == '2' {
			d = 3
		}
		ins = append(ins, vi(n, tFloat, d))
	}
	outs := []*pb.ValueInfoProto{vi("x1n", tFloat, 2), vi("x2n", tFloat, 3), vi("v1n", tFloat, 2), vi("v2n", tFloat, 3)}
	g := graph("train", append([]*pb.NodeProto{mom}, nodes...), ins, outs)
	imports := []*pb.OperatorSetIdProto{{Domain: proto.String("ai.onnx.preview.training"), Version: proto.Int64(version)}}
	if opset > 0 {
		imports = append(imports, &pb.OperatorSetIdProto{Domain: proto.String(""), Version: proto.Int64(opset)})
	}
	b, err := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(7), OpsetImport: imports, Graph: g})
	if err != nil {
		panic(err)
	}
	return b
}

func TestExtraTrainingDomain(t *testing.T) {
	in := [][]byte{f32Bytes([]float32{0.5}), i64Bytes(1), f32Bytes([]float32{1, 2}), f32Bytes([]float32{3, 4, 5}),
		f32Bytes([]float32{1, -1}), f32Bytes([]float32{2, 0, -2}), f32Bytes([]float32{0, 1}), f32Bytes([]float32{1, 1, 1})}
	for _, opset := range []int64{0, 13} {
		m, err := onnx.Compile(trainingModel(1, opset))
		require.NoError(t, err, "opset %d", opset)
		out, err := getest.Run(m, in)
		require.NoError(t, err)
		// V_new = 0.9·V + 0.5·G, X_new = X - 0.5·V_new, outputs X1 X2 V1 V2.
		for i, want := range [][]float32{{1 - 0.5*0.5, 2 - 0.5*0.4}, {3 - 0.5*1.9, 4 - 0.5*0.9, 5 - 0.5*-0.1}, {0.5, 0.4}, {1.9, 0.9, -0.1}} {
			require.InDeltaSlice(t, want, bytesF32(out[i]), 1e-6, "output %d", i)
		}
	}
	// Only version 1 of the domain exists.
	_, err := onnx.Load(trainingModel(2, 13))
	require.ErrorIs(t, err, onnx.ErrUnsupportedOp)
	// A default-domain node needs the default domain imported.
	relu := nd("Relu", []string{"x1"}, []string{"y"})
	_, err = onnx.Compile(trainingModel(1, 0, relu))
	require.ErrorIs(t, err, onnx.ErrInvalidModel)
	// Momentum's mode is required and checked; the tensors come in groups.
	bad := func(edit func(n *pb.NodeProto)) error {
		var mp pb.ModelProto
		require.NoError(t, proto.Unmarshal(trainingModel(1, 13), &mp))
		edit(mp.Graph.Node[0])
		b, err := proto.Marshal(&mp)
		require.NoError(t, err)
		_, err = onnx.Compile(b)
		return err
	}
	require.ErrorIs(t, bad(func(n *pb.NodeProto) { n.Attribute[3] = extraAttrS("mode", "heavy") }), onnx.ErrInvalidModel)
	require.ErrorIs(t, bad(func(n *pb.NodeProto) { n.Attribute = n.Attribute[1:] }), onnx.ErrInvalidModel, "alpha is required")
	require.ErrorIs(t, bad(func(n *pb.NodeProto) { n.Input = n.Input[:7] }), onnx.ErrInvalidModel)
	require.ErrorIs(t, bad(func(n *pb.NodeProto) { n.Input[3] = "x1" }), onnx.ErrInvalidModel, "shapes differ")
}
