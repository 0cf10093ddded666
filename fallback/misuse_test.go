package fallback

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyCall calls every acl.Backend method and hook with plausible
// arguments and returns the errors by name.
func everyCall(n *NPU) map[string]error {
	var word [64]byte
	p := unsafe.Pointer(&word[0])
	const h = 0x7ead_beef_0001
	errs := map[string]error{}
	add := func(name string, err error) { errs[name] = err }
	add("SetDevice", n.SetDevice(0))
	add("ResetDevice", n.ResetDevice(0))
	_, err := n.GetDevice()
	add("GetDevice", err)
	_, err = n.GetDeviceCount()
	add("GetDeviceCount", err)
	_, err = n.GetRunMode()
	add("GetRunMode", err)
	_, err = n.CreateContext(0)
	add("CreateContext", err)
	add("DestroyContext", n.DestroyContext(h))
	add("SetCurrentContext", n.SetCurrentContext(h))
	_, err = n.GetCurrentContext()
	add("GetCurrentContext", err)
	_, err = n.CreateStream()
	add("CreateStream", err)
	add("DestroyStream", n.DestroyStream(h))
	add("SynchronizeStream", n.SynchronizeStream(h))
	add("SynchronizeStreamWithTimeout", n.SynchronizeStreamWithTimeout(h, 1))
	_, err = n.CreateEvent()
	add("CreateEvent", err)
	_, err = n.CreateEventWithFlag(acl.EventSync)
	add("CreateEventWithFlag", err)
	add("RecordEvent", n.RecordEvent(h, h))
	add("SynchronizeEvent", n.SynchronizeEvent(h))
	add("StreamWaitEvent", n.StreamWaitEvent(h, h))
	_, err = n.EventElapsedTime(h, h)
	add("EventElapsedTime", err)
	add("DestroyEvent", n.DestroyEvent(h))
	_, err = n.Malloc(64, 0)
	add("Malloc", err)
	add("Free", n.Free(p))
	_, err = n.MallocHost(64)
	add("MallocHost", err)
	add("FreeHost", n.FreeHost(p))
	add("Memcpy", n.Memcpy(p, 32, unsafe.Add(p, 32), 32, acl.MemcpyHostToHost))
	add("MemcpyAsync", n.MemcpyAsync(p, 32, unsafe.Add(p, 32), 32, acl.MemcpyHostToHost, h))
	add("Memset", n.Memset(p, 64, 0, 64))
	add("MemsetAsync", n.MemsetAsync(p, 64, 0, 64, h))
	_, _, err = n.GetMemInfo(acl.HBMMem)
	add("GetMemInfo", err)
	_, err = n.HostRegister(p, 64, acl.HostRegisterMapped)
	add("HostRegister", err)
	add("HostUnregister", n.HostUnregister(p))
	add("HostRegisterV2", n.HostRegisterV2(p, 64, acl.HostRegMapped))
	_, err = n.HostGetDevicePointer(p, 0)
	add("HostGetDevicePointer", err)
	_, _, _, err = n.GetVersion()
	add("GetVersion", err)
	add("Enqueue", n.enqueueTask(h, func() error { return nil }))
	add("SynchronizeStreamContext", n.SynchronizeStreamContext(context.Background(), h))
	_, err = n.currentDevice()
	add("CurrentDevice", err)
	return errs
}

