package fallback

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMallocAlignmentAndCapacity(t *testing.T) {
	n := newTestNPU(t)
	free, total, err := n.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	require.Equal(t, uintptr(testMem), total)
	require.Equal(t, total, free)

	p := mustMalloc(t, n, 1)
	assert.Zero(t, uintptr(p)%Alignment)
	free, _, err = n.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, total-Alignment, free, "a 1-byte allocation takes one 512-byte block")

	// The rest of the device in one piece, then nothing more.
	rest := mustMalloc(t, n, total-Alignment)
	_, err = n.Malloc(1, acl.MemMallocHugeFirst)
	requireCode(t, acl.CodeRTMemoryAllocation, err)
	assert.Contains(t, err.Error(), "0 of 67108864 bytes free")
	require.NoError(t, n.Free(p))
	require.NoError(t, n.Free(rest))
	free, _, err = n.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, total, free)

	_, err = n.Malloc(total+1, acl.MemMallocHugeFirst)
	requireCode(t, acl.CodeRTMemoryAllocation, err)
}

func TestDevicesHaveSeparateMemory(t *testing.T) {
	n := newTestNPU(t, WithDevices(3))
	var ptrs []unsafe.Pointer
	for d := range int32(3) {
		require.NoError(t, n.SetDevice(d))
		p := mustMalloc(t, n, 4096)
		assert.Equal(t, npuhook.Placement{Place: npuhook.PlaceDevice, Device: d, Base: uintptr(p), Size: 4096}, n.classify(p))
		free, _, err := n.GetMemInfo(acl.HBMMem)
		require.NoError(t, err)
		assert.Equal(t, uintptr(testMem-4096), free, "device %d", d)
		ptrs = append(ptrs, p)
	}
	// Any context may free any device's memory (unified addressing).
	for _, p := range ptrs {
		require.NoError(t, n.Free(p))
	}
	c := n.Counters()
	assert.Equal(t, []uint64{0, 0, 0}, c.LiveBytes)
	assert.Equal(t, uint64(3), c.Allocs)
	assert.Equal(t, uint64(3), c.Frees)
}

func TestFreeMisuse(t *testing.T) {
	n := newTestNPU(t)
	p := mustMalloc(t, n, 1000)
	host := mustMallocHost(t, n, 64)
	var word [8]byte

	requireCode(t, acl.CodeInvalidParam, n.Free(nil))
	err := n.Free(unsafe.Add(p, 512))
	requireCode(t, acl.CodeRTParamInvalid, err)
	assert.Contains(t, err.Error(), "points 512 bytes into allocation", "interior pointer message")
	assert.Equal(t, err.(*acl.Error).Msg, n.GetRecentErrMsg(), "the thread's recent message is the error's")
	assert.Empty(t, n.GetRecentErrMsg(), "reading the message clears it")

	requireCode(t, acl.CodeRTParamInvalid, n.Free(unsafe.Pointer(&word[0])))
	requireCode(t, acl.CodeRTParamInvalid, n.Free(ptrOf(host)), "pinned host memory is not device memory")
	require.NoError(t, n.Free(p))
	err = n.Free(p)
	requireCode(t, acl.CodeRTParamInvalid, err)
	assert.Contains(t, err.Error(), "was freed", "double free message")

	requireCode(t, acl.CodeInvalidParam, n.FreeHost(nil))
	requireCode(t, acl.CodeRTParamInvalid, n.FreeHost(unsafe.Pointer(&word[0])))
	requireCode(t, acl.CodeRTParamInvalid, n.FreeHost(unsafe.Add(ptrOf(host), 8)))
	require.NoError(t, n.FreeHost(ptrOf(host)))
	requireCode(t, acl.CodeRTParamInvalid, n.FreeHost(ptrOf(host)))
	assert.Empty(t, n.Leaks())
}

func TestClassify(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	d0 := mustMalloc(t, n, 3000)
	require.NoError(t, n.SetDevice(1))
	d1 := mustMalloc(t, n, 100)
	pinned := mustMallocHost(t, n, 700)
	plain := make([]byte, 64)
	reg := pages(t, 2)
	_, err := n.HostRegister(ptrOf(reg), uint64(len(reg)), acl.HostRegisterMapped)
	require.NoError(t, err)

	for _, c := range []struct {
		p    unsafe.Pointer
		want npuhook.Placement
	}{
		{d0, npuhook.Placement{Place: npuhook.PlaceDevice, Device: 0, Base: uintptr(d0), Size: 3000}},
		{unsafe.Add(d0, 2999), npuhook.Placement{Place: npuhook.PlaceDevice, Device: 0, Base: uintptr(d0), Size: 3000}},
		{unsafe.Add(d0, 3000), npuhook.Placement{Place: npuhook.PlaceInvalid, Device: 0}},
		{d1, npuhook.Placement{Place: npuhook.PlaceDevice, Device: 1, Base: uintptr(d1), Size: 100}},
		{ptrOf(pinned), npuhook.Placement{Place: npuhook.PlacePinned, Device: -1, Base: uintptr(ptrOf(pinned)), Size: 700}},
		{unsafe.Add(ptrOf(reg), 5000), npuhook.Placement{Place: npuhook.PlaceRegistered, Device: -1, Base: uintptr(ptrOf(reg)), Size: uintptr(len(reg))}},
		{ptrOf(plain), npuhook.Placement{Place: npuhook.PlaceHost, Device: -1}},
		{nil, npuhook.Placement{Place: npuhook.PlaceHost, Device: -1}},
	} {
		assert.Equal(t, c.want, n.classify(c.p), "%p", c.p)
	}
	assert.True(t, n.classify(d1).DeviceAccessible())
	assert.True(t, n.classify(ptrOf(reg)).DeviceAccessible())
	assert.False(t, n.classify(ptrOf(pinned)).DeviceAccessible())
	require.NoError(t, n.Free(d0))
	assert.Equal(t, npuhook.Placement{Place: npuhook.PlaceInvalid, Device: 0}, n.classify(d0), "freed memory")
	require.NoError(t, n.HostUnregister(ptrOf(reg)))
	assert.Equal(t, npuhook.PlaceHost, n.classify(ptrOf(reg)).Place)
	require.NoError(t, n.Free(d1))
	require.NoError(t, n.FreeHost(ptrOf(pinned)))
}

