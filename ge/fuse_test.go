package ge_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/sgemm"
)

// fuseTol is the bound a fusion that rounds differently from the unfused
// graph (BatchNorm folding, vmath activations, a scale over several K
// blocks) is held to against the float64 reference: every element within
// fuseTol·|want| + fuseTol·rms(want). The unfused graph meets 4e-5 too.
const fuseTol = 4e-5

// fusion is one compile of a graph with and without the pass, run on the
// same random inputs.
type fusion struct {
	fused, plain       *ge.CompiledModel
	fusedOut, plainOut [][]byte
	ref                []refVal
}

func runFusion(t *testing.T, r *rand.Rand, g *ge.Graph, opts ...ge.CompileOption) *fusion {
	t.Helper()
	require.NoError(t, g.Err())
	in := graphInputs(r, g)
	f := &fusion{ref: refEval(t, g, in)}
	var err error
	f.fused, err = ge.Compile(g, opts...)
	require.NoError(t, err)
	f.fusedOut = runModel(t, f.fused, in)
	f.plain, err = ge.Compile(g, ge.WithoutFusion())
	require.NoError(t, err)
	require.NoError(t, getest.CheckModel(f.plain))
	f.plainOut, err = getest.Run(f.plain, in)
	require.NoError(t, err)
	// Fusion never changes the model's interface.
	require.Equal(t, len(f.plain.Inputs), len(f.fused.Inputs))
	require.Equal(t, len(f.plain.Outputs), len(f.fused.Outputs))
	for i := range f.plain.Outputs {
		assert.Equal(t, f.plain.Outputs[i].Name, f.fused.Outputs[i].Name)
		assert.Equal(t, f.plain.Outputs[i].Dims, f.fused.Outputs[i].Dims)
		assert.Equal(t, f.plain.Outputs[i].DataType, f.fused.Outputs[i].DataType)
		assert.Equal(t, f.plain.Outputs[i].ZeroCopy, f.fused.Outputs[i].ZeroCopy)
	}
	// The fused tasks run in the unfused graph's order (a fused task has
	// the name of its pattern's last node).
	var pos []int
	at := map[string]int{}
	for i, tk := range f.plain.Tasks {
		at[tk.Name] = i
	}
	for _, tk := range f.fused.Tasks {
		if i, ok := at[tk.Name]; ok {
			pos = append(pos, i)
		}
	}
	require.True(t, slices.IsSorted(pos), "fused task order %v", pos)
	// The fused model survives the file format.
	blob, err := f.fused.MarshalBinary()
	require.NoError(t, err)
	parsed, err := ge.ParseModel(blob)
	require.NoError(t, err)
	require.Equal(t, taskOps(f.fused), taskOps(parsed))
	return f
}

// runModel runs m as runGraph does: the plan proven, then the outputs of
// an arena run and of a zero-copy run, which must agree.
func runModel(t *testing.T, m *ge.CompiledModel, in [][]byte) [][]byte {
	t.Helper()
	require.NoError(t, getest.CheckModel(m))
	out, err := getest.Run(m, in)
	require.NoError(t, err)
	zc := make([][]byte, len(m.Outputs))
	for i, d := range m.Outputs {
		zc[i] = bytes.Repeat([]byte{getest.Poison}, int(d.Size))
	}
	copies, err := getest.RunZeroCopy(m, in, zc)
	require.NoError(t, err)
	require.Zero(t, copies)
	for i := range out {
		require.Equal(t, out[i], zc[i], "output %d differs between arena and zero-copy runs", i)
	}
	return out
}

// close checks both models against the float64 reference.
func (f *fusion) close(t *testing.T, tol float64) {
	t.Helper()
	for i := range f.ref {
		requireClose(t, f.ref[i], f.plainOut[i], tol, "unfused")
		requireClose(t, f.ref[i], f.fusedOut[i], tol, "fused")
	}
}

// same checks that the fused model's outputs are the unfused model's, bit
// for bit.
func (f *fusion) same(t *testing.T) {
	t.Helper()
	for i := range f.plainOut {
		require.Equal(t, f.plainOut[i], f.fusedOut[i], "output %d", i)
	}
}

func countOps(m *ge.CompiledModel) map[ge.OpType]int {
	c := map[ge.OpType]int{}
	for _, t := range m.Tasks {
		c[t.Op]++
	}
	return c
}

func constRand(g *ge.Graph, r *rand.Rand, name string, sd float64, dims ...int64) *ge.Tensor {
	return g.ConstFloat32(name, acl.Float32, dims, getest.RandFloats(r, numel(dims), sd))
}

