package fallback

import (
	"os"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPedantic: what the device tolerates but is almost always a bug is
// accepted by default and refused by WithPedantic, with a message saying
// what the device would have done; the same calls without the option
// behave as on the device (the data moves).
func TestPedantic(t *testing.T) {
	r := newRand(t)
	const size = 4096
	for _, pedantic := range []bool{false, true} {
		var opts []Option
		if pedantic {
			opts = append(opts, WithPedantic())
		}
		n := newTestNPU(t, opts...)
		s, err := n.CreateStream()
		require.NoError(t, err)
		d := mustMalloc(t, n, size)
		pinned := mustMallocHost(t, n, size)
		plain := randBytes(r, size)

		// An asynchronous copy from pageable memory: the device
		// synchronizes the stream and copies synchronously
		// (hicann/runtime src/runtime/api/impl/api_error.cc:2256-2269).
		err = n.MemcpyAsync(d, size, ptrOf(plain), size, acl.MemcpyHostToDevice, s)
		if pedantic {
			requireCode(t, acl.CodeRTParamInvalid, err)
			assert.Contains(t, err.Error(), "pedantic:")
			assert.Contains(t, err.Error(), "synchronously")
		} else {
			require.NoError(t, err)
			got := make([]byte, size)
			require.NoError(t, n.Memcpy(ptrOf(got), size, d, size, acl.MemcpyDeviceToHost))
			assert.Equal(t, plain, got, "copied before MemcpyAsync returned")
		}

		// A synchronous copy whose kind disagrees with the memory: the
		// device ignores the kind (api_error.cc:2129-2152).
		want := randBytes(r, size)
		copy(pinned, want)
		err = n.Memcpy(d, size, ptrOf(pinned), size, acl.MemcpyDeviceToHost)
		if pedantic {
			requireCode(t, acl.CodeRTInvalidMemoryType, err)
			assert.Contains(t, err.Error(), "ignores the kind")
		} else {
			require.NoError(t, err)
			got := make([]byte, size)
			require.NoError(t, n.Memcpy(ptrOf(got), size, d, size, acl.MemcpyDefault))
			assert.Equal(t, want, got)
		}

		// An asynchronous copy whose kind the device corrects
		// (api_error.cc:2694-2786).
		err = n.MemcpyAsync(ptrOf(pinned), size, d, size, acl.MemcpyHostToDevice, s)
		if pedantic {
			requireCode(t, acl.CodeRTInvalidMemoryType, err)
			assert.Contains(t, err.Error(), "would have corrected the kind to ACL_MEMCPY_DEVICE_TO_HOST")
		} else {
			require.NoError(t, err)
		}
		require.NoError(t, n.SynchronizeStream(s))

		// What the device refuses stays refused either way, with the
		// device's code.
		requireCode(t, acl.CodeRTFeatureNotSupport, n.MemcpyAsync(ptrOf(pinned), size, ptrOf(pinned), size, acl.MemcpyHostToHost, s))
		require.NoError(t, n.DestroyStream(s))
	}
}

// TestInitConfigContent: a later aclInit with a config file of other
// content is refused (hicann/runtime src/acl/aclrt_impl/acl.cpp:403-416);
// the same content is accepted.
func TestInitConfigContent(t *testing.T) {
	n := newTestNPU(t)
	dir := t.TempDir()
	a, b := dir+"/a.json", dir+"/b.json"
	require.NoError(t, writeFile(a, `{"dump":{}}`))
	require.NoError(t, writeFile(b, `{"err_msg_mode":"1"}`))
	require.NoError(t, n.Finalize())
	requireCode(t, acl.CodeInvalidParam, n.Init(a), "the first aclInit read no file")
	require.NoError(t, n.Init(""))
	require.NoError(t, n.Finalize())
	require.NoError(t, n.Init(""))
	require.NoError(t, n.Finalize())

	m, err := New(WithDeviceMemory(testMem), WithHostMemory(testMem))
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, m.Init(a))
	require.NoError(t, m.Finalize())
	requireCode(t, acl.CodeInvalidParam, m.Init(b))
	require.NoError(t, writeFile(b, `{"dump":{}}`))
	require.NoError(t, m.Init(b), "same content, other path")
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

// TestResourceLimits: one stream or event beyond the device's limit is
// ACL_ERROR_RT_NO_STREAM_RESOURCE / ACL_ERROR_RT_NO_EVENT_RESOURCE
// (hicann/runtime src/runtime/core/src/common/errcode_manage.cc:93-94);
// destroying one makes room, and another device has its own count.
func TestResourceLimits(t *testing.T) {
	n := newTestNPU(t, WithResourceLimits(3, 2), WithDevices(2))
	var ss []acl.StreamHandle
	for range 3 {
		s, err := n.CreateStream()
		require.NoError(t, err)
		ss = append(ss, s)
	}
	_, err := n.CreateStream()
	requireCode(t, acl.CodeRTNoStreamResource, err)
	e1, err := n.CreateEvent()
	require.NoError(t, err)
	_, err = n.CreateEventWithFlag(acl.EventSync)
	require.NoError(t, err)
	_, err = n.CreateEvent()
	requireCode(t, acl.CodeRTNoEventResource, err)
	require.NoError(t, n.DestroyEvent(e1))
	_, err = n.CreateEvent()
	require.NoError(t, err)
	require.NoError(t, n.DestroyStream(ss[0]))
	_, err = n.CreateStream()
	require.NoError(t, err)
	require.NoError(t, n.SetDevice(1))
	_, err = n.CreateStream()
	require.NoError(t, err, "device 1 counts its own streams")
	require.NoError(t, n.ResetDevice(1))
	require.NoError(t, n.SetDevice(0))
	n.ClearLeaks()
}

// TestPedanticModelHostCopies: a host buffer on an IO the model copies
// works on the device only because the runtime tolerates GE's
// ACL_MEMCPY_DEVICE_TO_DEVICE for it (a synchronous copy goes by the
// pointers, an asynchronous one from pinned memory is corrected); the
// pedantic option refuses it with 107016 saying so. Plain memory copied
// asynchronously faults with or without the option.
func TestPedanticModelHostCopies(t *testing.T) {
	n := newTestNPU(t, WithPedantic())
	rng := newRand(t)
	p := newMLP(t, rng, ge.NoZeroCopyOps("square")) // input 0 and output 1 are copied
	id := loadBlob(t, n, p.blob)
	idA := loadBlob(t, n, p.blob)
	s := mkStream(t, n)
	dev := [][]byte{devBytes(t, n, p.inSizes()[0]), devBytes(t, n, p.inSizes()[1]), devBytes(t, n, p.outSizes()[0]), devBytes(t, n, p.outSizes()[1])}
	pinnedX := mustMallocHost(t, n, p.inSizes()[0])
	in, _ := newDataset(t, n, pinnedX, dev[1])
	out, _ := newDataset(t, n, dev[2], dev[3])
	err := n.Execute(id, in, out)
	requireCode(t, acl.CodeRTInvalidMemoryType, err)
	assert.Contains(t, err.Error(), "pedantic:")
	assert.Contains(t, err.Error(), "pointers")
	err = n.ExecuteAsync(idA, in, out, s)
	requireCode(t, acl.CodeRTInvalidMemoryType, err)
	assert.Contains(t, err.Error(), "corrected the kind of its asynchronous copy to H2D")
	pinnedY := mustMallocHost(t, n, p.outSizes()[1])
	outH, _ := newDataset(t, n, dev[2], pinnedY)
	inD, _ := newDataset(t, n, dev[0], dev[1])
	err = n.Execute(id, inD, outH)
	requireCode(t, acl.CodeRTInvalidMemoryType, err)
	assert.Contains(t, err.Error(), "output 1")

	plainX := pages(t, 1+p.inSizes()[0]/4096)[:p.inSizes()[0]]
	inP, _ := newDataset(t, n, plainX, dev[1])
	require.NoError(t, n.ExecuteAsync(idA, inP, out, s), "not tolerated: the call succeeds and the DMA faults")
	requireCode(t, acl.CodeRTSysDMA, n.SynchronizeStream(s))

	// Device memory throughout is fine.
	x, r := p.feed(rng, dev[0], dev[1])
	require.NoError(t, n.Execute(id, inD, out))
	p.check(t, x, r, dev[2], dev[3])
}