func TestEveryCallBeforeInitAndAfterClose(t *testing.T) {
	n, err := New(WithDeviceMemory(testMem), WithHostMemory(testMem))
	require.NoError(t, err)
	// The runtime makes no aclInit check (hicann/runtime: 100001 only in
	// src/acl/toolchain/dump.cpp): calls before aclInit get the code of
	// their own checks, never ACL_ERROR_UNINITIALIZE.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for name, err := range everyCall(n) {
		assert.NotEqual(t, acl.CodeUninitialize, acl.CodeOf(err), name+" before aclInit: %v", err)
	}
	assert.Empty(t, n.GetSocName())
	// aclFinalize before aclInit succeeds and counts as finalized
	// (acl.cpp:630-643).
	require.NoError(t, n.Finalize())
	requireCode(t, acl.CodeRepeatFinalize, n.Finalize())
	assert.NotEmpty(t, n.Leaks(), "aclFinalize released what the calls before aclInit created")
	n.ClearLeaks()
	require.NoError(t, n.Init(""))
	requireCode(t, acl.CodeRepeatInitialize, n.Init(""))
	assert.Equal(t, DefaultSocName, n.GetSocName())
	require.NoError(t, n.Close())
	for name, err := range everyCall(n) {
		assertCode(t, acl.CodeUninitialize, err, name+" after Close")
	}
	requireCode(t, acl.CodeUninitialize, n.Init(""))
	requireCode(t, acl.CodeUninitialize, n.Finalize())
	assert.Empty(t, n.GetSocName())
	assert.Empty(t, n.GetRecentErrMsg())
	var x byte
	assert.Equal(t, npuhook.PlaceInvalid, n.classify(unsafe.Pointer(&x)).Place)
	_, _, err = n.deviceBytes(unsafe.Pointer(&x), 1)
	requireCode(t, acl.CodeUninitialize, err)
	_, _, err = n.bytes("fallback.Bytes", unsafe.Pointer(&x), 1)
	requireCode(t, acl.CodeUninitialize, err)
	_ = n.Counters()
	n.ResetCounters()
	n.countCopy(HostToHost, 1)
	n.countLaunch()
	n.FailAllocation(1, 0)
	n.FailTask(1, 0)
	assert.Empty(t, n.Leaks())
	require.NoError(t, n.Close())
}

func TestInfo(t *testing.T) {
	n := newTestNPU(t, WithSocName("Ascend310P3"), WithVersion(2, 3, 4), WithDevices(5))
	assert.Equal(t, "fallback", n.Name())
	assert.Equal(t, "Ascend310P3", n.GetSocName())
	ma, mi, pa, err := n.GetVersion()
	require.NoError(t, err)
	assert.Equal(t, [3]int32{2, 3, 4}, [3]int32{ma, mi, pa})
	m, err := n.GetRunMode()
	require.NoError(t, err)
	assert.Equal(t, acl.RunModeHost, m)
	c, err := n.GetDeviceCount()
	require.NoError(t, err)
	assert.Equal(t, uint32(5), c)
}