// activation applies one of the epilogue activations.
type activation struct {
	name  string
	exact bool // the epilogue computes what the op's own kernel computes
	apply func(g *ge.Graph, x *ge.Tensor) *ge.Tensor
}

var activations = []activation{
	{"none", true, func(_ *ge.Graph, x *ge.Tensor) *ge.Tensor { return x }},
	{"relu", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Relu(x) }},
	{"leaky_relu", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.LeakyRelu(x, 0.2) }},
	{"relu6", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { lo, hi := 0.0, 6.0; return g.Clip(x, &lo, &hi) }},
	{"clip_hi", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { hi := 0.5; return g.Clip(x, nil, &hi) }},
	{"gelu", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Gelu(x) }},
	{"silu", true, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Silu(x) }},
	{"sigmoid", false, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Unary(ge.OpSigmoid, x) }},
	{"tanh", false, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Unary(ge.OpTanh, x) }},
	{"hard_sigmoid", false, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor {
		return g.AddOp(ge.OpHardSigmoid, []*ge.Tensor{x}, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.3), ge.AttrBeta: ge.FloatAttr(0.4)}).Output(0)
	}},
	{"hard_swish", false, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Unary(ge.OpHardSwish, x) }},
	{"gelu_erf", false, func(g *ge.Graph, x *ge.Tensor) *ge.Tensor { return g.Unary(ge.OpGeluErf, x) }},
}

// MatMul → Add(bias) → activation becomes one FusedMatMul task, for every
// activation, bias layout and operand order, on shapes that take sgemm's
// small, short and blocked paths (K over one block included) and a batched
// product; bit-identical to the unfused graph where the epilogue runs the
// op's own arithmetic, within fuseTol of float64 everywhere.
func TestFuseMatMulBiasActivation(t *testing.T) {
	r := newRand(t)
	shapes := [][]int64{{3, 5, 4}, {8, 96, 80}, {150, 300, 70}, {2, 7, 40, 33}}
	for _, act := range activations {
		for si, s := range shapes {
			a, k, n := s[:len(s)-2], s[len(s)-2], s[len(s)-1]
			g := ge.NewGraph("fc")
			x := g.Data("x", 0, acl.Float32, append(append([]int64{}, a...), k))
			w := constRand(g, r, "w", 1/math.Sqrt(float64(k)), k, n)
			bdims := []int64{n}
			if si%2 == 1 {
				bdims = []int64{1, n}
			}
			var h *ge.Tensor
			if si == 2 { // the bias as a model input, first operand
				h = g.Add(g.Data("b", 1, acl.Float32, bdims), g.MatMul(x, w))
			} else {
				h = g.Add(g.MatMul(x, w), constRand(g, r, "b", 1, bdims...))
			}
			g.Output(act.apply(g, h))
			f := runFusion(t, r, g)
			assert.Equal(t, map[ge.OpType]int{ge.OpFusedMatMul: 1}, countOps(f.fused), "%s %v", act.name, s)
			assert.Greater(t, len(f.plain.Tasks), 1)
			f.close(t, fuseTol)
			if act.exact {
				f.same(t)
			}
		}
	}
}

// MatMul → Mul(constant scalar) takes the scale as the GEMM's alpha:
// bit-identical while K fits one block of 256, within fuseTol beyond.
func TestFuseMatMulScale(t *testing.T) {
	r := newRand(t)
	for _, k := range []int64{16, 200, 700} {
		g := ge.NewGraph("scores")
		q := g.Data("q", 0, acl.Float32, []int64{2, 24, k})
		kt := g.Data("k", 1, acl.Float32, []int64{2, 31, k})
		scale := g.ConstFloat32("scale", acl.Float32, []int64{1}, []float32{float32(1 / math.Sqrt(float64(k)))})
		sc := g.Mul(scale, g.MatMul(q, kt, ge.TransposeB()))
		g.Output(g.Softmax(sc, -1))
		f := runFusion(t, r, g)
		assert.Equal(t, map[ge.OpType]int{ge.OpFusedMatMul: 1, ge.OpSoftmax: 1}, countOps(f.fused))
		f.close(t, fuseTol)
		if k <= 256 {
			f.same(t)
		}
	}
}

