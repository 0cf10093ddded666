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
// frees it with Device.Free. On the fallback and on the native backend over
// the C stub.
func TestRuntimeAllocatedOutput(t *testing.T) {
	const n = 64
	t.Run("fallback", func(t *testing.T) {
		npu, err := fallback.New()
		require.NoError(t, err)
		live := func() int { return npu.Counters().LiveAllocs[0] }
		runtimeAllocatedOutput(t, npu, doubleModel(t, n), n, func(x float32) float32 { return x + x }, live)
	})
	t.Run("native-stub", func(t *testing.T) {
		be := stubBackend(t, "STUB_INSTANCE_ZEROCOPY_TEST")
		const addend = 0.25
		runtimeAllocatedOutput(t, be, stubAddModel(n, addend), n, func(x float32) float32 { return x + addend }, nil)
	})
}

// runtimeAllocatedOutput runs a one-input, one-output model of n float32
// values computing f with a (nil, 0) output buffer; live, when not nil,
// counts the device's live allocations.
func runtimeAllocatedOutput(t *testing.T, be acl.Backend, blob []byte, n int, f func(float32) float32, live func() int) {
	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	m, err := dev.LoadModel(blob)
	require.NoError(t, err)
	defer m.Close()
	in, err := dev.Malloc(uintptr(4*n), acl.MemMallocHugeFirst)
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
		return rt.Backend().Memcpy(unsafe.Pointer(&got[0]), uintptr(4*n), p, uintptr(4*n), acl.MemcpyDeviceToHost)
	}))
	for i := range x {
		require.Equal(t, f(x[i]), got[i], "y[%d]", i)
	}
	var before int
	if live != nil {
		before = live()
	}
	require.NoError(t, dev.Free(p))
	if live != nil {
		assert.Equal(t, before-1, live(), "Device.Free releases it")
	}
}