// TestNullAndUndefinedArguments: the ACL-layer argument checks.
func TestNullAndUndefinedArguments(t *testing.T) {
	n := newTestNPU(t)
	d := mustMalloc(t, n, 64)
	var word [64]byte
	h := unsafe.Pointer(&word[0])
	// Codes as hicann/runtime @681ef76 returns them: the ACL layer's NULL
	// and size checks give 100000 (src/acl/aclrt_impl/*.cpp); the
	// runtime's value checks 107000 (src/runtime/api/impl/api_error.cc).
	for name, tc := range map[string]struct {
		want acl.Code
		err  error
	}{
		"Malloc(0)":                    {acl.CodeInvalidParam, errOf(n.Malloc(0, 0))},
		"MallocHost(0)":                {acl.CodeInvalidParam, errOf(n.MallocHost(0))},
		"Memcpy(kind -1)":              {acl.CodeInvalidParam, n.Memcpy(d, 64, h, 64, -1)},
		"Memcpy(kind 8)":               {acl.CodeInvalidParam, n.Memcpy(d, 64, h, 64, 8)},
		"Memcpy(kind 6)":               {acl.CodeInvalidParam, n.Memcpy(d, 64, h, 64, acl.MemcpyInnerDeviceToDevice)},
		"Memcpy(nil dst)":              {acl.CodeInvalidParam, n.Memcpy(nil, 64, h, 64, acl.MemcpyHostToDevice)},
		"Memcpy(nil src)":              {acl.CodeInvalidParam, n.Memcpy(d, 64, nil, 64, acl.MemcpyHostToDevice)},
		"Memcpy(destMax<count)":        {acl.CodeRTParamInvalid, n.Memcpy(d, 63, h, 64, acl.MemcpyHostToDevice)}, // api_error.cc:2138
		"Memset(nil)":                  {acl.CodeInvalidParam, n.Memset(nil, 64, 0, 64)},                         // memory.cpp:679
		"Memset(maxCount<count)":       {acl.CodeRTParamInvalid, n.Memset(d, 1, 0, 2)},                           // api_error.cc:3134
		"GetMemInfo(-1)":               {acl.CodeRTInvalidMemoryType, errOf3(n.GetMemInfo(-1))},                  // api_error.cc:3184-3187
		"GetMemInfo(18)":               {acl.CodeRTInvalidMemoryType, errOf3(n.GetMemInfo(18))},                  // api_error.cc:3184-3187
		"SyncTimeout(-2)":              {acl.CodeRTParamInvalid, n.SynchronizeStreamWithTimeout(0, -2)},          // stream.cpp:141-148
		"HostGetDevicePointer(flag)":   {acl.CodeInvalidParam, errOf(n.HostGetDevicePointer(h, 1))},              // memory.cpp:516
		"HostRegister(type 1)":         {acl.CodeRTFeatureNotSupport, errOf(n.HostRegister(pagePtr(t), 64, 1))},  // api_error.cc:1997-2002
		"HostRegister(size 0)":         {acl.CodeInvalidParam, errOf(n.HostRegister(pagePtr(t), 0, 0))},          // memory.cpp:495
		"HostRegisterV2(flag 0)":       {acl.CodeRTParamInvalid, n.HostRegisterV2(h, 64, 0)},                     // api_error.cc:2015-2021
		"HostRegisterV2(flag 1)":       {acl.CodeRTParamInvalid, n.HostRegisterV2(h, 64, 1)},                     // api_error.cc:2015-2021
		"HostRegister(unaligned)":      {acl.CodeRTParamInvalid, errOf(n.HostRegister(unsafe.Add(pagePtr(t), 8), 64, 0))},
		"DestroyStream(NULL)":          {acl.CodeInvalidParam, n.DestroyStream(0)},
		"DestroyEvent(NULL)":           {acl.CodeInvalidParam, n.DestroyEvent(0)},
		"DestroyContext(NULL)":         {acl.CodeInvalidParam, n.DestroyContext(0)},
		"SetCurrentContext(NULL)":      {acl.CodeInvalidParam, n.SetCurrentContext(0)},
		"CreateEventWithFlag(0x10)":    {acl.CodeInvalidParam, errOf(n.CreateEventWithFlag(0x10))},
		"EventElapsedTime(NULL, NULL)": {acl.CodeInvalidParam, errOf32(n.EventElapsedTime(0, 0))},
	} {
		assertCode(t, tc.want, tc.err, name)
	}
	// An undefined malloc policy is accepted (memory.cpp:320-339).
	for _, policy := range []acl.MemMallocPolicy{8, 0x200} {
		p, err := n.Malloc(64, policy)
		require.NoError(t, err, "policy %#x", uint32(policy))
		require.NoError(t, n.Free(p))
	}
	// Device memory cannot be host-registered.
	_, err := n.HostRegister(d, 64, 0)
	if uintptr(d)%4096 == 0 {
		assertCode(t, acl.CodeRTInvalidMemoryType, err)
	}
	assertCode(t, acl.CodeRTInvalidMemoryType, n.HostRegisterV2(d, 64, acl.HostRegMapped))
	require.NoError(t, n.Free(d))
}

func pagePtr(t *testing.T) unsafe.Pointer { return ptrOf(pages(t, 1)) }

func errOf[T any](_ T, err error) error          { return err }
func errOf3[A, B any](_ A, _ B, err error) error { return err }
func errOf32(_ float32, err error) error         { return err }

