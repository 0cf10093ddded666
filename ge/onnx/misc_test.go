package onnx_test

import (
	"encoding/binary"
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

// randomModel is a graph of the given nodes with one float32 input "x"
// [4, 2500] and float outputs named outs.
func randomModel(nodes []*pb.NodeProto, outs ...string) []byte {
	f := int32(1)
	vi := func(name string, dims ...int64) *pb.ValueInfoProto {
		var ds []*pb.TensorShapeProto_Dimension
		for _, d := range dims {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		tt := &pb.TypeProto_Tensor{ElemType: &f}
		if dims != nil {
			tt.Shape = &pb.TensorShapeProto{Dim: ds}
		}
		return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: tt}}}
	}
	var ov []*pb.ValueInfoProto
	for _, o := range outs {
		ov = append(ov, &pb.ValueInfoProto{Name: proto.String(o)})
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(15)}},
		Graph: &pb.GraphProto{Name: proto.String("g"), Node: nodes,
			Initializer: []*pb.TensorProto{{Name: proto.String("c"), Dims: []int64{3, 1000}, DataType: proto.Int32(1), FloatData: make([]float32, 3000)}},
			Input:       []*pb.ValueInfoProto{vi("x", 4, 2500)}, Output: ov}}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func fAttr(name string, v float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func iAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func node(op string, in, out []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{Name: proto.String(out[0]), OpType: proto.String(op), Input: in, Output: out, Attribute: attrs}
}

func moments(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

func decodeF32(b []byte) []float64 {
	v := make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v
}

// TestRandomOps: the random ops draw at run time (a RandomUniformLike of
// a constant is not folded), with the moments of their distribution,
// the same numbers on every run, and different numbers for two unseeded
// nodes.
func TestRandomOps(t *testing.T) {
	func() {
		shape := &pb.AttributeProto{Name: proto.String("shape"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{5, 2000}}
		data := randomModel([]*pb.NodeProto{
			node("RandomNormal", nil, []string{"n1"}, shape, fAttr("mean", 2), fAttr("scale", 3), fAttr("seed", 7)),
			node("RandomNormal", nil, []string{"n2"}, shape),
			node("RandomNormal", nil, []string{"n3"}, shape),
			node("RandomUniformLike", []string{"c"}, []string{"u"}, fAttr("low", -1), fAttr("high", 3)),
			node("RandomNormalLike", []string{"x"}, []string{"nl"}),
			node("Bernoulli", []string{"x"}, []string{"b"}, fAttr("seed", 1)),
			node("Multinomial", []string{"x"}, []string{"m"}, iAttr("sample_size", 3000), iAttr("dtype", 7)),
		}, "n1", "n2", "n3", "u", "nl", "b", "m")
		m, err := onnx.Compile(data)
		require.NoError(t, err)
		var tasks int
		for _, tk := range m.Tasks {
			if tk.Op == ge.OpRandomUniform {
				tasks++
			}
		}
		require.Equal(t, 1, tasks, "RandomUniformLike of a constant runs as a task")
		// x: probabilities for Bernoulli, log-probabilities for Multinomial:
		// row r holds 0.1·(r+1) then, in class order, log(0.1·(r+1)) ... as
		// one row of 2500 equal values (uniform classes).
		x := make([]byte, 4*4*2500)
		for r := range 4 {
			for j := range 2500 {
				binary.LittleEndian.PutUint32(x[4*(r*2500+j):], math.Float32bits(0.1*float32(r+1)))
			}
		}
		out1, err := getest.Run(m, [][]byte{x})
		require.NoError(t, err)
		out2, err := getest.Run(m, [][]byte{x})
		require.NoError(t, err)
		require.Equal(t, out1, out2, "a model's runs repeat")
		require.NotEqual(t, out1[1], out1[2], "two unseeded nodes draw differently")

		mean, v := moments(decodeF32(out1[0]))
		require.InDelta(t, 2, mean, 4*3/math.Sqrt(1e4))
		require.InDelta(t, 9, v, 0.5)
		u := decodeF32(out1[3])
		require.Len(t, u, 3000)
		for _, x := range u {
			require.True(t, x >= -1 && x < 3, "%v", x)
		}
		mean, v = moments(u)
		require.InDelta(t, 1, mean, 4*math.Sqrt(16.0/12/3000))
		require.InDelta(t, 16.0/12, v, 0.15)
		mean, v = moments(decodeF32(out1[4]))
		require.InDelta(t, 0, mean, 4/math.Sqrt(1e4))
		require.InDelta(t, 1, v, 0.1)
		b := decodeF32(out1[5])
		for r := range 4 {
			mean, _ := moments(b[r*2500 : (r+1)*2500])
			p := 0.1 * float64(r+1)
			require.InDelta(t, p, mean, 4*math.Sqrt(p*(1-p)/2500), "row %d", r)
		}
		d := m.Outputs[6]
		require.Equal(t, acl.Int64, d.DataType)
		require.Equal(t, []int64{4, 3000}, d.Dims)
		counts := make([]int, 2500)
		for i := range 4 * 3000 {
			k := int64(binary.LittleEndian.Uint64(out1[6][8*i:]))
			require.True(t, k >= 0 && k < 2500)
			counts[k]++
		}
		// 12000 draws over 2500 equally likely classes: none dominates.
		for _, c := range counts {
			require.Less(t, c, 25)
		}
	}()
}

// TestMiscCases runs the models of testdata/misc like the backend tests:
// the forms of the misc family's ops that ONNX 1.12's node tests lack
// (opset 18 reductions with axes inputs, integer reductions, every
// direction of RNN/GRU/LSTM with sequence_lens, clip and activation
// lists, per-axis quantization, DFT with opset 20's axis input, two-sided
// STFT, mel edges, losses with weights and ignore_index). testdata/misc/
// README.md says where the expected outputs come from.
func TestMiscCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/misc/*")
	require.NoError(t, err)
	n := 0
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "model.onnx")); err != nil {
			continue
		}
		n++
		r := runBackendTest(t, "misc", d)
		require.Equal(t, "pass", r.status, "%s: %s", r.name, r.reason)
	}
	require.Greater(t, n, 40)
}
