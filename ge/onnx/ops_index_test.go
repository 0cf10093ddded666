package onnx_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// TestValueDependentOpsWithConstantInputs: the ops whose output shape
// depends on input values import and compute the backend tests' outputs
// once every input is a constant (WithInputValue), the way run-time
// evaluation imports them; without that they are refused as dynamic.
func TestValueDependentOpsWithConstantInputs(t *testing.T) {
	testDataOrSkip(t)
	for _, name := range []string{
		"test_nonzero_example",
		"test_unique_not_sorted_without_axis", "test_unique_sorted_with_axis", "test_unique_sorted_with_axis_3d",
		"test_unique_sorted_with_negative_axis", "test_unique_sorted_without_axis",
		"test_compress_0", "test_compress_1", "test_compress_default_axis", "test_compress_negative_axis",
		"test_onehot_negative_indices", "test_onehot_with_axis", "test_onehot_with_negative_axis", "test_onehot_without_axis",
		"test_top_k", "test_top_k_negative_axis", "test_top_k_smallest", "test_range_float_type_positive_delta",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(testDataDir, "node", name)
			data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
			require.NoError(t, err)
			set := filepath.Join(dir, "test_data_set_0")
			inFiles, _ := filepath.Glob(filepath.Join(set, "input_*.pb"))
			outFiles, _ := filepath.Glob(filepath.Join(set, "output_*.pb"))
			sort.Slice(outFiles, func(i, j int) bool { return fileIndex(outFiles[i]) < fileIndex(outFiles[j]) })
			var opts []onnx.Option
			for _, f := range inFiles {
				tp, h := readTensor(t, f)
				opts = append(opts, onnx.WithInputValue(tp.GetName(), h))
			}
			m, err := onnx.Compile(data, opts...)
			require.NoError(t, err)
			outs, err := getest.Run(m, nil)
			require.NoError(t, err)
			require.Len(t, outs, len(outFiles))
			for j, f := range outFiles {
				_, want := readTensor(t, f)
				d := m.Outputs[j]
				require.Equal(t, want.Desc.DataType, d.DataType, "output %d", j)
				require.Equal(t, want.Desc.Dims, d.Dims, "output %d", j)
				require.Empty(t, compareTensor(d.DataType, outs[j], want.Data), "output %d", j)
			}
		})
	}
}

// TestValueDependentOpsRefuseComputedInputs: a computed input that fixes
// an output shape is ErrDynamicShape.
func TestValueDependentOpsRefuseComputedInputs(t *testing.T) {
	testDataOrSkip(t)
	for _, name := range []string{"test_nonzero_example", "test_unique_sorted_without_axis", "test_compress_0", "test_onehot_with_axis"} {
		data, err := os.ReadFile(filepath.Join(testDataDir, "node", name, "model.onnx"))
		require.NoError(t, err)
		_, err = onnx.Compile(data)
		require.ErrorIs(t, err, onnx.ErrDynamicShape, name)
		require.NotEqual(t, acl.Code(0), acl.CodeOf(err))
	}
}

// idxEinsumModel builds y = Einsum[equation](a, b) (or of a alone, for nil
// db) over float32 graph inputs.
func idxEinsumModel(eq string, da, db []int64) []byte {
	f := int32(1)
	vi := func(name string, dims []int64) *pb.ValueInfoProto {
		var ds []*pb.TensorShapeProto_Dimension
		for _, d := range dims {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
			TensorType: &pb.TypeProto_Tensor{ElemType: &f, Shape: &pb.TensorShapeProto{Dim: ds}}}}}
	}
	names, inputs := []string{"a"}, []*pb.ValueInfoProto{vi("a", da)}
	if db != nil {
		names, inputs = append(names, "b"), append(inputs, vi("b", db))
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(12)}},
		Graph: &pb.GraphProto{Name: proto.String("g"),
			Node: []*pb.NodeProto{{Name: proto.String("e"), OpType: proto.String("Einsum"), Input: names, Output: []string{"y"},
				Attribute: []*pb.AttributeProto{{Name: proto.String("equation"), Type: pb.AttributeProto_STRING.Enum(), S: []byte(eq)}}}},
			Input:  inputs,
			Output: []*pb.ValueInfoProto{{Name: proto.String("y")}}}}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// TestEinsumMatMulPath: batched matrix products become MatMul tasks and
