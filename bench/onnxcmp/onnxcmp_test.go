package onnxcmp

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx"
	gox "github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/zerocopy"
)

// builder assembles an ONNX model with gonnx's generated types.
type builder struct {
	rng   *rand.Rand
	nodes []*gox.NodeProto
	inits []*gox.TensorProto
	n     int
}

func (b *builder) weight(dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	sd := 1 / math.Sqrt(float64(n/dims[0]))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(b.rng.NormFloat64() * sd)
	}
	b.n++
	name := "w" + string(rune('a'+b.n%26)) + string(rune('0'+b.n/26))
	b.inits = append(b.inits, &gox.TensorProto{Name: name, Dims: dims, DataType: 1, FloatData: v})
	return name
}

func (b *builder) node(op string, in []string, attrs ...*gox.AttributeProto) string {
	b.n++
	out := op + "_" + string(rune('a'+b.n%26)) + string(rune('0'+b.n/26))
	b.nodes = append(b.nodes, &gox.NodeProto{Name: out, OpType: op, Input: in, Output: []string{out}, Attribute: attrs})
	return out
}

func ints(name string, v ...int64) *gox.AttributeProto {
	return &gox.AttributeProto{Name: name, Type: gox.AttributeProto_INTS, Ints: v}
}

func vi(name string, dims ...int64) *gox.ValueInfoProto {
	var ds []*gox.TensorShapeProto_Dimension
	for _, d := range dims {
		ds = append(ds, &gox.TensorShapeProto_Dimension{Value: &gox.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &gox.ValueInfoProto{Name: name, Type: &gox.TypeProto{Value: &gox.TypeProto_TensorType{
		TensorType: &gox.TypeProto_Tensor{ElemType: 1, Shape: &gox.TensorShapeProto{Dim: ds}}}}}
}

func (b *builder) model(t testing.TB, in []int64, out string, outDims ...int64) []byte {
	m := &gox.ModelProto{IrVersion: 8, OpsetImport: []*gox.OperatorSetIdProto{{Version: 13}},
		Graph: &gox.GraphProto{Name: "bench", Node: b.nodes, Initializer: b.inits,
			Input: []*gox.ValueInfoProto{vi("x", in...)}, Output: []*gox.ValueInfoProto{vi(out, outDims...)}}}
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mlp: [32, 256] → Gemm 512 → Relu → Gemm 512 → Relu → Gemm 10.
func mlp(t testing.TB) ([]byte, []int64) {
	b := &builder{rng: rand.New(rand.NewPCG(1, 2))}
	h := "x"
	for _, w := range [][2]int64{{256, 512}, {512, 512}, {512, 10}} {
		h = b.node("Gemm", []string{h, b.weight(w[1], w[0]), b.weight(w[1])},
			&gox.AttributeProto{Name: "transB", Type: gox.AttributeProto_INT, I: 1})
		if w[1] != 10 {
			h = b.node("Relu", []string{h})
		}
	}
	return b.model(t, []int64{32, 256}, h, 32, 10), []int64{32, 256}
}

// cnn: [4, 3, 32, 32] → Conv 16 3×3 pad 1 (+ bias) → Relu → Conv 32 3×3 stride 2
// pad 1 → Relu → Flatten → Gemm 10 (the ops gonnx has).
func cnn(t testing.TB) ([]byte, []int64) {
	b := &builder{rng: rand.New(rand.NewPCG(3, 4))}
	// Conv biases are separate Adds: gonnx v1.1.0 reshapes a Conv bias in
	// place and fails on the second run.
	h := b.node("Conv", []string{"x", b.weight(16, 3, 3, 3)}, ints("pads", 1, 1, 1, 1), ints("kernel_shape", 3, 3))
	h = b.node("Add", []string{h, b.weight(1, 16, 1, 1)})
	h = b.node("Relu", []string{h})
	h = b.node("Conv", []string{h, b.weight(32, 16, 3, 3)}, ints("pads", 1, 1, 1, 1), ints("strides", 2, 2), ints("kernel_shape", 3, 3))
	h = b.node("Add", []string{h, b.weight(1, 32, 1, 1)})
	h = b.node("Relu", []string{h})
	h = b.node("Flatten", []string{h})
	h = b.node("Gemm", []string{h, b.weight(10, 32*16*16), b.weight(10)},
		&gox.AttributeProto{Name: "transB", Type: gox.AttributeProto_INT, I: 1})
	return b.model(t, []int64{4, 3, 32, 32}, h, 4, 10), []int64{4, 3, 32, 32}
}

// fallbackRunner loads the ONNX bytes on the fallback with device buffers
// bound zero-copy.
type fallbackRunner struct {
	rt *acl.Runtime
	bd *zerocopy.Binding
}

func newFallback(t testing.TB, data []byte, x []float32) *fallbackRunner {
	npu, err := fallback.New(fallback.WithDeviceMemory(1 << 30))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	dev, err := rt.OpenDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dev.LoadModel(data)
	if err != nil {
		t.Fatal(err)
	}
	bd, err := zerocopy.Bind(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bd.Close() })
	in := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(v))
	}
	if err := bd.Input(0).(*acl.DeviceBuffer).CopyFromHost(in); err != nil {
		t.Fatal(err)
	}
	return &fallbackRunner{rt: rt, bd: bd}
}

func (f *fallbackRunner) run(t testing.TB) {
	if err := f.bd.Run(); err != nil {
		t.Fatal(err)
	}
}

func (f *fallbackRunner) output(t testing.TB, n int) []float32 {
	out := make([]byte, 4*n)
	if err := f.bd.Output(0).(*acl.DeviceBuffer).CopyToHostAt(out, 0); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	return v
}

func newGonnx(t testing.TB, data []byte, dims []int64, x []float32) func() []float32 {
	m, err := gonnx.NewModelFromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		shape[i] = int(d)
	}
	name := m.InputNames()[0]
	return func() []float32 {
		in := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...)))
		out, err := m.Run(gonnx.Tensors{name: in})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out {
			return v.Data().([]float32)
		}
		return nil
	}
}

