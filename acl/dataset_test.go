package acl_test

import (
	"context"
	"sync"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDataBuffer(t *testing.T) {
	npu, d, d1 := openTwo(t)
	dev := devMem(t, d, 4096)
	host := hostMem(t, d, 1024)

	b, err := d.NewDataBuffer(dev)
	require.NoError(t, err)
	assert.Equal(t, dev.Ptr(), b.Addr())
	assert.Equal(t, uintptr(4096), b.Size())
	assert.Same(t, dev, b.Memory())
	assert.Equal(t, dev.Ptr(), npu.GetDataBufferAddr(b.Handle()))

	require.NoError(t, b.Update(host))
	assert.Equal(t, host.Ptr(), b.Addr())
	assert.Equal(t, uintptr(1024), b.Size())
	assert.Same(t, host, b.Memory())
	assert.Equal(t, host.Ptr(), npu.GetDataBufferAddr(b.Handle()))
	assert.Equal(t, uintptr(1024), npu.GetDataBufferSizeV2(b.Handle()))

	require.NoError(t, b.UpdatePtr(unsafe.Add(dev.Ptr(), 512), 100))
	assert.Equal(t, unsafe.Add(dev.Ptr(), 512), b.Addr())
	assert.Nil(t, b.Memory())

	// Errors: nil, another Device's memory, closed memory.
	other := devMem(t, d1, 512)
	_, err = d.NewDataBuffer(other)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.ErrorIs(t, b.Update(other), acl.ErrInvalidParam)
	_, err = d.NewDataBuffer(nil)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	var nilBuf *acl.DeviceBuffer
	_, err = d.NewDataBuffer(nilBuf)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.ErrorIs(t, b.Update(nilBuf), acl.ErrInvalidHandle)
	gone := devMem(t, d, 512)
	require.NoError(t, gone.Close())
	_, err = d.NewDataBuffer(gone)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.ErrorIs(t, b.Update(gone), acl.ErrInvalidHandle)

	// A raw buffer with no memory (an output the runtime allocates).
	raw, err := d.NewDataBufferPtr(nil, 0)
	require.NoError(t, err)
	assert.Nil(t, raw.Addr())
	require.NoError(t, raw.Close())

	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	assert.Zero(t, b.Handle())
	assert.ErrorIs(t, b.Update(dev), acl.ErrInvalidHandle)

	var nb *acl.DataBuffer
	assert.NoError(t, nb.Close())
	assert.Nil(t, nb.Addr())
	assert.Zero(t, nb.Size())
	assert.Nil(t, nb.Memory())
	assert.Zero(t, nb.Handle())
	assert.ErrorIs(t, nb.UpdatePtr(nil, 0), acl.ErrInvalidHandle)
}

func TestDataset(t *testing.T) {
	npu, d, d1 := openTwo(t)
	var mems []acl.Memory
	for _, n := range []uintptr{512, 1024, 2048} {
		b := devMem(t, d, n)
		mems = append(mems, b)
	}
	ds, err := d.NewDatasetOf(mems...)
	require.NoError(t, err)
	require.Equal(t, 3, ds.Len())
	assert.Equal(t, uintptr(3), npu.GetDatasetNumBuffers(ds.Handle()))
	for i, m := range mems {
		b := ds.Buffer(i)
		require.NotNil(t, b)
		assert.Equal(t, m.Ptr(), b.Addr())
		assert.Equal(t, b.Handle(), npu.GetDatasetBuffer(ds.Handle(), uintptr(i)))
	}
	assert.Nil(t, ds.Buffer(3))
	assert.Nil(t, ds.Buffer(-1))

	// The dataset owns its buffers: their own Close does nothing.
	b0 := ds.Buffer(0)
	require.NoError(t, b0.Close())
	assert.NotZero(t, b0.Handle())
	assert.ErrorIs(t, ds.Add(b0), acl.ErrInvalidParam, "already in a dataset")

	// Errors: another Device's buffer, a closed buffer, nil.
	m1 := devMem(t, d1, 512)
	b1, err := d1.NewDataBuffer(m1)
	require.NoError(t, err)
	assert.ErrorIs(t, ds.Add(b1), acl.ErrInvalidParam)
	free, err := d.NewDataBufferPtr(nil, 0)
	require.NoError(t, err)
	require.NoError(t, free.Close())
	assert.ErrorIs(t, ds.Add(free), acl.ErrInvalidHandle)
	assert.ErrorIs(t, ds.Add(nil), acl.ErrInvalidHandle)

	// NewDatasetOf with a closed memory fails and leaves nothing behind.
	before := npu.Counters()
	gone := devMem(t, d, 512)
	require.NoError(t, gone.Close())
	_, err = d.NewDatasetOf(mems[0], gone)
	assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	assert.Equal(t, before.LiveAllocs, npu.Counters().LiveAllocs)

	require.NoError(t, ds.Close())
	require.NoError(t, ds.Close())
	assert.Zero(t, ds.Handle())
	assert.Zero(t, b0.Handle(), "closing the dataset closed its buffers")
	late, err := d.NewDataBufferPtr(nil, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, ds.Add(late), acl.ErrInvalidHandle)
	require.NoError(t, late.Close())

	var nds *acl.Dataset
	assert.NoError(t, nds.Close())
	assert.Zero(t, nds.Len())
	assert.Nil(t, nds.Buffer(0))
	assert.Zero(t, nds.Handle())
}

// TestDatasetUpdateBetweenRuns: pointing a data buffer at other memory
// between executions sends the next execution's output there, and updates
// racing with executions from other goroutines are safe (-race).
func TestDatasetUpdateBetweenRuns(t *testing.T) {
	r := newRig(t)
	d, rng, p, m, st, v := r.d, r.rng, r.p, r.m, r.st, r.v
	alt := devMem(t, d, p.OutSizes()[0])

	v.fill(t, rng, p)
	require.NoError(t, v.outDS.Buffer(0).Update(alt))
	require.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
	require.NoError(t, st.Synchronize())
	got := make([]byte, alt.Size())
	require.NoError(t, alt.CopyToHost(got))
	requireClose(t, v.wantY, getest.BytesF32(got), "y in the swapped buffer")

	// Concurrent updates (between two equally good buffers) and runs.
	var wg sync.WaitGroup
	wg.Go(func() {
		for k := range 50 {
			target := acl.Memory(alt)
			if k%2 == 0 {
				target = v.out[0]
			}
			assert.NoError(t, v.outDS.Buffer(0).Update(target))
		}
	})
	wg.Go(func() {
		for range 50 {
			assert.NoError(t, m.ExecuteAsync(st, v.inDS, v.outDS))
		}
	})
	wg.Wait()
	require.NoError(t, m.Wait(context.Background()))
	require.NoError(t, st.Synchronize())
}