// Conv (with or without bias) → BatchNorm → activation becomes one
// FusedConv; MatMul (plain, transposed weights, or with a Gemm bias) →
// BatchNorm on [M, N] becomes one FusedMatMul. Folding rounds the scaled
// weights once, so the results are held to fuseTol of float64.
func TestFuseBatchNorm(t *testing.T) {
	r := newRand(t)
	bn := func(g *ge.Graph, x *ge.Tensor, c int64) *ge.Tensor {
		vr := getest.RandFloats(r, int(c), 1)
		for i := range vr {
			vr[i] = vr[i]*vr[i] + 0.1
		}
		return g.BatchNorm(x, constRand(g, r, "scale", 1, c), constRand(g, r, "shift", 1, c), constRand(g, r, "mean", 0.5, c),
			g.ConstFloat32("var", acl.Float32, []int64{c}, vr), 1e-3)
	}
	for _, c := range []struct {
		name   string
		groups int64
		bias   bool
		act    activation
		attrs  ge.Attrs
	}{
		{"plain", 1, false, activations[0], nil},
		{"bias_relu", 1, true, activations[1], ge.Attrs{ge.AttrPads: ge.IntsAttr([]int64{1, 1, 1, 1})}},
		{"strided_relu6", 1, true, activations[3], ge.Attrs{ge.AttrStrides: ge.IntsAttr([]int64{2, 2}), ge.AttrPads: ge.IntsAttr([]int64{1, 0, 1, 2})}},
		{"grouped_silu", 2, false, activations[6], ge.Attrs{ge.AttrGroups: ge.IntAttr(2), ge.AttrDilations: ge.IntsAttr([]int64{2, 1})}},
	} {
		t.Run("conv/"+c.name, func(t *testing.T) {
			g := ge.NewGraph("conv_bn")
			x := g.Data("x", 0, acl.Float32, []int64{2, 6, 11, 9})
			w := constRand(g, r, "w", 0.3, 8, 6/c.groups, 3, 3)
			var b *ge.Tensor
			if c.bias {
				b = constRand(g, r, "b", 1, 8)
			}
			var opts []ge.OpOption
			for k, v := range c.attrs {
				opts = append(opts, ge.WithAttr(k, v))
			}
			g.Output(c.act.apply(g, bn(g, g.Conv(x, w, b, opts...), 8)))
			f := runFusion(t, r, g)
			want := ge.OpFusedConv
			if c.act.name == "none" {
				want = ge.OpConv // the folded weights and bias, no activation
			}
			assert.Equal(t, map[ge.OpType]int{want: 1}, countOps(f.fused))
			f.close(t, fuseTol)
		})
	}
	for _, c := range []struct {
		name    string
		transB  bool
		gemmAdd bool
	}{{"matmul", false, false}, {"transposed", true, false}, {"gemm_bias", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph("fc_bn")
			x := g.Data("x", 0, acl.Float32, []int64{13, 40})
			var h *ge.Tensor
			if c.transB {
				h = g.MatMul(x, constRand(g, r, "w", 0.2, 24, 40), ge.TransposeB())
			} else {
				h = g.MatMul(x, constRand(g, r, "w", 0.2, 40, 24))
			}
			if c.gemmAdd {
				h = g.Add(h, constRand(g, r, "b", 1, 24))
			}
			g.Output(g.Relu(bn(g, h, 24)))
			f := runFusion(t, r, g)
			assert.Equal(t, map[ge.OpType]int{ge.OpFusedMatMul: 1}, countOps(f.fused))
			f.close(t, fuseTol)
		})
	}
}

// Chains of element-wise ops become one ElemChain task: the erf form of
// GELU as exporters write it, and arithmetic with a scalar, a bias row, a
// full tensor and swapped operands. Arithmetic and Relu chains are
// bit-identical to the unfused graph; chains through vmath's Erf, Exp,
// Tanh or Sigmoid are within fuseTol of float64.
func TestFuseElementwiseChain(t *testing.T) {
	r := newRand(t)
	for _, large := range []bool{false, true} {
		dims := []int64{3, 5, 40}
		if large { // split over threads, with a partial last block
			dims = []int64{7, 100, 51}
		}
		g := ge.NewGraph("gelu_erf")
		x := g.Relu(g.Data("x", 0, acl.Float32, dims)) // a task, so the chain's input is not a model input
		half := g.ConstFloat32("half", acl.Float32, []int64{1}, []float32{0.5})
		one := g.ConstFloat32("one", acl.Float32, []int64{1}, []float32{1})
		sqrt2 := g.ConstFloat32("sqrt2", acl.Float32, []int64{1}, []float32{math.Sqrt2})
		e := g.Unary(ge.OpErf, g.Div(x, sqrt2))
		y := g.Mul(g.Mul(x, g.Add(e, one)), half)
		g.Output(y)
		f := runFusion(t, r, g)
		assert.Equal(t, map[ge.OpType]int{ge.OpRelu: 1, ge.OpElemChain: 1}, countOps(f.fused))
		f.close(t, fuseTol)
	}

	g := ge.NewGraph("arith")
	x := g.Data("x", 0, acl.Float32, []int64{4, 6, 33})
	full := g.Data("full", 1, acl.Float32, []int64{4, 6, 33})
	row := constRand(g, r, "row", 1, 33)
	plane := constRand(g, r, "plane", 1, 1, 6, 33)
	two := g.ConstFloat32("two", acl.Float32, []int64{1}, []float32{2})
	h := g.Sub(row, g.Relu(x))         // swapped operand
	h = g.Div(g.Mul(h, plane), two)    // trailing [1,6,33] and a scalar
	h = g.Add(full, g.Div(plane, h))   // swapped division, then a full tensor
	h = g.Unary(ge.OpNeg, g.Silu(h))   // vmath Silu, Neg
	h = g.Mul(g.Gelu(h), g.Relu(full)) // an operand computed elsewhere
	g.Output(h)
	f := runFusion(t, r, g)
	// Relu(x) heads the chain; Relu(full) stays a task (full is also read
	// by the chain, so its Relu is an operand, not a step).
	assert.Equal(t, map[ge.OpType]int{ge.OpRelu: 1, ge.OpElemChain: 1}, countOps(f.fused))
	f.close(t, fuseTol)
	f.same(t)
}

