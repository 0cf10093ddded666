package acl_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// TestModelDynamicBatch: through the idiomatic API, a dynamic-batch model
// reports its gears, Model.SetDynamicBatchSize picks one, and each gear's
// rows equal those of a static model of that batch (ge's reference
// executor); a batch that is not a gear is ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
// and a static model has no batch input.
func TestModelDynamicBatch(t *testing.T) {
	_, _, d := open(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	graph := func(b int64) *ge.Graph { return getest.MLP(rand.New(rand.NewPCG(seed, 1)), acl.Float32, b, 16, 32, 8) }
	bm, err := ge.CompileBatch([]int64{8, 2, 5}, func(b int64) (*ge.Graph, error) { return graph(b), nil })
	require.NoError(t, err)
	blob, err := bm.MarshalBinary()
	require.NoError(t, err)
	m, err := d.LoadModel(blob)
	require.NoError(t, err)
	desc := m.Desc()
	require.Equal(t, []uint64{2, 5, 8}, desc.Batches)
	require.Len(t, desc.Inputs, 2)
	require.Equal(t, []int64{-1, 16}, desc.Inputs[0].Dims)
	require.Equal(t, acl.DynamicTensorName, desc.Inputs[1].Name)

	x := devMem(t, d, desc.Inputs[0].Size)
	bb := devMem(t, d, desc.Inputs[1].Size)
	y := devMem(t, d, desc.Outputs[0].Size)
	in, err := d.NewDatasetOf(x, bb)
	require.NoError(t, err)
	out, err := d.NewDatasetOf(y)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, b := range []int64{5, 2, 8, 5} {
		xs := getest.RandF32(rng, int(b)*16)
		require.NoError(t, x.CopyFromHost(getest.F32Bytes(xs)))
		require.NoError(t, m.SetDynamicBatchSize(in, uint64(b)))
		dims, err := m.CurOutputDims(0)
		require.NoError(t, err)
		require.Equal(t, []int64{b, 8}, dims)
		require.NoError(t, m.Execute(in, out))
		static, err := ge.Compile(graph(b))
		require.NoError(t, err)
		want, err := getest.Run(static, [][]byte{getest.F32Bytes(xs)})
		require.NoError(t, err)
		got := make([]byte, y.Size())
		require.NoError(t, y.CopyToHost(got))
		require.Equal(t, want[0], got[:len(want[0])], "batch %d", b)
	}
	require.Equal(t, acl.CodeGEDynamicBatchSizeInvalid, acl.CodeOf(m.SetDynamicBatchSize(in, 4)))

	// The same with pinned host buffers and ExecuteAsync: the Model stages
	// them through device memory, the batch input in time for the gear
	// choice.
	ma, err := d.LoadModel(blob)
	require.NoError(t, err)
	hx := hostMem(t, d, desc.Inputs[0].Size)
	hb := hostMem(t, d, desc.Inputs[1].Size)
	hy := hostMem(t, d, desc.Outputs[0].Size)
	hin, err := d.NewDatasetOf(hx, hb)
	require.NoError(t, err)
	hout, err := d.NewDatasetOf(hy)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	for _, b := range []int64{2, 8, 5, 2} {
		xs := getest.RandF32(rng, int(b)*16)
		copy(hx.Bytes(), getest.F32Bytes(xs))
		require.NoError(t, ma.SetDynamicBatchSize(hin, uint64(b)))
		require.NoError(t, ma.ExecuteAsync(st, hin, hout))
		require.NoError(t, st.Synchronize())
		static, err := ge.Compile(graph(b))
		require.NoError(t, err)
		want, err := getest.Run(static, [][]byte{getest.F32Bytes(xs)})
		require.NoError(t, err)
		require.Equal(t, want[0], hy.Bytes()[:len(want[0])], "host buffers, batch %d", b)
	}

	p := newMLPModel(t, rand.New(rand.NewPCG(seed, 3)), 2, 4, 4, 2)
	sm, err := d.LoadModel(p.Blob)
	require.NoError(t, err)
	require.Nil(t, sm.Desc().Batches)
	dims, err := sm.CurOutputDims(0)
	require.NoError(t, err)
	require.Equal(t, sm.Desc().Outputs[0].Dims, dims)
	_, err = sm.CurOutputDims(5)
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	require.ErrorIs(t, sm.SetDynamicBatchSize(in, 2), acl.ErrInvalidParam)
}

// TestModelExecuteRebindsContext: a synchronous Execute on a thread where
// another Device's context is current still runs on its own Device (the
// backend refuses the call, the model binds and repeats it).
func TestModelExecuteRebindsContext(t *testing.T) {
	r := newRig(t, twoDevices())
	d1, rng, p, m, v := r.d1, r.rng, r.p, r.m, r.v
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 3 {
		v.fill(t, rng, p)
		require.NoError(t, d1.Do(func() error { return nil }))
		require.NoError(t, m.Execute(v.inDS, v.outDS))
		v.check(t)
	}
}