// agree with the general Einsum kernel; other equations stay Einsum.
func TestEinsumMatMulPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		eq     string
		da, db []int64
		matmul bool
	}{
		{"ij,jk->ik", []int64{3, 4}, []int64{4, 5}, true},
		{"bij->bji", []int64{2, 3, 4}, nil, false},
		{"bii->bi", []int64{2, 3, 3}, nil, false},
		{"bhqd,bhkd->bhqk", []int64{2, 2, 3, 4}, []int64{2, 2, 5, 4}, true},
		{"bhqk, bhkd -> bhqd", []int64{2, 2, 3, 5}, []int64{2, 2, 5, 4}, true},
		{"ji,jk->ik", []int64{4, 3}, []int64{4, 5}, true},
		{"bij,bjk->bki", []int64{2, 3, 4}, []int64{2, 4, 5}, false},
		{"ii,jk->ik", []int64{4, 4}, []int64{4, 5}, false},
		{"bij,cjk->bik", []int64{2, 3, 4}, []int64{2, 4, 5}, false},
	} {
		t.Run(c.eq, func(t *testing.T) {
			m, err := onnx.Compile(idxEinsumModel(c.eq, c.da, c.db))
			require.NoError(t, err)
			ops := map[ge.OpType]bool{}
			for _, task := range m.Tasks {
				ops[task.Op] = true
			}
			require.Equal(t, c.matmul, ops[ge.OpMatMul])
			require.Equal(t, strings.Contains(c.eq, "bij->bji"), ops[ge.OpTranspose])
			desc := func(d []int64) ge.TensorDesc { return ge.TensorDesc{DataType: acl.Float32, Dims: d} }
			a := getest.F32Bytes(getest.RandF32(rng, int(idxProd(c.da))))
			in := [][]byte{a}
			hs := []ge.HostTensor{{Desc: desc(c.da), Data: a}}
			if c.db != nil {
				b := getest.F32Bytes(getest.RandF32(rng, int(idxProd(c.db))))
				in = append(in, b)
				hs = append(hs, ge.HostTensor{Desc: desc(c.db), Data: b})
			}
			got, err := getest.Run(m, in)
			require.NoError(t, err)
			want, err := ge.EvalOp(ge.OpEinsum, ge.Attrs{ge.AttrEquation: ge.StringAttr(strings.ReplaceAll(c.eq, " ", ""))}, hs)
			require.NoError(t, err)
			require.Equal(t, want[0].Desc.Dims, m.Outputs[0].Dims)
			require.Empty(t, compareTensor(acl.Float32, got[0], want[0].Data))
		})
	}
}

