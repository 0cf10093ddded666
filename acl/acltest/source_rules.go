package acltest

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sourceRules: runtime rules taken from the CANN source (hicann/runtime
// @681ef76) that the first round did not model: stream failure modes, peer
// access between devices, aclrtResetDeviceForce, events and streams of one
// device, aclrtHostRegisterV2 flags. Each case names its source line.
func (s *suite) sourceRules(t *testing.T) {
	t.Run("StopOnFailure", s.stopOnFailure)
	t.Run("FailureModeChecks", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		ok(t, "SetStreamFailureMode(CONTINUE), the mode it has", func() error { return s.b.SetStreamFailureMode(st, acl.ContinueOnFailure) })
		onThread(t, func() {
			ctx, err := s.b.CreateContext(s.dev)
			if !check(t, err, "CreateContext") {
				return
			}
			// The mode checks come first, then the context
			// (src/runtime/api/impl/api_impl.cc:2012-2033).
			expect(t, acl.CodeRTStreamContext, "SetStreamFailureMode(STOP) of another context's stream", func() error {
				return s.b.SetStreamFailureMode(st, acl.StopOnFailure)
			})
			check(t, s.b.DestroyContext(ctx), "DestroyContext")
		})
		s.undefined(t, "unknown stream", func(t *testing.T) {
			expect(t, acl.CodeRTInvalidHandle, "SetStreamFailureMode(unknown stream)", func() error {
				return s.b.SetStreamFailureMode(bogusHandle, acl.StopOnFailure)
			})
		})
	})
	t.Run("PeerAccess", s.peerAccess)
	t.Run("ResetDeviceForce", func(t *testing.T) {
		// The reference count of aclrtSetDevice is dropped at once
		// (src/acl/aclrt_impl/device.cpp:101-108; acl_rt.h:1587-1607).
		// It releases every context of the device, so it runs on a
		// device the suite has no context on.
		if s.devCount < 2 {
			t.Skip("needs a second device")
		}
		other := (s.dev + 1) % s.devCount
		onThread(t, func() {
			for range 3 {
				if !check(t, s.b.SetDevice(other), "SetDevice") {
					return
				}
			}
			check(t, s.b.ResetDevice(other), "ResetDevice (two references left)")
			check(t, s.b.ResetDeviceForce(other), "ResetDeviceForce")
			// runtime.cc:2931: nothing left to release → 507007.
			expect(t, acl.CodeRTContextReleaseError, "ResetDevice after ResetDeviceForce", func() error { return s.b.ResetDevice(other) })
		})
	})
	t.Run("EventOfAnotherDevice", func(t *testing.T) {
		// Event and stream must be on one device; the code is not in the
		// public source: both backends give ACL_ERROR_RT_STREAM_CONTEXT.
		if s.devCount < 2 {
			t.Skip("needs two devices")
		}
		other := (s.dev + 1) % s.devCount
		var ev acl.EventHandle
		onThread(t, func() {
			ctx, err := s.b.CreateContext(other)
			if !check(t, err, "CreateContext(other device)") {
				return
			}
			ev, err = s.b.CreateEvent()
			check(t, err, "CreateEvent on the other device")
			t.Cleanup(func() {
				onThread(t, func() {
					check(t, s.b.SetCurrentContext(ctx), "SetCurrentContext")
					check(t, s.b.DestroyEvent(ev), "DestroyEvent")
					check(t, s.b.DestroyContext(ctx), "DestroyContext")
				})
			})
		})
		require.NotZero(t, ev)
		s.bind(t)
		st := s.newStream(t)
		// Event and stream on different devices: forbidden by the documentation, the code is the driver's → 107003 (not settled; docs/misuse.md).
		expect(t, acl.CodeRTStreamContext, "RecordEvent(event of another device)", func() error { return s.b.RecordEvent(ev, st) })
		expect(t, acl.CodeRTStreamContext, "StreamWaitEvent(event of another device)", func() error { return s.b.StreamWaitEvent(st, ev) })
		expect(t, acl.CodeRTStreamContext, "ResetEvent(event of another device)", func() error { return s.b.ResetEvent(ev, st) })
	})
	t.Run("StreamLimit", func(t *testing.T) {
		s.resourceLimit(t, s.opt.StreamLimit, acl.CodeRTNoStreamResource, "CreateStream", func() (uintptr, error) {
			h, err := s.b.CreateStream()
			return uintptr(h), err
		}, func(h uintptr) error { return s.b.DestroyStream(acl.StreamHandle(h)) })
	})
	t.Run("EventLimit", func(t *testing.T) {
		s.resourceLimit(t, s.opt.EventLimit, acl.CodeRTNoEventResource, "CreateEvent", func() (uintptr, error) {
			h, err := s.b.CreateEvent()
			return uintptr(h), err
		}, func(h uintptr) error { return s.b.DestroyEvent(acl.EventHandle(h)) })
	})
	t.Run("ResetEvent", func(t *testing.T) {
		// aclrtResetEvent (hicann/runtime src/acl/aclrt_impl/event.cpp:113-121,
		// src/runtime/api/impl/api_impl.cc:2199-2216): the stream must be of
		// the current context (→ 107003) and a context must be current
		// (→ 107002); the reset is a task of the stream, run in its order
		// (src/runtime/core/src/event/event.cc:764-792).
		s.bind(t)
		st := s.newStream(t)
		ev := s.newEvent(t, acl.EventSync)
		s.onFreshThread(t, func() {
			expect(t, acl.CodeRTContextNull, "ResetEvent without a current context", func() error { return s.b.ResetEvent(ev, 0) })
		})
		onThread(t, func() {
			ctx, err := s.b.CreateContext(s.dev)
			if !check(t, err, "CreateContext") {
				return
			}
			expect(t, acl.CodeRTStreamContext, "ResetEvent on another context's stream", func() error { return s.b.ResetEvent(ev, st) })
			check(t, s.b.DestroyContext(ctx), "DestroyContext")
		})
		s.undefined(t, "unknown stream", func(t *testing.T) {
			expect(t, acl.CodeRTInvalidHandle, "ResetEvent(unknown stream)", func() error { return s.b.ResetEvent(ev, bogusHandle) })
		})
		// Several arguments wrong at once: the handles are checked first
		// (src/runtime/api/api_c.cc:773-774, api_c_stream.cc:127-128 →
		// 107017), then the event's ACL_EVENT_SYNC in the error decorator
		// (api_error.cc:1760-1762, 1414-1416 → 207000), then the context
		// and the stream in the implementation (api_impl.cc:2202-2216,
		// 1594-1610 → 107002 / 107003).
		noSync := s.newEvent(t, acl.EventTimeLine) // without ACL_EVENT_SYNC
		s.onFreshThread(t, func() {
			expect(t, acl.CodeRTFeatureNotSupport, "ResetEvent(event without ACL_EVENT_SYNC) without a current context", func() error {
				return s.b.ResetEvent(noSync, 0)
			})
			expect(t, acl.CodeRTFeatureNotSupport, "StreamWaitEvent(event without ACL_EVENT_SYNC) without a current context", func() error {
				return s.b.StreamWaitEvent(0, noSync)
			})
		})
		onThread(t, func() {
			ctx, err := s.b.CreateContext(s.dev)
			if !check(t, err, "CreateContext") {
				return
			}
			expect(t, acl.CodeRTFeatureNotSupport, "ResetEvent(event without ACL_EVENT_SYNC) on another context's stream", func() error {
				return s.b.ResetEvent(noSync, st)
			})
			expect(t, acl.CodeRTFeatureNotSupport, "StreamWaitEvent(event without ACL_EVENT_SYNC) on another context's stream", func() error {
				return s.b.StreamWaitEvent(st, noSync)
			})
			check(t, s.b.DestroyContext(ctx), "DestroyContext")
		})
		s.undefined(t, "unknown stream, event without ACL_EVENT_SYNC", func(t *testing.T) {
			expect(t, acl.CodeRTInvalidHandle, "ResetEvent(event without ACL_EVENT_SYNC, unknown stream)", func() error {
				return s.b.ResetEvent(noSync, bogusHandle)
			})
			expect(t, acl.CodeRTInvalidHandle, "StreamWaitEvent(unknown stream, event without ACL_EVENT_SYNC)", func() error {
				return s.b.StreamWaitEvent(bogusHandle, noSync)
			})
		})
		// Queued behind held work, the reset waits its turn, and the
		// record after it completes the event once the stream runs.
		release := s.hold(t, st)
		ok(t, "RecordEvent", func() error { return s.b.RecordEvent(ev, st) })
		ok(t, "ResetEvent behind held work", func() error { return s.b.ResetEvent(ev, st) })
		ok(t, "RecordEvent after the reset", func() error { return s.b.RecordEvent(ev, st) })
		release()
		ok(t, "SynchronizeEvent", func() error { return s.b.SynchronizeEvent(ev) })
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
	})
	t.Run("HostRegisterV2Flags", func(t *testing.T) {
		// src/runtime/api/impl/api_error.cc:2015-2021: an OR of MAPPED,
		// IOMEMORY, READONLY and PINNED, at least one.
		s.bind(t)
		mem := pages(t, 1)
		for _, flag := range []acl.HostRegFlag{0, 1, 0x20, acl.HostRegMapped | 0x100} {
			expect(t, acl.CodeRTParamInvalid, "HostRegisterV2(undefined flag)", func() error {
				return s.b.HostRegisterV2(hostPtr(mem), pageSize, flag)
			})
		}
		ok(t, "HostRegisterV2(PINNED)", func() error { return s.b.HostRegisterV2(hostPtr(mem), pageSize, acl.HostRegPinned) })
		expect(t, acl.CodeHostMemoryAlreadyRegistered, "HostRegisterV2(PINNED) again", func() error {
			return s.b.HostRegisterV2(hostPtr(mem), pageSize, acl.HostRegPinned)
		})
		// PINNED alone pins without mapping (src/runtime/api/impl/
		// api_impl.cc:2593-2609): no device pointer (api_impl.cc:2652-2660 → 107000).
		expect(t, acl.CodeRTParamInvalid, "HostGetDevicePointer of memory registered PINNED only", func() error {
			_, err := s.b.HostGetDevicePointer(hostPtr(mem), 0)
			return err
		})
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(hostPtr(mem)) })
		ok(t, "HostRegisterV2(MAPPED|PINNED)", func() error {
			return s.b.HostRegisterV2(hostPtr(mem), pageSize, acl.HostRegMapped|acl.HostRegPinned)
		})
		ok(t, "HostGetDevicePointer of mapped memory", func() error {
			p, err := s.b.HostGetDevicePointer(hostPtr(mem), 0)
			if err == nil && p == nil {
				t.Error("HostGetDevicePointer gave NULL")
			}
			return err
		})
		ok(t, "HostUnregister", func() error { return s.b.HostUnregister(hostPtr(mem)) })
	})
}

