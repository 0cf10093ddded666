package zerocopy_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/getest"
)

// TestRuntimeAllocatedOutput: an output DataBuffer made with (nil, 0) is
// allocated by the runtime at execution (aclmdlExecute.md); DataBuffer.Addr
// and Size then report that memory, which holds the result, and the caller
// frees it with Device.Free.
func TestRuntimeAllocatedOutput(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	const n = 64
	m, err := dev.LoadModel(doubleModel(t, n))
	require.NoError(t, err)
	defer m.Close()
	in, err := dev.Malloc(4*n, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer in.Close()
	x := getest.RandF32(newRand(t), n)
	require.NoError(t, in.CopyFromHost(getest.F32Bytes(x)))
	ids, err := dev.NewDatasetOf(in)
	require.NoError(t, err)
	defer ids.Close()
	ods, err := dev.NewDataset()
	require.NoError(t, err)
	defer ods.Close()
	ob, err := dev.NewDataBufferPtr(nil, 0)
	require.NoError(t, err)
	require.NoError(t, ods.Add(ob))
	require.Nil(t, ob.Addr())

	require.NoError(t, m.Execute(ids, ods))
	p := ob.Addr()
	require.NotNil(t, p, "the runtime's allocation is reachable")
	assert.Equal(t, uintptr(4*n), ob.Size())
	got := make([]float32, n)
	require.NoError(t, dev.Do(func() error {
		return rt.Backend().Memcpy(unsafe.Pointer(&got[0]), 4*n, p, 4*n, acl.MemcpyDeviceToHost)
	}))
	for i := range x {
		require.Equal(t, x[i]+x[i], got[i])
	}
	live := npu.Counters().LiveAllocs[0]
	require.NoError(t, dev.Free(p))
	assert.Equal(t, live-1, npu.Counters().LiveAllocs[0], "Device.Free releases it")
}