// TestRandomMisuseNeverPanics throws random calls with pointers that are
// live, freed, interior, past the end, pinned or plain (only within a
// plain buffer, which stays valid) at the NPU: each call succeeds or
// fails with a known ACL code; nothing panics or crashes.
func TestRandomMisuseNeverPanics(t *testing.T) {
	r := newRand(t)
	n := newTestNPU(t, WithDevices(2))
	// The plain buffer is mmap'ed, not Go heap: random calls register it and
	// then write it from stream goroutines and from this one at once, a race
	// in the program's own memory that is not the NPU's to prevent.
	plain := pages(t, 256)
	var ptrs []unsafe.Pointer
	var streams []acl.StreamHandle
	var events []acl.EventHandle
	pick := func() unsafe.Pointer {
		switch r.IntN(4) {
		case 0:
			return unsafe.Add(ptrOf(plain), r.IntN(len(plain)/2))
		case 1:
			a := n.arenas[r.IntN(len(n.arenas))]
			return unsafe.Add(unsafe.Pointer(&a.mem[0]), r.IntN(1<<20))
		}
		if len(ptrs) == 0 {
			return ptrOf(plain)
		}
		return unsafe.Add(ptrs[r.IntN(len(ptrs))], r.IntN(3)*r.IntN(600))
	}
	size := func() uintptr { return uintptr(r.IntN(64 << 10)) }
	stream := func() acl.StreamHandle {
		if len(streams) == 0 || r.IntN(5) == 0 {
			return acl.StreamHandle(r.IntN(3))
		}
		return streams[r.IntN(len(streams))]
	}
	event := func() acl.EventHandle {
		if len(events) == 0 || r.IntN(5) == 0 {
			return acl.EventHandle(r.IntN(3))
		}
		return events[r.IntN(len(events))]
	}
	keep := func(p unsafe.Pointer, err error) error {
		if err == nil {
			ptrs = append(ptrs, p) // later freed, interior or past-the-end uses
		}
		return err
	}
	calls := []func() error{
		func() error { return keep(n.Malloc(size()+1, 0)) },
		func() error { return keep(n.MallocHost(size() + 1)) },
		func() error { return n.Free(pick()) },
		func() error { return n.FreeHost(pick()) },
		func() error {
			c := size()
			return n.Memcpy(pick(), c+uintptr(r.IntN(2)), pick(), c, acl.MemcpyKind(r.IntN(9)))
		},
		func() error {
			c := size()
			return n.MemcpyAsync(pick(), c, pick(), c, acl.MemcpyKind(r.IntN(9)), stream())
		},
		func() error { c := size(); return n.Memset(pick(), c, r.Int32(), c) },
		func() error { c := size(); return n.MemsetAsync(pick(), c, r.Int32(), c, stream()) },
		func() error { s, err := n.CreateStream(); streams = append(streams, s); return err },
		func() error { return n.DestroyStream(stream()) },
		func() error { return n.SynchronizeStreamWithTimeout(stream(), int32(r.IntN(3))-1) },
		func() error { e, err := n.CreateEvent(); events = append(events, e); return err },
		func() error { return n.RecordEvent(event(), stream()) },
		func() error { return n.StreamWaitEvent(stream(), event()) },
		func() error { return n.SynchronizeEvent(event()) },
		func() error { _, err := n.EventElapsedTime(event(), event()); return err },
		func() error { return n.DestroyEvent(event()) },
		func() error { return n.SetDevice(int32(r.IntN(4)) - 1) },
		func() error { return n.ResetDevice(int32(r.IntN(3))) },
		func() error { return n.HostRegisterV2(pick(), uint64(size()), acl.HostRegMapped) },
		func() error { return n.HostUnregister(pick()) },
		func() error { _, err := n.HostGetDevicePointer(pick(), 0); return err },
		func() error { _, _, err := n.deviceBytes(pick(), size()); return err },
	}
	codes := map[acl.Code]int{}
	for range 5000 {
		err := calls[r.IntN(len(calls))]()
		if err == nil {
			continue
		}
		var e *acl.Error
		require.True(t, errors.As(err, &e), "%v", err)
		require.True(t, e.Code.Known(), "%v", err)
		require.NotEmpty(t, e.Msg)
		codes[e.Code]++
	}
	t.Logf("error codes seen: %v", codes)
	// Everything left is released by aclFinalize.
	_ = n.SetDevice(0)
	require.NoError(t, n.Finalize())
	runtime.KeepAlive(plain) // queued tasks may use registered parts of it until aclFinalize
	c := n.Counters()
	assert.Zero(t, c.Streams+c.Events+c.Registrations)
	assert.Equal(t, []uint64{0, 0}, c.LiveBytes)
}