// Identity, same-dims Reshape, same-type Cast and a lossless Cast pair
// cost no task after fusion; a lossy pair stays.
func TestFuseSimplify(t *testing.T) {
	r := newRand(t)
	g := ge.NewGraph("noops")
	x := g.Data("x", 0, acl.Float16, []int64{4, 8})
	y := g.Cast(g.Cast(x, acl.Float32), acl.Float16) // f16 → f32 → f16: x itself
	y = g.Identity(g.Reshape(y, []int64{4, 8}))
	z := g.Data("z", 1, acl.Float32, []int64{4, 8})
	lossy := g.Cast(g.Cast(z, acl.Float16), acl.Float32) // f32 → f16 → f32 rounds
	same := g.Cast(lossy, acl.Float32)
	g.Output(g.Add(y, y), g.Relu(same))
	f := runFusion(t, r, g)
	assert.Equal(t, map[ge.OpType]int{ge.OpAdd: 1, ge.OpCast: 2, ge.OpRelu: 1}, countOps(f.fused))
	assert.Equal(t, 5, countOps(f.plain)[ge.OpCast], "unfused: the pairs and the same-type Cast")
	f.same(t)
}

// Fusion must not fire where it would change what the model computes or
// exposes (pre-packing, which fires on any constant weights, aside).
func TestFuseDoesNotFire(t *testing.T) {
	r := newRand(t)
	t.Run("conv_output_read_twice", func(t *testing.T) {
		g := ge.NewGraph("g")
		y := g.Conv(g.Data("x", 0, acl.Float32, []int64{1, 3, 6, 6}), constRand(g, r, "w", 1, 4, 3, 3, 3), nil)
		n := g.BatchNorm(y, constRand(g, r, "s", 1, 4), constRand(g, r, "b", 1, 4), constRand(g, r, "m", 1, 4),
			g.ConstFloat32("v", acl.Float32, []int64{4}, []float32{1, 2, 3, 4}), 1e-5)
		g.Output(n, g.Unary(ge.OpTanh, y))
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpConv: 1, ge.OpBatchNorm: 1, ge.OpTanh: 1}, countOps(f.fused))
		f.same(t)
	})
	t.Run("relu_input_is_model_output", func(t *testing.T) {
		g := ge.NewGraph("g")
		h := g.MatMul(g.Data("x", 0, acl.Float32, []int64{5, 7}), constRand(g, r, "w", 1, 7, 3))
		g.Output(g.Relu(h), h)
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpRelu: 1}, countOps(f.fused))
		f.same(t)
	})
	t.Run("weights_not_constant", func(t *testing.T) {
		g := ge.NewGraph("g")
		x := g.Data("x", 0, acl.Float32, []int64{1, 3, 6, 6})
		w := g.Data("w", 1, acl.Float32, []int64{4, 3, 3, 3})
		n := g.BatchNorm(g.Conv(x, w, nil), constRand(g, r, "s", 1, 4), constRand(g, r, "b", 1, 4), constRand(g, r, "m", 1, 4),
			g.ConstFloat32("v", acl.Float32, []int64{4}, []float32{1, 2, 3, 4}), 1e-5)
		g.Output(n)
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpConv: 1, ge.OpBatchNorm: 1}, countOps(f.fused))
		f.same(t)
	})
	t.Run("batchnorm_stats_not_constant", func(t *testing.T) {
		g := ge.NewGraph("g")
		h := g.MatMul(g.Data("x", 0, acl.Float32, []int64{5, 4}), constRand(g, r, "w", 1, 4, 4))
		n := g.BatchNorm(h, constRand(g, r, "s", 1, 4), constRand(g, r, "b", 1, 4), g.Data("m", 1, acl.Float32, []int64{4}),
			g.ConstFloat32("v", acl.Float32, []int64{4}, []float32{1, 2, 3, 4}), 1e-5)
		g.Output(n)
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpBatchNorm: 1}, countOps(f.fused))
	})
	t.Run("no_zero_copy_node", func(t *testing.T) {
		g := ge.NewGraph("g")
		h := g.MatMul(g.Data("x", 0, acl.Float32, []int64{5, 7}), constRand(g, r, "w", 1, 7, 3), ge.NoZeroCopy())
		g.Output(g.Relu(h))
		m, err := ge.Compile(g, ge.WithoutPrepack())
		require.NoError(t, err)
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpRelu: 1}, countOps(m))
		g2 := ge.NewGraph("g")
		h = g2.MatMul(g2.Data("x", 0, acl.Float32, []int64{5, 7}), constRand(g2, r, "w", 1, 7, 3), ge.Name("mm"))
		g2.Output(g2.Relu(h))
		m, err = ge.Compile(g2, ge.NoZeroCopyOps("mm"), ge.WithoutPrepack())
		require.NoError(t, err)
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpRelu: 1}, countOps(m))
	})
	t.Run("half_precision", func(t *testing.T) {
		g := ge.NewGraph("g")
		w := g.ConstFloat32("w", acl.Float16, []int64{7, 3}, getest.RandFloats(r, 21, 1))
		h := g.MatMul(g.Data("x", 0, acl.Float16, []int64{5, 7}), w)
		g.Output(g.Relu(h))
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpRelu: 1}, countOps(f.fused))
	})
	t.Run("bias_not_a_row", func(t *testing.T) {
		g := ge.NewGraph("g")
		h := g.MatMul(g.Data("x", 0, acl.Float32, []int64{5, 7}), constRand(g, r, "w", 1, 7, 3))
		g.Output(g.Add(h, constRand(g, r, "col", 1, 5, 1)))
		f := runFusion(t, r, g, ge.WithoutPrepack())
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1, ge.OpAdd: 1}, countOps(f.fused))
	})
}