// stopOnFailure: ACL_STOP_ON_FAILURE on one stream makes the first failure
// on any stream of its context stop the context (docs/zh/api_ref/
// 06_stream_management.md:475, 484-486; src/runtime/core/src/stream/
// stream.cc:4336-4352, 1772-1788; src/runtime/core/src/context/
// context.cc:2889). It runs in a context of its own, which it destroys.
func (s *suite) stopOnFailure(t *testing.T) {
	if s.opt.FailNextTask == nil {
		t.Skip("the backend cannot fail a stream task (Options.FailNextTask is nil)")
	}
	runtime.LockOSThread() // never unlocked: the thread ends with the subtest
	ctx, err := s.b.CreateContext(s.dev)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.b.DestroyContext(ctx)) }()
	const n = 1024
	x, err := s.b.Malloc(n, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.b.Free(x)) }()
	st, err := s.b.CreateStream()
	require.NoError(t, err)
	st2, err := s.b.CreateStream()
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, s.b.DestroyStream(st))
		assert.NoError(t, s.b.DestroyStream(st2))
	}()

	ok(t, "SetStreamFailureMode(STOP)", func() error { return s.b.SetStreamFailureMode(st, acl.StopOnFailure) })
	ok(t, "SetStreamFailureMode(STOP) again (the mode it has)", func() error { return s.b.SetStreamFailureMode(st, acl.StopOnFailure) })
	// src/runtime/api/impl/api_impl.cc:2018-2021
	expect(t, acl.CodeRTFeatureNotSupport, "SetStreamFailureMode(CONTINUE) after STOP", func() error {
		return s.b.SetStreamFailureMode(st, acl.ContinueOnFailure)
	})
	ok(t, "Memset", func() error { return s.b.Memset(x, n, 0x33, n) })
	release := s.hold(t, st)
	ok(t, "FailNextTask", func() error { return s.opt.FailNextTask(st, acl.CodeRTAICoreException) })
	ok(t, "MemsetAsync (fails on the device)", func() error { return s.b.MemsetAsync(x, n, 0x11, n, st) })
	ok(t, "MemsetAsync behind the failure (queued)", func() error { return s.b.MemsetAsync(x, n, 0x22, n, st) })
	release()
	for range 2 {
		expect(t, acl.CodeRTAICoreException, "SynchronizeStream (sticky)", func() error { return s.b.SynchronizeStream(st) })
	}
	got := make([]byte, n)
	ok(t, "Memcpy D2H", func() error { return s.b.Memcpy(hostPtr(got), n, x, n, acl.MemcpyDeviceToHost) })
	assert.Equal(t, fill(n, 0x33), got, "the failed task and the one behind it must not run")
	// The whole context stopped: another stream reports the failure and
	// takes no new task, nor does the default stream.
	expect(t, acl.CodeRTAICoreException, "SynchronizeStream(another stream of the context)", func() error { return s.b.SynchronizeStream(st2) })
	expect(t, acl.CodeRTAICoreException, "MemsetAsync on another stream of the context", func() error { return s.b.MemsetAsync(x, n, 0x44, n, st2) })
	expect(t, acl.CodeRTAICoreException, "MemsetAsync on the default stream", func() error { return s.b.MemsetAsync(x, n, 0x44, n, 0) })
	ok(t, "Memcpy D2H", func() error { return s.b.Memcpy(hostPtr(got), n, x, n, acl.MemcpyDeviceToHost) })
	assert.Equal(t, fill(n, 0x33), got)
}

