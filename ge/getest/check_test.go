package getest_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

func mlp(t *testing.T) *ge.CompiledModel {
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	m, err := ge.Compile(getest.MLP(r, acl.Float32, 4, 16, 64, 64, 64, 8))
	require.NoError(t, err)
	require.NoError(t, getest.CheckModel(m))
	return m
}

// moveBuffer relocates plan buffer i and every slot that refers to it.
func moveBuffer(m *ge.CompiledModel, i int, off int64) {
	m.Plan[i].Offset = off
	for ti := range m.Tasks {
		for ai := range m.Tasks[ti].Args {
			if m.Tasks[ti].Args[ai].Buffer == i {
				m.Tasks[ti].Args[ai].Offset = off
			}
		}
	}
}

func fmBuffers(m *ge.CompiledModel) []int {
	var fm []int
	for i, b := range m.Plan {
		if b.Mem == ge.MemFeatureMap {
			fm = append(fm, i)
		}
	}
	return fm
}

// The checker is only worth something if it rejects broken plans.
func TestCheckModelCatchesBrokenPlans(t *testing.T) {
	t.Run("live buffers overlap", func(t *testing.T) {
		m := mlp(t)
		fm := fmBuffers(m)
		// Consecutive buffers in a chain are live together at the task
		// between them.
		a, b := fm[0], fm[1]
		require.True(t, m.Plan[a].Last >= m.Plan[b].Def)
		moveBuffer(m, b, m.Plan[a].Offset)
		require.ErrorContains(t, getest.CheckModel(m), "overlap")
	})
	t.Run("understated lifetime", func(t *testing.T) {
		m := mlp(t)
		b := fmBuffers(m)[0]
		m.Plan[b].Last = m.Plan[b].Def
		require.ErrorContains(t, getest.CheckModel(m), "outside its lifetime")
	})
	t.Run("slot writes over a live buffer", func(t *testing.T) {
		m := mlp(t)
		fm := fmBuffers(m)
		// Point task 1's output slot at buffer fm[0]'s bytes without
		// moving the plan entry: only the simulation sees it.
		out := &m.Tasks[1].Args[len(m.Tasks[1].Inputs)]
		out.Offset = m.Plan[fm[0]].Offset
		require.ErrorContains(t, getest.CheckModel(m), "last written by")
	})
	t.Run("IO block in the feature map", func(t *testing.T) {
		m := mlp(t)
		moveBuffer(m, m.Outputs[0].Buffer, 0)
		m.Outputs[0].BasicOffset = 0
		require.Error(t, getest.CheckModel(m))
	})
	// Fixed cases (no random seed): an IO block reused by the feature map,
	// from either side, is caught with the reason named.
	t.Run("IO block reused by the feature map, fixed", func(t *testing.T) {
		fixed := func() *ge.CompiledModel {
			r := rand.New(rand.NewPCG(17, 1))
			m, err := ge.Compile(getest.MLP(r, acl.Float32, 4, 16, 64, 64, 64, 8))
			require.NoError(t, err)
			require.NoError(t, getest.CheckModel(m))
			return m
		}
		m := fixed()
		out := m.Outputs[0].Buffer
		moveBuffer(m, out, m.Plan[fmBuffers(m)[0]].Offset)
		m.Outputs[0].BasicOffset = m.Plan[out].Offset
		require.ErrorContains(t, getest.CheckModel(m), "outside IO region")

		m = fixed()
		fm := fmBuffers(m)[0]
		moveBuffer(m, fm, m.Inputs[0].BasicOffset)
		require.ErrorContains(t, getest.CheckModel(m), "outside feature map")
	})
	t.Run("inputs out of order", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		m, err := ge.Compile(getest.BranchConcat(r, acl.Float32, 4, 16, 2))
		require.NoError(t, err)
		require.NoError(t, getest.CheckModel(m))
		x, bias := m.Inputs[0], m.Inputs[1]
		require.Less(t, bias.BasicOffset, x.BasicOffset, "the smaller input comes first")
		xo, bo := x.BasicOffset, bias.BasicOffset
		moveBuffer(m, x.Buffer, bo)
		moveBuffer(m, bias.Buffer, xo)
		m.Inputs[0].BasicOffset, m.Inputs[1].BasicOffset = bo, xo
		require.Error(t, getest.CheckModel(m))
	})
	t.Run("unaligned", func(t *testing.T) {
		m := mlp(t)
		moveBuffer(m, fmBuffers(m)[0], 8)
		require.ErrorContains(t, getest.CheckModel(m), "not aligned")
	})
}

func TestRunChecksIO(t *testing.T) {
	m := mlp(t)
	_, err := getest.Run(m, nil)
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	_, err = getest.Run(m, [][]byte{make([]byte, 3)})
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	_, err = getest.RunZeroCopy(m, [][]byte{make([]byte, 256)}, [][]byte{make([]byte, 3)})
	require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
}