// Compile never changes the caller's graph, and compiling the fused
// graph again gives the same model.
func TestFuseLeavesGraphAlone(t *testing.T) {
	r := newRand(t)
	g := getest.MLP(r, acl.Float32, 4, 16, 32, 8)
	before := len(g.Nodes())
	var ops []ge.OpType
	for _, n := range g.Nodes() {
		ops = append(ops, n.Op())
	}
	m1, err := ge.Compile(g)
	require.NoError(t, err)
	m2, err := ge.Compile(g)
	require.NoError(t, err)
	require.Len(t, g.Nodes(), before)
	for i, n := range g.Nodes() {
		require.Equal(t, ops[i], n.Op())
	}
	b1, err := m1.MarshalBinary()
	require.NoError(t, err)
	b2, err := m2.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b1, b2)
}

// The fused ops refuse what they cannot compute.
func TestFusedOpsRejectBadAttrs(t *testing.T) {
	f32 := func(d ...int64) ge.TensorDesc {
		return ge.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: d}
	}
	for _, c := range []struct {
		name string
		op   ge.OpType
		in   []ge.TensorDesc
		a    ge.Attrs
	}{
		{"activation_softmax", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(3, 4)}, ge.Attrs{ge.AttrActivation: ge.IntAttr(int64(ge.OpSoftmax))}},
		{"bias_shape", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(3, 4), f32(2)}, nil},
		{"scale_zero", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(3, 4)}, ge.Attrs{ge.AttrScale: ge.FloatAttr(0)}},
		{"conv_activation", ge.OpFusedConv, []ge.TensorDesc{f32(1, 2, 4, 4), f32(3, 2, 3, 3)}, ge.Attrs{ge.AttrActivation: ge.IntAttr(9999)}},
		{"activation_wraps", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(3, 4)}, ge.Attrs{ge.AttrActivation: ge.IntAttr(1<<16 + int64(ge.OpRelu))}},
		{"packed_width", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(96)}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(33), ge.AttrPackedN: ge.IntAttr(4)}},
		{"packed_length", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(95)}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(32), ge.AttrPackedN: ge.IntAttr(4)}},
		{"packed_transposed", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(96)}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(32), ge.AttrPackedN: ge.IntAttr(4), ge.AttrTransposeB: ge.BoolAttr(true)}},
		{"packed_no_n", ge.OpFusedMatMul, []ge.TensorDesc{f32(2, 3), f32(96)}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(32)}},
		{"chain_empty", ge.OpElemChain, []ge.TensorDesc{f32(2, 3)}, nil},
		{"chain_op", ge.OpElemChain, []ge.TensorDesc{f32(2, 3)}, ge.Attrs{ge.AttrChainOps: ge.IntsAttr([]int64{int64(ge.OpSoftmax)}),
			ge.AttrChainArgs: ge.IntsAttr([]int64{-1}), ge.AttrChainSwap: ge.IntsAttr([]int64{0})}},
		{"chain_operand", ge.OpElemChain, []ge.TensorDesc{f32(2, 3)}, ge.Attrs{ge.AttrChainOps: ge.IntsAttr([]int64{int64(ge.OpAdd)}),
			ge.AttrChainArgs: ge.IntsAttr([]int64{1}), ge.AttrChainSwap: ge.IntsAttr([]int64{0})}},
		{"chain_broadcast", ge.OpElemChain, []ge.TensorDesc{f32(2, 3), f32(2, 1)}, ge.Attrs{ge.AttrChainOps: ge.IntsAttr([]int64{int64(ge.OpAdd)}),
			ge.AttrChainArgs: ge.IntsAttr([]int64{1}), ge.AttrChainSwap: ge.IntsAttr([]int64{0})}},
		{"chain_half", ge.OpElemChain, []ge.TensorDesc{{DataType: acl.Float16, Format: acl.FormatND, Dims: []int64{2}}}, ge.Attrs{ge.AttrChainOps: ge.IntsAttr([]int64{int64(ge.OpRelu)}),
			ge.AttrChainArgs: ge.IntsAttr([]int64{-1}), ge.AttrChainSwap: ge.IntsAttr([]int64{0})}},
	} {
		_, err := ge.InferOp(c.op, c.a, c.in)
		assert.Error(t, err, c.name)
	}
	// The packed case that is right.
	_, err := ge.InferOp(ge.OpFusedMatMul, ge.Attrs{ge.AttrPackedB: ge.IntAttr(32), ge.AttrPackedN: ge.IntAttr(4)}, []ge.TensorDesc{f32(2, 3), f32(96)})
	assert.NoError(t, err)
}

