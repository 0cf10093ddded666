package onnxcmp

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	gox "github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// graph builds an ONNX model of the kinds people export, with random
// weights (too big to commit: they are made when the benchmark runs),
// tracking every value's shape so each node's FLOPs are counted as it is
// added: 2 per multiply-add of a product (Conv, MatMul, Gemm); per output
// element 1 for an elementwise op or MaxPool, 2 for BatchNorm, 5 for
// Softmax and LayerNormalization; 1 per input element for
// GlobalAveragePool; none for Reshape, Transpose and Flatten.
type graph struct {
	rng   *rand.Rand
	nodes []*gox.NodeProto
	inits []*gox.TensorProto
	shape map[string][]int64
	flops float64
	prod  float64 // the products' share of flops
	n     int
}

func newGraph(seed uint64) *graph {
	return &graph{rng: rand.New(rand.NewPCG(seed, seed+1)), shape: map[string][]int64{}}
}

func numel(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

func (g *graph) fresh(p string) string {
	g.n++
	return fmt.Sprintf("%s_%d", p, g.n)
}

// floats adds a float32 initializer (raw little-endian data, as exporters
// write them).
func (g *graph) floats(dims []int64, v []float32) string {
	name := g.fresh("w")
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	g.inits = append(g.inits, &gox.TensorProto{Name: name, Dims: dims, DataType: 1, RawData: raw})
	g.shape[name] = dims
	return name
}

// randn adds an initializer of normal values with standard deviation sd
// around mean.
func (g *graph) randn(mean, sd float64, dims ...int64) string {
	v := make([]float32, numel(dims))
	for i := range v {
		v[i] = float32(mean + g.rng.NormFloat64()*sd)
	}
	return g.floats(dims, v)
}

// uniform adds an initializer of values uniform in [lo,hi).
func (g *graph) uniform(lo, hi float64, dims ...int64) string {
	v := make([]float32, numel(dims))
	for i := range v {
		v[i] = float32(lo + g.rng.Float64()*(hi-lo))
	}
	return g.floats(dims, v)
}

func (g *graph) scalar(v float32) string { return g.floats(nil, []float32{v}) }

func (g *graph) int64s(v ...int64) string {
	name := g.fresh("s")
	g.inits = append(g.inits, &gox.TensorProto{Name: name, Dims: []int64{int64(len(v))}, DataType: 7, Int64Data: v})
	g.shape[name] = []int64{int64(len(v))}
	return name
}

func intAttr(name string, v int64) *gox.AttributeProto {
	return &gox.AttributeProto{Name: name, Type: gox.AttributeProto_INT, I: v}
}

func floatAttr(name string, v float32) *gox.AttributeProto {
	return &gox.AttributeProto{Name: name, Type: gox.AttributeProto_FLOAT, F: v}
}

// op adds a node with output shape out and flops FLOPs (< 0: one per
// output element).
func (g *graph) op(op string, in []string, out []int64, flops float64, attrs ...*gox.AttributeProto) string {
	name := g.fresh(op)
	g.nodes = append(g.nodes, &gox.NodeProto{Name: name, OpType: op, Input: in, Output: []string{name}, Attribute: attrs})
	g.shape[name] = out
	if flops < 0 {
		flops = float64(numel(out))
	}
	g.flops += flops
	if op == "Conv" || op == "MatMul" || op == "Gemm" {
		g.prod += flops
	}
	return name
}

// elem adds an elementwise op whose output has the shape of its first
// input.
func (g *graph) elem(op string, in ...string) string {
	return g.op(op, in, g.shape[in[0]], -1)
}

// conv adds a Conv of m k×k filters with stride s and padding k/2, no
// bias (a BatchNormalization follows).
func (g *graph) conv(x string, m, k, s int64) string {
	d := g.shape[x]
	c := d[1]
	p := k / 2
	oh, ow := (d[2]+2*p-k)/s+1, (d[3]+2*p-k)/s+1
	w := g.randn(0, math.Sqrt(2/float64(c*k*k)), m, c, k, k)
	out := []int64{d[0], m, oh, ow}
	return g.op("Conv", []string{x, w}, out, 2*float64(numel(out)*c*k*k),
		ints("kernel_shape", k, k), ints("strides", s, s), ints("pads", p, p, p, p))
}

func (g *graph) batchNorm(x string) string {
	c := g.shape[x][1]
	return g.op("BatchNormalization", []string{x, g.uniform(0.5, 1, c), g.randn(0, 0.1, c), g.randn(0, 0.1, c), g.uniform(0.5, 1.5, c)},
		g.shape[x], 2*float64(numel(g.shape[x])), floatAttr("epsilon", 1e-5))
}

// gemm adds Gemm(x, Wᵀ, b) as PyTorch exports nn.Linear on a matrix.
func (g *graph) gemm(x string, n int64) string {
	d := g.shape[x]
	w := g.randn(0, 1/math.Sqrt(float64(d[1])), n, d[1])
	return g.op("Gemm", []string{x, w, g.randn(0, 0.1, n)}, []int64{d[0], n}, 2*float64(d[0]*d[1]*n), intAttr("transB", 1))
}

// linear adds MatMul(x, W) + b as PyTorch exports nn.Linear on a
// sequence.
func (g *graph) linear(x string, n int64) string {
	d := g.shape[x]
	k := d[len(d)-1]
	out := append(append([]int64(nil), d[:len(d)-1]...), n)
	y := g.op("MatMul", []string{x, g.randn(0, 1/math.Sqrt(float64(k)), k, n)}, out, 2*float64(numel(out)*k))
	return g.elem("Add", y, g.randn(0, 0.1, n))
}

// matmul adds a batched MatMul of [..., m, k] by [..., k, n].
func (g *graph) matmul(a, b string) string {
	da, db := g.shape[a], g.shape[b]
	out := append(append([]int64(nil), da[:len(da)-1]...), db[len(db)-1])
	return g.op("MatMul", []string{a, b}, out, 2*float64(numel(out)*da[len(da)-1]))
}

func (g *graph) reshape(x string, dims ...int64) string {
	return g.op("Reshape", []string{x, g.int64s(dims...)}, dims, 0)
}

func (g *graph) transpose(x string, perm ...int64) string {
	d := g.shape[x]
	out := make([]int64, len(perm))
	for i, p := range perm {
		out[i] = d[p]
	}
	return g.op("Transpose", []string{x}, out, 0, ints("perm", perm...))
}

func (g *graph) layerNorm(x string) string {
	d := g.shape[x]
	c := d[len(d)-1]
	return g.op("LayerNormalization", []string{x, g.uniform(0.5, 1.5, c), g.randn(0, 0.1, c)}, d, 5*float64(numel(d)),
		intAttr("axis", -1), floatAttr("epsilon", 1e-5))
}

// gelu is the exact GELU as torch.onnx exports it below opset 20:
// x·0.5·(1 + erf(x/√2)).
func (g *graph) gelu(x string) string {
	e := g.elem("Erf", g.elem("Div", x, g.scalar(math.Sqrt2)))
	return g.elem("Mul", g.elem("Mul", x, g.elem("Add", e, g.scalar(1))), g.scalar(0.5))
}

// bigModel is one benchmark model: its name, input shape and builder.
type bigModel struct {
	name  string
	input []int64
	build func(g *graph, x string) string
	opset int64
}

var bigModels = []bigModel{
	{"resnet18_224", []int64{1, 3, 224, 224}, resNet18, 13},
	{"bert_seq256_d512_2layers", []int64{1, 256, 512}, encoder(2, 8, 2048), 17},
	{"mlp_b128_1024_2048x3", []int64{128, 1024}, mlpWide, 13},
}

// resNet18 is torchvision's resnet18 (BatchNorm kept, not folded): a 7×7
// stem, max pooling, four stages of two basic blocks (3×3 convolutions,
// 1×1 projection shortcuts where the shape changes, residual Add), global
// average pooling and the 1000-way classifier. 3.6 GFLOP at 224×224.
func resNet18(g *graph, x string) string {
	h := g.elem("Relu", g.batchNorm(g.conv(x, 64, 7, 2)))
	d := g.shape[h]
	h = g.op("MaxPool", []string{h}, []int64{d[0], d[1], d[2] / 2, d[3] / 2}, -1,
		ints("kernel_shape", 3, 3), ints("strides", 2, 2), ints("pads", 1, 1, 1, 1))
	for stage, ch := range []int64{64, 128, 256, 512} {
		for blk := range 2 {
			s := int64(1)
			if stage > 0 && blk == 0 {
				s = 2
			}
			id := h
			y := g.elem("Relu", g.batchNorm(g.conv(h, ch, 3, s)))
			y = g.batchNorm(g.conv(y, ch, 3, 1))
			if s != 1 || g.shape[h][1] != ch {
				id = g.batchNorm(g.conv(h, ch, 1, s))
			}
			h = g.elem("Relu", g.elem("Add", y, id))
		}
	}
	d = g.shape[h]
	h = g.op("GlobalAveragePool", []string{h}, []int64{d[0], d[1], 1, 1}, float64(numel(d)))
	h = g.op("Flatten", []string{h}, []int64{d[0], d[1]}, 0)
	return g.gemm(h, 1000)
}

// encoder is a BERT-style post-norm transformer encoder of the given
// layers, heads and feed-forward width on [1, seq, d] embeddings:
// per layer Q/K/V projections, heads split by Reshape and Transpose,
// scaled dot-product attention (MatMul, Div, Softmax, MatMul), output
// projection, residual Add and LayerNormalization, then a GELU (erf)
// feed-forward with its residual and LayerNormalization.
func encoder(layers int, heads, ffn int64) func(*graph, string) string {
	return func(g *graph, h string) string {
		d := g.shape[h]
		seq, dm := d[1], d[2]
		dh := dm / heads
		for range layers {
			split := func(x string, perm ...int64) string {
				return g.transpose(g.reshape(x, 1, seq, heads, dh), perm...)
			}
			q := split(g.linear(h, dm), 0, 2, 1, 3)
			k := split(g.linear(h, dm), 0, 2, 3, 1)
			v := split(g.linear(h, dm), 0, 2, 1, 3)
			s := g.elem("Div", g.matmul(q, k), g.scalar(float32(math.Sqrt(float64(dh)))))
			s = g.op("Softmax", []string{s}, g.shape[s], 5*float64(numel(g.shape[s])), intAttr("axis", -1))
			o := g.reshape(g.transpose(g.matmul(s, v), 0, 2, 1, 3), 1, seq, dm)
			h = g.layerNorm(g.elem("Add", g.linear(o, dm), h))
			f := g.linear(g.gelu(g.linear(h, ffn)), dm)
			h = g.layerNorm(g.elem("Add", f, h))
		}
		return h
	}
}

// mlpWide is a multilayer perceptron on a batch of 128: 1024 → 2048 →
// 2048 → 2048 → 1000, Relu between (Gemm with transB, as PyTorch exports
// nn.Linear). 3.2 GFLOP.
func mlpWide(g *graph, x string) string {
	h := x
	for range 3 {
		h = g.elem("Relu", g.gemm(h, 2048))
	}
	return g.gemm(h, 1000)
}

// writeBig builds m, writes it and a random input (.npy, for ONNX Runtime)
// into dir and returns the case, the graph (FLOPs, shapes) and the
// output's name.
func writeBig(m bigModel, dir string) (ortCase, *graph, string, error) {
	g := newGraph(uint64(len(m.name)))
	g.shape["x"] = m.input
	out := m.build(g, "x")
	model := &gox.ModelProto{IrVersion: 8, OpsetImport: []*gox.OperatorSetIdProto{{Version: m.opset}},
		Graph: &gox.GraphProto{Name: m.name, Node: g.nodes, Initializer: g.inits,
			Input: []*gox.ValueInfoProto{vi("x", m.input...)}, Output: []*gox.ValueInfoProto{vi(out, g.shape[out]...)}}}
	data, err := proto.Marshal(model)
	if err != nil {
		return ortCase{}, nil, "", err
	}
	c := ortCase{name: m.name, model: filepath.Join(dir, m.name+".onnx")}
	if err := os.WriteFile(c.model, data, 0o644); err != nil {
		return ortCase{}, nil, "", err
	}
	in := ortInput{name: "x", dtype: "float32", dims: m.input, file: filepath.Join(dir, m.name+"_x.npy")}
	for _, v := range input(m.input) {
		in.data = binary.LittleEndian.AppendUint32(in.data, math.Float32bits(v))
	}
	if err := os.WriteFile(in.file, npyBytes(in), 0o644); err != nil {
		return ortCase{}, nil, "", err
	}
	c.inputs = []ortInput{in}
	return c, g, out, nil
}
