package fallback

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemcpyKindsAndCounters copies random bytes through every kind,
// checks the data against the source and the counters against the
// directions.
func TestMemcpyKindsAndCounters(t *testing.T) {
	r := newRand(t)
	n := newTestNPU(t, WithDevices(2))
	const size = 40000
	d0a, d0b := mustMalloc(t, n, size), mustMalloc(t, n, size)
	require.NoError(t, n.SetDevice(1))
	d1 := mustMalloc(t, n, size)
	pinned := mustMallocHost(t, n, size)
	plain := make([]byte, size)
	reg := pages(t, 10)
	_, err := n.HostRegister(ptrOf(reg), uint64(len(reg)), acl.HostRegisterMapped)
	require.NoError(t, err)
	// Copies between devices 0 and 1 need peer access.
	require.NoError(t, n.DeviceEnablePeerAccess(0, 0))
	n.ResetCounters()

	want := randBytes(r, size)
	copy(plain, want)
	steps := []struct {
		dst, src unsafe.Pointer
		kind     acl.MemcpyKind
	}{
		{d0a, ptrOf(plain), acl.MemcpyHostToDevice},
		{d0b, d0a, acl.MemcpyDeviceToDevice},
		{d1, d0b, acl.MemcpyDeviceToDevice},
		{ptrOf(pinned), d1, acl.MemcpyDeviceToHost},
		{ptrOf(reg), ptrOf(pinned), acl.MemcpyHostToHost},
		{d0a, ptrOf(reg), acl.MemcpyHostToBufToDevice},
		{d0b, d0a, acl.MemcpyDeviceToDevice},
		{d1, d0b, acl.MemcpyDefault},           // D2D
		{ptrOf(pinned), d1, acl.MemcpyDefault}, // D2H
	}
	for i, s := range steps {
		require.NoError(t, n.Memcpy(s.dst, size, s.src, size, s.kind), "step %d (%v)", i, s.kind)
	}
	require.Equal(t, want, pinned)
	c := n.Counters()
	assert.Equal(t, Traffic{2, 2 * size}, c.H2D)
	assert.Equal(t, Traffic{4, 4 * size}, c.D2D)
	assert.Equal(t, Traffic{2, 2 * size}, c.D2H)
	assert.Equal(t, Traffic{1, size}, c.H2H)
	assert.Equal(t, uint64(9), c.Copies())

	// ACL_MEMCPY_DEFAULT from host to device and host to host.
	clear(plain)
	require.NoError(t, n.Memcpy(d0a, size, ptrOf(pinned), size, acl.MemcpyDefault))
	require.NoError(t, n.Memcpy(ptrOf(plain), size, ptrOf(pinned), size, acl.MemcpyDefault))
	require.Equal(t, want, plain)
	c = n.Counters()
	assert.Equal(t, uint64(3), c.H2D.Copies)
	assert.Equal(t, uint64(2), c.H2H.Copies)

	require.NoError(t, n.HostUnregister(ptrOf(reg)))
	for _, p := range []unsafe.Pointer{d0a, d0b, d1} {
		require.NoError(t, n.Free(p))
	}
	require.NoError(t, n.FreeHost(ptrOf(pinned)))
}

func TestMemcpyChecks(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	const size = 4096
	d0 := mustMalloc(t, n, size)
	require.NoError(t, n.SetDevice(1))
	d1 := mustMalloc(t, n, size)
	plain := make([]byte, 2*size)
	h := ptrOf(plain)

	// Count 0 succeeds before any check: a NULL pointer, an undefined
	// kind, a bad stream (hicann/runtime src/acl/aclrt_impl/memory.cpp:653,688).
	n.ResetCounters()
	require.NoError(t, n.Memcpy(d0, size, h, 0, acl.MemcpyDeviceToHost))
	require.NoError(t, n.Memcpy(nil, 0, nil, 0, 42))
	require.NoError(t, n.MemcpyAsync(d0, size, d1, 0, acl.MemcpyDeviceToDevice, 0))
	require.NoError(t, n.MemcpyAsync(nil, 0, nil, 0, 42, 0x7ead_beef_0001))
	assert.Zero(t, n.Counters().Copies())

	// INNER and INTER DEVICE_TO_DEVICE are not translated by the ACL
	// layer (memory.cpp:162-199).
	requireCode(t, acl.CodeInvalidParam, n.Memcpy(d1, size, d0, size, acl.MemcpyInnerDeviceToDevice))
	requireCode(t, acl.CodeInvalidParam, n.Memcpy(d1, size, d0, size, acl.MemcpyInterDeviceToDevice))

	// Memory of two devices meets only with peer access.
	err := n.Memcpy(d1, size, d0, size, acl.MemcpyDeviceToDevice)
	requireCode(t, acl.CodeRTParamInvalid, err)
	assert.Contains(t, err.Error(), "peer access")
	require.NoError(t, n.DeviceEnablePeerAccess(0, 0))
	require.NoError(t, n.Memcpy(d1, size, d0, size, acl.MemcpyDeviceToDevice))

	// A synchronous copy's kind is not checked against the memory: the
	// copy goes by where the pointers live (api_error.cc:2129-2152).
	want := []byte("kind is ignored by a synchronous copy")
	copy(plain, want)
	require.NoError(t, n.Memcpy(d0, size, h, size, acl.MemcpyDeviceToHost))
	clear(plain)
	require.NoError(t, n.Memcpy(h, size, d0, size, acl.MemcpyHostToDevice))
	assert.Equal(t, want, plain[:len(want)])

	// A device range running past its allocation, and a host range running
	// into an arena, are refused before any byte is touched.
	requireCode(t, acl.CodeRTParamInvalid, n.Memcpy(h, 2*size, d0, 2*size, acl.MemcpyDeviceToHost))
	beforeArena := unsafe.Add(unsafe.Pointer(&n.arenas[0].mem[0]), -16)
	err = n.Memcpy(d0, size, beforeArena, 32, acl.MemcpyHostToDevice)
	requireCode(t, acl.CodeRTParamInvalid, err)
	assert.Contains(t, err.Error(), "runs into device or pinned memory")
	// Wrapping ranges.
	requireCode(t, acl.CodeRTParamInvalid, n.Memcpy(unsafe.Add(d0, 16), ^uintptr(0), h, ^uintptr(0)-8, acl.MemcpyHostToDevice))
	// destMax smaller than count: the runtime's check (api_error.cc:2138).
	requireCode(t, acl.CodeRTParamInvalid, n.Memcpy(d0, 10, h, 11, acl.MemcpyHostToDevice))
	require.NoError(t, n.Free(d0))
	require.NoError(t, n.Free(d1))
}