// x · HardSigmoid(x) with alpha 1/6 (as float32, how exporters store it)
// and beta 1/2 is HardSwish, which then fuses into the Conv before it;
// with another alpha it is left alone.
func TestFuseHardSwish(t *testing.T) {
	r := newRand(t)
	for _, alpha := range []float64{float64(float32(1.0 / 6)), 0.2} {
		g := ge.NewGraph("hswish")
		x := g.Conv(g.Data("x", 0, acl.Float32, []int64{2, 4, 9, 9}), constRand(g, r, "w", 1, 8, 4, 3, 3), constRand(g, r, "b", 1, 8))
		hs := g.AddOp(ge.OpHardSigmoid, []*ge.Tensor{x}, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(alpha), ge.AttrBeta: ge.FloatAttr(0.5)}).Output(0)
		g.Output(g.Mul(hs, x))
		f := runFusion(t, r, g)
		if alpha != 0.2 {
			assert.Equal(t, map[ge.OpType]int{ge.OpFusedConv: 1}, countOps(f.fused))
		} else {
			assert.Equal(t, map[ge.OpType]int{ge.OpConv: 1, ge.OpHardSigmoid: 1, ge.OpMul: 1}, countOps(f.fused))
			f.same(t)
		}
		f.close(t, fuseTol)
	}
}

