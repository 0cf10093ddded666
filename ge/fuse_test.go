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
