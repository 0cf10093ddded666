package ge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/sgemm"
)

// Constant MatMul weights are packed once at compile time, for this
// machine's GEMM panel width: plain, transposed, under a batched A, with
// a bias and activation, over several K blocks, with N not a multiple of
// the width; the products are bit-identical to the unpacked ones. Data
// weights are not packed, nor are those of a product too small to pack,
// nor any in a model compiled without fusion.
func TestFusePrepack(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name   string
		a      []int64
		k, n   int64
		transB bool
		bias   bool
	}{
		{"plain", []int64{5}, 40, 33, false, false},
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
	t.Run("tiny", func(t *testing.T) {
		// 3·33·40 ≤ 4096 multiply-adds run as plain dot products, which
		// never pack B: it stays as stored.
		g := ge.NewGraph("g")
		g.Output(g.MatMul(g.Data("x", 0, acl.Float32, []int64{3, 40}), constRand(g, r, "w", 0.1, 40, 33)))
		f := runFusion(t, r, g)
		assert.Equal(t, map[ge.OpType]int{ge.OpMatMul: 1}, countOps(f.fused))
		f.same(t)
	})
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