// peerAccess: aclrtDeviceCanAccessPeer / EnablePeerAccess /
// DisablePeerAccess (src/acl/aclrt_impl/memory.cpp:881-960). A copy
// between memory of two devices needs peer access; the code when it is
// missing is the driver's (not in the public source): both backends give
// ACL_ERROR_RT_PARAM_INVALID.
func (s *suite) peerAccess(t *testing.T) {
	s.bind(t)
	expect(t, acl.CodeInvalidParam, "DeviceCanAccessPeer(same device)", func() error {
		_, err := s.b.DeviceCanAccessPeer(s.dev, s.dev)
		return err
	})
	expect(t, acl.CodeInvalidParam, "DeviceEnablePeerAccess(current device)", func() error { return s.b.DeviceEnablePeerAccess(s.dev, 0) })
	expect(t, acl.CodeFeatureUnsupported, "DeviceEnablePeerAccess(flags 1)", func() error { return s.b.DeviceEnablePeerAccess(s.dev, 1) })
	expect(t, acl.CodeRTInvalidDeviceID, "DeviceEnablePeerAccess(bad id)", func() error { return s.b.DeviceEnablePeerAccess(s.devCount+3, 0) })
	if s.devCount < 2 {
		t.Skip("needs two devices")
	}
	other := (s.dev + 1) % s.devCount
	var can int32
	ok(t, "DeviceCanAccessPeer", func() error {
		var err error
		can, err = s.b.DeviceCanAccessPeer(s.dev, other)
		return err
	})
	assert.Equal(t, int32(1), can)
	const n = 4096
	here := s.devMem(t, n)
	var there unsafe.Pointer
	onThread(t, func() {
		ctx, err := s.b.CreateContext(other)
		if !check(t, err, "CreateContext(other device)") {
			return
		}
		there, err = s.b.Malloc(n, acl.MemMallocHugeFirst)
		check(t, err, "Malloc on the other device")
		check(t, s.b.DestroyContext(ctx), "DestroyContext")
	})
	require.NotNil(t, there)
	defer func() { assert.NoError(t, s.b.Free(there)) }()
	want := s.randBytes(n)
	ok(t, "Memcpy H2D", func() error { return s.b.Memcpy(here, n, hostPtr(want), n, acl.MemcpyHostToDevice) })
	// Peer access is required (acl_rt.h:2995-3034); the code is the driver's → 107000 (not settled).
	expect(t, acl.CodeRTParamInvalid, "Memcpy between devices without peer access", func() error {
		return s.b.Memcpy(there, n, here, n, acl.MemcpyDeviceToDevice)
	})
	ok(t, "DeviceEnablePeerAccess", func() error { return s.b.DeviceEnablePeerAccess(other, 0) })
	ok(t, "Memcpy between devices with peer access", func() error { return s.b.Memcpy(there, n, here, n, acl.MemcpyDeviceToDevice) })
	got := make([]byte, n)
	ok(t, "Memcpy D2H from the other device", func() error { return s.b.Memcpy(hostPtr(got), n, there, n, acl.MemcpyDeviceToHost) })
	assert.Equal(t, want, got)
	ok(t, "DeviceDisablePeerAccess", func() error { return s.b.DeviceDisablePeerAccess(other) })
	expect(t, acl.CodeRTParamInvalid, "Memcpy between devices after DisablePeerAccess", func() error {
		return s.b.Memcpy(there, n, here, n, acl.MemcpyDeviceToDevice)
	})
}