// Constant MatMul weights are packed once at compile time, for this
// machine's GEMM panel width: plain, transposed, under a batched A, with
// a bias and activation, over several K blocks, with N not a multiple of
// the width; the products are bit-identical to the unpacked ones. Data
// weights are not packed; neither is a model without fusion.
func TestFusePrepack(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name   string
		a      []int64
		k, n   int64
		transB bool
		bias   bool
	}{
		{"plain", []int64{3}, 40, 33, false, false},
		{"transposed", []int64{2}, 300, 70, true, false},
		{"batched_bias_relu", []int64{2, 5}, 70, 100, false, true},
		{"wide", []int64{130}, 600, 2100, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph("packed")
			x := g.Data("x", 0, acl.Float32, append(append([]int64{}, c.a...), c.k))
			var h *ge.Tensor
			if c.transB {
				h = g.MatMul(x, constRand(g, r, "w", 0.1, c.n, c.k), ge.TransposeB())
			} else {
				h = g.MatMul(x, constRand(g, r, "w", 0.1, c.k, c.n))
			}
			if c.bias {
				h = g.Relu(g.Add(h, constRand(g, r, "b", 1, c.n)))
			}
			g.Output(h)
			f := runFusion(t, r, g)
			require.Len(t, f.fused.Tasks, 1)
			task := f.fused.Tasks[0]
			assert.Equal(t, ge.OpFusedMatMul, task.Op)
			assert.Equal(t, int64(sgemm.PanelWidth()), task.Attrs.Int(ge.AttrPackedB, 0))
			assert.Equal(t, c.n, task.Attrs.Int(ge.AttrPackedN, 0))
			assert.Equal(t, []int64{int64(sgemm.PackedSize(int(c.k), int(c.n), sgemm.PanelWidth()))}, task.Inputs[1].Dims)
			f.same(t)
			f.close(t, fuseTol)
			unpacked, err := ge.Compile(g, ge.WithoutPrepack())
			require.NoError(t, err)
			assert.Zero(t, unpacked.Tasks[0].Attrs.Int(ge.AttrPackedB, 0))
		})
	}
	t.Run("data_weights", func(t *testing.T) {
		g := ge.NewGraph("g")
		g.Output(g.MatMul(g.Data("x", 0, acl.Float32, []int64{3, 4}), g.Data("w", 1, acl.Float32, []int64{4, 5})))
		f := runFusion(t, r, g)
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1}, countOps(f.fused))
	})
}

// A model packed on a machine whose GEMM kernel has another panel width
// runs there too (the kernel re-packs from the packed copy), with the same
// numbers; a packed B of the wrong length is refused.
func TestPackedWeightsOfAnotherWidth(t *testing.T) {
	r := newRand(t)
	const m, k, n = 7, 300, 45
	w := getest.RandFloats(r, k*n, 0.1)
	for _, nr := range []int{5, 8, 16, 32} {
		packed := make([]float32, sgemm.PackedSize(k, n, nr))
		require.NoError(t, sgemm.PackB(packed, sgemm.Matrix{F32: w, Stride: n}, k, n, nr))
		g := ge.NewGraph("g")
		x := g.Data("x", 0, acl.Float32, []int64{m, k})
		pb := g.ConstFloat32("wp", acl.Float32, []int64{int64(len(packed))}, packed)
		y := g.AddOp(ge.OpFusedMatMul, []*ge.Tensor{x, pb}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(int64(nr)), ge.AttrPackedN: ge.IntAttr(n)}).Output(0)
		g.Output(y)
		require.NoError(t, g.Err())
		ref := ge.NewGraph("g")
		ref.Output(ref.MatMul(ref.Data("x", 0, acl.Float32, []int64{m, k}), ref.ConstFloat32("w", acl.Float32, []int64{k, n}, w)))
		in := graphInputs(r, g)
		got := runModel(t, mustCompile(t, g), in)
		want := runModel(t, mustCompile(t, ref, ge.WithoutFusion()), in)
		require.Equal(t, want, got, "panel width %d", nr)
	}
	g := ge.NewGraph("g")
	x := g.Data("x", 0, acl.Float32, []int64{m, k})
	pb := g.ConstFloat32("wp", acl.Float32, []int64{100}, make([]float32, 100))
	g.AddOp(ge.OpFusedMatMul, []*ge.Tensor{x, pb}, ge.Attrs{ge.AttrPackedB: ge.IntAttr(8), ge.AttrPackedN: ge.IntAttr(n)})
	require.Error(t, g.Err())
}

func mustCompile(t *testing.T, g *ge.Graph, opts ...ge.CompileOption) *ge.CompiledModel {
	t.Helper()
	m, err := ge.Compile(g, opts...)
	require.NoError(t, err)
	return m
}

// The fused model's tasks keep the unfused order even where a new weight
// (packed, folded) would otherwise become ready last: a runtime that lets
// an output reuse an input's memory (outputReuseInputMemIndexes) depends
// on the reader of x running before the op that overwrites x.
func TestFuseKeepsTaskOrder(t *testing.T) {
	r := newRand(t)
	g := ge.NewGraph("mlp")
	x := g.Data("x", 0, acl.Float32, []int64{4, 8})
	res := g.Data("r", 1, acl.Float32, []int64{4, 16})
	h := g.MatMul(x, constRand(g, r, "w", 1, 8, 16), ge.Name("fc"))
	g.Output(g.Add(g.Relu(h, ge.Name("relu")), res, ge.Name("add")), g.Mul(x, x, ge.Name("square")))
	f := runFusion(t, r, g)
	var names []string
	for _, tk := range f.fused.Tasks {
		names = append(names, tk.Name)
	}
	assert.Equal(t, []string{"relu", "add", "square"}, names)
	assert.Equal(t, ge.OpFusedMatMul, f.fused.Tasks[0].Op)
}

