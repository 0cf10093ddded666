package fallback

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeviceBytesFromStreamTask: a stream task (as model execution does)
// reads and writes device memory through checked views, in stream order.
func TestDeviceBytesFromStreamTask(t *testing.T) {
	r := newRand(t)
	n := newTestNPU(t)
	const size = 10000
	in, out := mustMalloc(t, n, size), mustMalloc(t, n, size)
	want := randBytes(r, size)
	require.NoError(t, n.Memcpy(in, size, ptrOf(want), size, acl.MemcpyHostToDevice))
	n.ResetCounters()
	// "Kernel": out[i] = in[size-1-i].
	require.NoError(t, n.enqueueOp(0, "reverse", func() error {
		dev, src, err := n.deviceBytes(in, size)
		if err != nil {
			return err
		}
		_, dst, err := n.deviceBytes(out, size)
		if err != nil {
			return err
		}
		assert.Equal(t, int32(0), dev)
		for i := range dst {
			dst[i] = src[size-1-i]
		}
		n.countLaunch()
		return nil
	}))
	require.NoError(t, n.SynchronizeStream(0))
	got := make([]byte, size)
	require.NoError(t, n.Memcpy(ptrOf(got), size, out, size, acl.MemcpyDeviceToHost))
	for i := range got {
		require.Equal(t, want[size-1-i], got[i])
	}
	c := n.Counters()
	assert.Equal(t, uint64(1), c.Launches)
	assert.Equal(t, uint64(1), c.D2H.Copies, "only the explicit download counts as a copy")

	// A task that reaches out of bounds fails the stream with the code.
	require.NoError(t, n.enqueueTask(0, func() error {
		_, _, err := n.deviceBytes(in, size+1)
		return err
	}))
	err := n.SynchronizeStream(0)
	requireCode(t, acl.CodeRTParamInvalid, err)
	assert.Equal(t, err.(*acl.Error).Msg, n.GetRecentErrMsg(), "the synchronize's message, not the hook's")
	require.NoError(t, n.Free(in))
	require.NoError(t, n.Free(out))
}

func TestDeviceBytesAndBytesChecks(t *testing.T) {
	n := newTestNPU(t)
	d := mustMalloc(t, n, 1024)
	h := mustMallocHost(t, n, 1024)
	reg := pages(t, 1)
	require.NoError(t, n.HostRegisterV2(ptrOf(reg), 4096, acl.HostRegMapped))
	plain := make([]byte, 16)

	dev, b, err := n.deviceBytes(unsafe.Add(d, 24), 1000)
	require.NoError(t, err)
	assert.Equal(t, int32(0), dev)
	assert.Len(t, b, 1000)
	dev, b, err = n.deviceBytes(ptrOf(reg), 4096)
	require.NoError(t, err)
	assert.Equal(t, int32(-1), dev, "registered host memory belongs to no device")
	assert.Len(t, b, 4096)

	_, _, err = n.deviceBytes(ptrOf(h), 8)
	requireCode(t, acl.CodeRTInvalidMemoryType, err)
	_, _, err = n.deviceBytes(ptrOf(plain), 8)
	requireCode(t, acl.CodeRTInvalidMemoryType, err)
	_, _, err = n.deviceBytes(d, 1025)
	requireCode(t, acl.CodeRTParamInvalid, err)
	_, _, err = n.deviceBytes(nil, 1)
	requireCode(t, acl.CodeInvalidParam, err)

	p, b, err := n.bytes("fallback.Bytes", ptrOf(plain), 16)
	require.NoError(t, err)
	assert.Equal(t, npuhook.PlaceHost, p.Place)
	assert.Len(t, b, 16)
	p, _, err = n.bytes("fallback.Bytes", ptrOf(h), 1024)
	require.NoError(t, err)
	assert.Equal(t, npuhook.PlacePinned, p.Place)
	_, _, err = n.bytes("fallback.Bytes", ptrOf(h), 1025)
	requireCode(t, acl.CodeRTParamInvalid, err)

	n.ResetCounters()
	n.countCopy(HostToDevice, 100)
	n.countCopy(DeviceToDevice, 7)
	c := n.Counters()
	assert.Equal(t, Traffic{1, 100}, c.H2D)
	assert.Equal(t, Traffic{1, 7}, c.D2D)
	assert.Equal(t, uint64(2), c.Copies())

	require.NoError(t, n.Free(d))
	_, _, err = n.deviceBytes(d, 1)
	requireCode(t, acl.CodeRTParamInvalid, err, "freed")
	require.NoError(t, n.FreeHost(ptrOf(h)))
	require.NoError(t, n.HostUnregister(ptrOf(reg)))
}

func TestCurrentDeviceAndCount(t *testing.T) {
	n := newTestNPU(t, WithDevices(3))
	assert.Equal(t, 3, n.deviceCount())
	require.NoError(t, n.SetDevice(2))
	d, err := n.currentDevice()
	require.NoError(t, err)
	assert.Equal(t, int32(2), d)
	onThread(func() {
		_, err := n.currentDevice()
		assertCode(t, acl.CodeRTContextNull, err)
	})
}
