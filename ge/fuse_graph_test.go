package ge_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

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