// resourceLimit fills the suite's device with streams or events up to the
// declared limit: the next create is the driver's NO_STREAM_RESOURCES /
// NO_EVENT_RESOURCES, 207008 / 207007 (hicann/runtime
// src/runtime/core/src/common/errcode_manage.cc:93-94, 576-577; the counts
// are the driver's). Destroying one makes room again, and another device
// keeps its own count.
func (s *suite) resourceLimit(t *testing.T, limit int, code acl.Code, what string, create func() (uintptr, error), destroy func(uintptr) error) {
	if limit <= 0 {
		t.Skip("the backend declares no limit to fill (Options.StreamLimit/EventLimit is 0)")
	}
	s.bind(t)
	var made []uintptr
	defer func() {
		for _, h := range made {
			assert.NoError(t, destroy(h))
		}
	}()
	var err error
	for range limit + 1 {
		var h uintptr
		if h, err = create(); err != nil {
			break
		}
		made = append(made, h)
	}
	require.Error(t, err, "%s succeeded %d times on a device whose limit is %d", what, len(made), limit)
	expect(t, code, what+" beyond the device's limit", func() error { return err })
	require.NotEmpty(t, made, "the suite holds the whole limit itself")
	ok(t, "destroy one", func() error { return destroy(made[len(made)-1]) })
	made = made[:len(made)-1]
	var h uintptr
	ok(t, what+" after a destroy", func() error { h, err = create(); return err })
	made = append(made, h)
	expect(t, code, what+" at the limit again", func() error { _, err := create(); return err })
	if s.devCount < 2 {
		return
	}
	onThread(t, func() {
		ctx, err := s.b.CreateContext((s.dev + 1) % s.devCount)
		if !check(t, err, "CreateContext(other device)") {
			return
		}
		h, err := create()
		if check(t, err, "%s on another device", what) {
			check(t, destroy(h), "destroy on the other device")
		}
		check(t, s.b.DestroyContext(ctx), "DestroyContext")
	})
}