func idxProd(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// idxNodeModel builds a one-node model over constant inputs (float32 for
// []float32, int64 for []int64) with nOut outputs y0, y1, ...
func idxNodeModel(op string, opset int64, attrs []*pb.AttributeProto, nOut int, ins ...any) []byte {
	var inits []*pb.TensorProto
	var names []string
	for i, v := range ins {
		name := "c" + string(rune('0'+i))
		names = append(names, name)
		switch v := v.(type) {
		case []float32:
			inits = append(inits, &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: proto.Int32(1), FloatData: v})
		case []int64:
			inits = append(inits, &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: proto.Int32(7), Int64Data: v})
		}
	}
	var outs []string
	var outVI []*pb.ValueInfoProto
	for i := range nOut {
		outs = append(outs, "y"+string(rune('0'+i)))
		outVI = append(outVI, &pb.ValueInfoProto{Name: proto.String(outs[i])})
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph: &pb.GraphProto{Name: proto.String("g"), Initializer: inits, Output: outVI,
			Node: []*pb.NodeProto{{Name: proto.String("n"), OpType: proto.String(op), Input: names, Output: outs, Attribute: attrs}}}}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func idxIntAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func idxIntsAttr(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func idxStrAttr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// TestIndexOpsAcrossOpsets: the attribute and semantic changes between
// opsets (TopK's k attribute, Hardmax's 2-D coercion before 13, OneHot's
// negative indices from 11, Pad's attributes and modes, ScatterElements'
// reductions) on small hand-checked cases.
func TestIndexOpsAcrossOpsets(t *testing.T) {
	for _, c := range []struct {
		name  string
		model []byte
		want  [][]float64
	}{
		{"TopK/9", idxNodeModel("TopK", 9, []*pb.AttributeProto{idxIntAttr("k", 2)}, 2, []float32{1, 3, 2, 5, 4, 6}),
			[][]float64{{6, 5}, {5, 3}}},
		{"TopK/11/smallest", idxNodeModel("TopK", 11, []*pb.AttributeProto{idxIntAttr("largest", 0)}, 2, []float32{4, 1, 3, 1}, []int64{3}),
			[][]float64{{1, 1, 3}, {1, 3, 2}}},
		{"ArgMax/11", idxNodeModel("ArgMax", 11, []*pb.AttributeProto{idxIntAttr("keepdims", 0)}, 1, []float32{1, 7, 7, 2}),
			[][]float64{{1}}},
		{"ArgMin/12/last", idxNodeModel("ArgMin", 12, []*pb.AttributeProto{idxIntAttr("select_last_index", 1)}, 1, []float32{1, 7, 1, 2}),
			[][]float64{{2}}},
		{"OneHot/9", idxNodeModel("OneHot", 9, nil, 1, []int64{-1, 1}, []int64{3}, []float32{0, 1}),
			[][]float64{{0, 0, 0, 0, 1, 0}}},
		{"OneHot/11", idxNodeModel("OneHot", 11, nil, 1, []int64{-1, 1}, []int64{3}, []float32{0, 1}),
			[][]float64{{0, 0, 1, 0, 1, 0}}},
		{"Pad/6/edge", idxNodeModel("Pad", 6, []*pb.AttributeProto{idxIntsAttr("pads", 2, 1), idxStrAttr("mode", "edge")}, 1, []float32{1, 2}),
			[][]float64{{1, 1, 1, 2, 2}}},
		{"Pad/11/reflect", idxNodeModel("Pad", 11, []*pb.AttributeProto{idxStrAttr("mode", "reflect")}, 1, []float32{1, 2, 3}, []int64{2, 1}),
			[][]float64{{3, 2, 1, 2, 3, 2}}},
		{"Pad/19/wrap", idxNodeModel("Pad", 19, []*pb.AttributeProto{idxStrAttr("mode", "wrap")}, 1, []float32{1, 2, 3}, []int64{1, -1}),
			[][]float64{{3, 1, 2}}},
		{"ScatterElements/18/max", idxNodeModel("ScatterElements", 18, []*pb.AttributeProto{idxStrAttr("reduction", "max")}, 1,
			[]float32{1, 5, 3}, []int64{0, 0, -1}, []float32{4, 2, 1}), [][]float64{{4, 5, 3}}},
		{"Scatter/9", idxNodeModel("Scatter", 9, nil, 1, []float32{1, 5, 3}, []int64{2}, []float32{9}), [][]float64{{1, 5, 9}}},
		{"CumSum/14", idxNodeModel("CumSum", 14, []*pb.AttributeProto{idxIntAttr("reverse", 1)}, 1, []float32{1, 2, 3}, []int64{0}),
			[][]float64{{6, 5, 3}}},
		{"Tile/13", idxNodeModel("Tile", 13, nil, 1, []int64{1, 2}, []int64{2}), [][]float64{{1, 2, 1, 2}}},
		{"NonZero/13", idxNodeModel("NonZero", 13, nil, 1, []float32{0, 3, 0, 1}), [][]float64{{1, 3}}},
		{"Compress/11", idxNodeModel("Compress", 11, []*pb.AttributeProto{idxIntAttr("axis", -1)}, 1, []float32{1, 2, 3}, []int64{1, 0, 1}),
			[][]float64{{1, 3}}},
		{"Size/13", idxNodeModel("Size", 13, nil, 1, []float32{1, 2, 3}), [][]float64{{3}}},
		{"Einsum/12", idxNodeModel("Einsum", 12, []*pb.AttributeProto{idxStrAttr("equation", "i,i")}, 1, []float32{1, 2, 3}, []float32{4, 5, 6}),
			[][]float64{{32}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := onnx.Compile(c.model)
			require.NoError(t, err)
			outs, err := getest.Run(m, nil)
			require.NoError(t, err)
			require.Len(t, outs, len(c.want))
			for i, w := range c.want {
				h := ge.HostTensor{Desc: ge.TensorDesc{DataType: m.Outputs[i].DataType, Dims: m.Outputs[i].Dims}, Data: outs[i]}
				require.Equal(t, w, toF64(h), "output %d", i)
			}
		})
	}
}