func TestMemsetValues(t *testing.T) {
	r := newRand(t)
	n := newTestNPU(t)
	const size = 100000
	d := mustMalloc(t, n, size)
	got := make([]byte, size)
	for _, v := range []int32{0, 1, 0x7f, 0xff, 0x1234, -1} {
		off := r.IntN(size)
		cnt := r.IntN(size - off + 1)
		require.NoError(t, n.Memset(d, size, 0x5a, size))
		require.NoError(t, n.Memset(unsafe.Add(d, off), uintptr(size-off), v, uintptr(cnt)))
		require.NoError(t, n.Memcpy(ptrOf(got), size, d, size, acl.MemcpyDeviceToHost))
		for i, b := range got {
			want := byte(0x5a)
			if i >= off && i < off+cnt {
				want = byte(v)
			}
			if b != want {
				t.Fatalf("value %#x: byte %d is %#x, want %#x", v, i, b, want)
			}
		}
	}
	c := n.Counters()
	assert.Equal(t, uint64(12), c.Memsets)
	require.NoError(t, n.Free(d))
}

// TestAsyncUseAfterFree: memory freed while a queued copy still needs it
// fails the copy on the stream (sticky), and nothing is written.
func TestAsyncUseAfterFree(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	const size = 4096
	pinned := mustMallocHost(t, n, size)
	fillByte(pinned, 9)
	d := mustMalloc(t, n, size)
	release := hold(t, n, s)
	require.NoError(t, n.MemcpyAsync(d, size, ptrOf(pinned), size, acl.MemcpyHostToDevice, s))
	require.NoError(t, n.MemcpyAsync(ptrOf(pinned), size, d, size, acl.MemcpyDeviceToHost, s))
	require.NoError(t, n.Free(d))
	d2 := mustMalloc(t, n, size) // very likely the same block
	require.NoError(t, n.Memset(d2, size, 1, size))
	release()
	err = n.SynchronizeStream(s)
	requireCode(t, acl.CodeRTDeviceMemError, err)
	assert.Contains(t, err.Error(), "was freed before the task ran")
	got := make([]byte, size)
	require.NoError(t, n.Memcpy(ptrOf(got), size, d2, size, acl.MemcpyDeviceToHost))
	assert.Equal(t, byte(1), got[0], "the stale copy must not write into the new allocation")
	assert.Equal(t, byte(9), pinned[0])
	require.NoError(t, n.DestroyStream(s))
	require.NoError(t, n.Free(d2))
	require.NoError(t, n.FreeHost(ptrOf(pinned)))
}

func TestAsyncCountsWhenExecuted(t *testing.T) {
	n := newTestNPU(t)
	const size = 1 << 16
	pinned := mustMallocHost(t, n, size)
	d := mustMalloc(t, n, size)
	n.ResetCounters()
	release := hold(t, n, 0)
	require.NoError(t, n.MemcpyAsync(d, size, ptrOf(pinned), size, acl.MemcpyHostToDevice, 0))
	require.NoError(t, n.MemsetAsync(d, size, 3, size, 0))
	assert.Zero(t, n.Counters().H2D.Copies, "not run yet")
	release()
	require.NoError(t, n.SynchronizeStream(0))
	c := n.Counters()
	assert.Equal(t, Traffic{1, size}, c.H2D)
	assert.Equal(t, uint64(1), c.Memsets)
	assert.Equal(t, uint64(3), c.Tasks, "hold, copy and memset")
	require.NoError(t, n.Free(d))
	require.NoError(t, n.FreeHost(ptrOf(pinned)))
}

func TestDirectionOfKind(t *testing.T) {
	for k, want := range map[acl.MemcpyKind]Direction{
		acl.MemcpyHostToHost: HostToHost, acl.MemcpyHostToDevice: HostToDevice,
		acl.MemcpyHostToBufToDevice: HostToDevice, acl.MemcpyDeviceToHost: DeviceToHost,
		acl.MemcpyDeviceToDevice: DeviceToDevice, acl.MemcpyInnerDeviceToDevice: DeviceToDevice,
		acl.MemcpyInterDeviceToDevice: DeviceToDevice,
	} {
		d, ok := DirectionOfKind(k)
		assert.True(t, ok)
		assert.Equal(t, want, d, "%v", k)
	}
	_, ok := DirectionOfKind(acl.MemcpyDefault)
	assert.False(t, ok)
	_, ok = DirectionOfKind(42)
	assert.False(t, ok)
	assert.Equal(t, "H2D", HostToDevice.String())
}