// Conv without a bias → Add of a per-channel bias ([1, M, 1, 1] or
// [M, 1, 1], a constant or not) takes it as the Conv's bias, bit for bit;
// a bias along another dim is no Conv bias.
func TestFuseConvChannelBias(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name  string
		dims  []int64
		data  bool
		fused bool
	}{
		{"nchw_const", []int64{1, 6, 1, 1}, false, true},
		{"chw_input", []int64{6, 1, 1}, true, true},
		{"width", []int64{1, 1, 1, 7}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := ge.NewGraph("conv_add")
			y := g.Conv(g.Data("x", 0, acl.Float32, []int64{2, 3, 9, 7}), constRand(g, r, "w", 0.3, 6, 3, 3, 3), nil,
				ge.WithAttr(ge.AttrPads, ge.IntsAttr([]int64{1, 1, 1, 1})))
			var b *ge.Tensor
			if c.data {
				b = g.Data("b", 1, acl.Float32, c.dims)
			} else {
				b = constRand(g, r, "b", 1, c.dims...)
			}
			g.Output(g.Relu(g.Add(y, b)))
			f := runFusion(t, r, g)
			if c.fused {
				assert.Equal(t, map[ge.OpType]int{ge.OpFusedConv: 1}, countOps(f.fused))
			} else {
				// Add and Relu make an element-wise chain instead.
				assert.Equal(t, map[ge.OpType]int{ge.OpConv: 1, ge.OpElemChain: 1}, countOps(f.fused))
			}
			f.same(t)
			f.close(t, fuseTol)
		})
	}
}

// BatchNorm after a ConvTranspose (grouped or not, with or without a
// bias) folds into its weights, within fuseTol of the unfused graph.
func TestFuseBatchNormConvTranspose(t *testing.T) {
	r := newRand(t)
	for _, groups := range []int64{1, 2} {
		for _, bias := range []bool{false, true} {
			g := ge.NewGraph("deconv_bn")
			x := g.Data("x", 0, acl.Float32, []int64{2, 4, 5, 6})
			var b *ge.Tensor
			if bias {
				b = constRand(g, r, "b", 1, 6)
			}
			y := g.ConvTranspose(x, constRand(g, r, "w", 0.3, 4, 6/groups, 3, 3), b,
				ge.WithAttr(ge.AttrStrides, ge.IntsAttr([]int64{2, 2})), ge.WithAttr(ge.AttrGroups, ge.IntAttr(groups)))
			vr := getest.RandFloats(r, 6, 1)
			for i := range vr {
				vr[i] = vr[i]*vr[i] + 0.1
			}
			y = g.BatchNorm(y, constRand(g, r, "s", 1, 6), constRand(g, r, "sh", 1, 6), constRand(g, r, "m", 1, 6),
				g.ConstFloat32("v", acl.Float32, []int64{6}, vr), 1e-3)
			g.Output(y)
			require.NoError(t, g.Err())
			in := graphInputs(r, g)
			fused := mustCompile(t, g)
			assert.Equal(t, map[ge.OpType]int{ge.OpConvTranspose: 1}, countOps(fused), "groups %d bias %v", groups, bias)
			got := runModel(t, fused, in)
			want := runModel(t, mustCompile(t, g, ge.WithoutFusion()), in)
			d := fused.Outputs[0]
			requireClose(t, refVal{d.DataType, d.Dims, decodeAll(d.DataType, want[0], numel(d.Dims))}, got[0], fuseTol, "fused")
		}
	}
}

// Fusion sees through the nodes that compute nothing: MatMul → Identity →
// Add(bias) → Identity (an inference Dropout) → Reshape to the same dims →
// Relu is one FusedMatMul.
func TestFuseThroughNoOps(t *testing.T) {
	r := newRand(t)
	g := ge.NewGraph("noops")
	h := g.Identity(g.MatMul(g.Data("x", 0, acl.Float32, []int64{6, 10}), constRand(g, r, "w", 0.3, 10, 12)))
	h = g.Identity(g.Add(h, constRand(g, r, "b", 1, 12)))
	g.Output(g.Relu(g.Reshape(h, []int64{6, 12})))
	f := runFusion(t, r, g)
	assert.Equal(t, map[ge.OpType]int{ge.OpFusedMatMul: 1}, countOps(f.fused))
	f.same(t)
	f.close(t, fuseTol)
}
