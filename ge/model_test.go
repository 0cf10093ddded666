package ge_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// shapes are the graph families the planner is judged on.
var shapes = []struct {
	name  string
	build func(r *rand.Rand, dt acl.DataType) *ge.Graph
}{
	{"mlp", func(r *rand.Rand, dt acl.DataType) *ge.Graph { return getest.MLP(r, dt, 16, 64, 256, 128, 256, 32) }},
	{"residual", func(r *rand.Rand, dt acl.DataType) *ge.Graph { return getest.Residual(r, dt, 16, 64, 192, 4) }},
	{"branch_concat", func(r *rand.Rand, dt acl.DataType) *ge.Graph { return getest.BranchConcat(r, dt, 16, 64, 4) }},
	{"transformer", func(r *rand.Rand, dt acl.DataType) *ge.Graph { return getest.TransformerBlock(r, dt, 2, 16, 64, 4) }},
}

func graphInputs(r *rand.Rand, g *ge.Graph) [][]byte {
	var in [][]byte
	for _, n := range g.Nodes() {
		if n.Op() == ge.OpData {
			d := n.Output(0).Desc()
			in = append(in, randInput(r, d.DataType, d.Dims, 1))
		}
	}
	return in
}

// TestWholeModels runs the reference graphs in every float type through the
// compiler and the reference interpreter and compares with float64.
func TestWholeModels(t *testing.T) {
	r := newRand(t)
	for _, s := range shapes {
		for _, dt := range floatTypes {
			t.Run(s.name+"/"+dt.String(), func(t *testing.T) {
				g := s.build(r, dt)
				require.NoError(t, g.Err())
				in := graphInputs(r, g)
				want := refEval(t, g, in)
				got := runGraph(t, g, in)
				require.Len(t, got, len(want))
				for i := range want {
					// Each op rounds once like the reference; differences are
					// last-place flips carried through a few layers.
					requireClose(t, want[i], got[i], 4*tolerance(dt), s.name)
				}
			})
		}
	}
}

// TestFeatureMapRatio holds the planner to its target on the four shapes
// as built: feature-map bytes within 10% of the peak of simultaneously
// live bytes. Fusion (on by default) removes intermediate tensors, so the
// fused model's feature map is never larger.
func TestFeatureMapRatio(t *testing.T) {
	r := newRand(t)
	for _, s := range shapes {
		for _, dt := range []acl.DataType{acl.Float32, acl.Float16} {
			m, err := ge.Compile(s.build(r, dt), ge.WithoutFusion())
			require.NoError(t, err)
			fused, err := ge.Compile(s.build(r, dt))
			require.NoError(t, err)
			assert.LessOrEqual(t, fused.FeatureMapSize(), m.FeatureMapSize(), "fusion must not grow the feature map of %s", s.name)
			lb := m.FeatureMapLowerBound()
			ratio := float64(m.FeatureMapSize()) / float64(lb)
			t.Logf("%s/%s: fm %d, lower bound %d, ratio %.3f, io %d", s.name, dt, m.FeatureMapSize(), lb, ratio, m.ZeroCopySize)
			assert.LessOrEqual(t, ratio, 1.10, s.name)
			noReuse, err := ge.Compile(s.build(r, dt), ge.WithoutMemoryReuse(), ge.WithoutFusion())
			require.NoError(t, err)
			require.NoError(t, getest.CheckModel(noReuse))
			assert.Less(t, m.FeatureMapSize(), noReuse.FeatureMapSize(), "reuse must save memory on %s", s.name)
		}
	}
}

// TestRandomGraphs compiles random DAGs, proves every plan with the
// brute-force checker, and compares the results with the float64 reference
// and with a compile that reuses no memory (byte for byte).
func TestRandomGraphs(t *testing.T) {
	r := newRand(t)
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := range n {
		g := getest.RandomGraph(r, 5+r.IntN(40))
		require.NoError(t, g.Err(), "graph %d", i)
		m, err := ge.Compile(g)
		require.NoError(t, err, "graph %d", i)
		require.NoError(t, getest.CheckModel(m), "graph %d", i)
		in := graphInputs(r, g)
		want := refEval(t, g, in)
		got, err := getest.Run(m, in)
		require.NoError(t, err)
		for j := range want {
			requireClose(t, want[j], got[j], 1e-4, "random graph")
		}
		zc := make([][]byte, len(m.Outputs))
		for j, d := range m.Outputs {
			zc[j] = make([]byte, d.Size)
		}
		_, err = getest.RunZeroCopy(m, in, zc)
		require.NoError(t, err)
		require.Equal(t, got, zc)

		flat, err := ge.Compile(g, ge.WithoutMemoryReuse())
		require.NoError(t, err)
		require.NoError(t, getest.CheckModel(flat))
		got2, err := getest.Run(flat, in)
		require.NoError(t, err)
		require.Equal(t, got, got2, "graph %d: memory reuse changed the results", i)
		require.LessOrEqual(t, m.FeatureMapSize(), flat.FeatureMapSize())
		require.GreaterOrEqual(t, m.FeatureMapSize(), m.FeatureMapLowerBound())
	}
}