func input(dims []int64) []float32 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

var models = []struct {
	name  string
	build func(testing.TB) ([]byte, []int64)
}{{"mlp", mlp}, {"cnn", cnn}}

// TestSameOutputs: both runtimes compute the same outputs on the same
// models and inputs, so the benchmark compares equal work.
func TestSameOutputs(t *testing.T) {
	for _, md := range models {
		t.Run(md.name, func(t *testing.T) {
			data, dims := md.build(t)
			x := input(dims)
			f := newFallback(t, data, x)
			f.run(t)
			want := newGonnx(t, data, dims, x)()
			got := f.output(t, len(want))
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
					t.Fatalf("output %d: fallback %g, gonnx %g", i, got[i], want[i])
				}
			}
		})
	}
}

// BenchmarkVsGonnx runs each model on both runtimes, alternating one run
// of each per iteration so both see the same machine load; ns/op is the
// pair, and fallback_ms, gonnx_ms and x_faster (gonnx median over fallback
// median) are measured in the same run.
func BenchmarkVsGonnx(b *testing.B) {
	for _, md := range models {
		b.Run(md.name, func(b *testing.B) {
			data, dims := md.build(b)
			x := input(dims)
			f := newFallback(b, data, x)
			g := newGonnx(b, data, dims, x)
			var tf, tg []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				f.run(b)
				t1 := time.Now()
				g()
				tf, tg = append(tf, t1.Sub(t0)), append(tg, time.Since(t1))
			}
			mf, mg := median(tf), median(tg)
			b.ReportMetric(float64(mf.Microseconds())/1000, "fallback_ms")
			b.ReportMetric(float64(mg.Microseconds())/1000, "gonnx_ms")
			b.ReportMetric(float64(mg)/float64(mf), "x_faster")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