func TestRecentErrMsgPerThread(t *testing.T) {
	n := newTestNPU(t)
	err := n.SetDevice(99)
	requireCode(t, acl.CodeRTInvalidDeviceID, err)
	onThread(func() {
		assert.Empty(t, n.GetRecentErrMsg(), "another thread has no message")
		var x [8]byte
		assertCode(t, acl.CodeRTContextNull, n.Free(unsafe.Pointer(&x[0])))
		assert.Contains(t, n.GetRecentErrMsg(), "has no current context")
	})
	msg := n.GetRecentErrMsg()
	assert.Contains(t, msg, "device id 99")
	assert.Equal(t, err.(*acl.Error).Msg, msg)
}

func TestOutOfMemoryMessageNamesTheDevice(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	require.NoError(t, n.SetDevice(1))
	_, err := n.Malloc(testMem+1, acl.MemMallocHugeFirst)
	requireCode(t, acl.CodeRTMemoryAllocation, err)
	assert.True(t, strings.Contains(err.Error(), "device 1"), err.Error())
	assert.ErrorIs(t, err, acl.ErrBadAlloc)
}

func TestMallocHostIsPinnedArena(t *testing.T) {
	r := newRand(t)
	n := newTestNPU(t)
	var blocks [][]byte
	for i := range 20 {
		b := mustMallocHost(t, n, 1+r.IntN(100000))
		assert.Zero(t, uintptr(ptrOf(b))%Alignment)
		assert.Equal(t, npuhook.PlacePinned, n.classify(ptrOf(b)).Place)
		fillByte(b, byte(i))
		blocks = append(blocks, b)
	}
	for i, b := range blocks {
		require.Equal(t, byte(i), b[0], "block %d", i)
		require.Equal(t, byte(i), b[len(b)-1], "block %d", i)
	}
	c := n.Counters()
	assert.Equal(t, uint64(20), c.HostAllocs)
	for _, b := range blocks {
		require.NoError(t, n.FreeHost(ptrOf(b)))
	}
	assert.Zero(t, n.Counters().LiveHostBytes)
	_, err := n.MallocHost(testMem + 1)
	requireCode(t, acl.CodeRTMemoryAllocation, err)
	assert.Contains(t, err.Error(), "pinned host memory")
}

func fillByte(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

func TestLargeCapacityCostsNothingUntilTouched(t *testing.T) {
	// 4 devices × 64 GiB of address space: only what is touched is real.
	n, err := New(WithDevices(4), WithDeviceMemory(64<<30), WithHostMemory(64<<30))
	require.NoError(t, err)
	defer n.Close()
	require.NoError(t, n.Init(""))
	onThread(func() {
		require.NoError(t, n.SetDevice(3))
		p, err := n.Malloc(32<<30, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		assert.Equal(t, npuhook.PlaceDevice, n.classify(unsafe.Add(p, 32<<30-1)).Place)
		require.NoError(t, n.Memset(unsafe.Add(p, 16<<30), 4096, 7, 4096))
		require.NoError(t, n.Free(p))
		require.NoError(t, n.ResetDevice(3))
	})
	require.NoError(t, n.Finalize())
	assert.Empty(t, n.Leaks())
}

func TestNewRejectsBadOptions(t *testing.T) {
	for i, opts := range [][]Option{
		{WithDevices(0)}, {WithDevices(MaxDevices + 1)},
		{WithDeviceMemory(0)}, {WithDeviceMemory(MaxMemory + 1)},
		{WithHostMemory(1)}, {WithClock(nil)},
		{WithAllocFault(0, 0)}, {WithTaskFault(-1, 0)},
	} {
		n, err := New(opts...)
		assert.Nil(t, n, "case %d", i)
		assertCode(t, acl.CodeInvalidParam, err, fmt.Sprintf("case %d", i))
	}
}
