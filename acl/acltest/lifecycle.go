package acltest

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runtimeCalls lists one call of every runtime Backend method, with
// arguments that pass every check except the initialization one: non-null
// pointers, non-zero sizes, defined enum values, non-null handles. Before
// aclInit and after aclFinalize each must fail with ACL_ERROR_UNINITIALIZE.
func runtimeCalls(b acl.Backend) []struct {
	name string
	call func() error
} {
	var word [64]byte
	p := unsafe.Pointer(&word[0])
	const h = bogusHandle
	return []struct {
		name string
		call func() error
	}{
		{"SetDevice", func() error { return b.SetDevice(0) }},
		{"ResetDevice", func() error { return b.ResetDevice(0) }},
		{"GetDevice", func() error { _, err := b.GetDevice(); return err }},
		{"GetDeviceCount", func() error { _, err := b.GetDeviceCount(); return err }},
		{"GetRunMode", func() error { _, err := b.GetRunMode(); return err }},
		{"CreateContext", func() error { _, err := b.CreateContext(0); return err }},
		{"DestroyContext", func() error { return b.DestroyContext(h) }},
		{"SetCurrentContext", func() error { return b.SetCurrentContext(h) }},
		{"GetCurrentContext", func() error { _, err := b.GetCurrentContext(); return err }},
		{"CreateStream", func() error { _, err := b.CreateStream(); return err }},
		{"DestroyStream", func() error { return b.DestroyStream(h) }},
		{"SynchronizeStream", func() error { return b.SynchronizeStream(h) }},
		{"SynchronizeStreamWithTimeout", func() error { return b.SynchronizeStreamWithTimeout(h, 10) }},
		{"CreateEvent", func() error { _, err := b.CreateEvent(); return err }},
		{"CreateEventWithFlag", func() error { _, err := b.CreateEventWithFlag(acl.EventSync); return err }},
		{"RecordEvent", func() error { return b.RecordEvent(h, h) }},
		{"SynchronizeEvent", func() error { return b.SynchronizeEvent(h) }},
		{"StreamWaitEvent", func() error { return b.StreamWaitEvent(h, h) }},
		{"EventElapsedTime", func() error { _, err := b.EventElapsedTime(h, h); return err }},
		{"DestroyEvent", func() error { return b.DestroyEvent(h) }},
		{"Malloc", func() error { _, err := b.Malloc(64, acl.MemMallocHugeFirst); return err }},
		{"Free", func() error { return b.Free(p) }},
		{"MallocHost", func() error { _, err := b.MallocHost(64); return err }},
		{"FreeHost", func() error { return b.FreeHost(p) }},
		{"Memcpy", func() error { return b.Memcpy(p, 32, unsafe.Add(p, 32), 32, acl.MemcpyHostToHost) }},
		{"MemcpyAsync", func() error {
			return b.MemcpyAsync(p, 32, unsafe.Add(p, 32), 32, acl.MemcpyHostToHost, h)
		}},
		{"Memset", func() error { return b.Memset(p, 64, 0, 64) }},
		{"MemsetAsync", func() error { return b.MemsetAsync(p, 64, 0, 64, h) }},
		{"GetMemInfo", func() error { _, _, err := b.GetMemInfo(acl.HBMMem); return err }},
		{"HostRegister", func() error { _, err := b.HostRegister(p, 64, acl.HostRegisterMapped); return err }},
		{"HostUnregister", func() error { return b.HostUnregister(p) }},
		{"HostRegisterV2", func() error { return b.HostRegisterV2(p, 64, acl.HostRegMapped) }},
		{"HostGetDevicePointer", func() error { _, err := b.HostGetDevicePointer(p, 0); return err }},
	}
}

// beforeInit: every runtime call before aclInit is ACL_ERROR_UNINITIALIZE,
// and so is aclFinalize.
func (s *suite) beforeInit(t *testing.T) {
	for _, c := range runtimeCalls(s.b) {
		t.Run(c.name, func(t *testing.T) {
			expect(t, acl.CodeUninitialize, c.name+" before aclInit", c.call)
		})
	}
	t.Run("Finalize", func(t *testing.T) {
		expect(t, acl.CodeUninitialize, "Finalize before aclInit", s.b.Finalize)
	})
}

// init initializes the backend through the idiomatic layer (acl.Init calls
// aclInit), then checks that a second aclInit is refused.
func (s *suite) init(t *testing.T) {
	var err error
	ok(t, "acl.Init", func() error { s.rt, err = acl.Init(s.b, s.opt.ConfigPath); return err })
	require.NotNil(t, s.rt)
	t.Run("Repeat", func(t *testing.T) {
		expect(t, acl.CodeRepeatInitialize, "second aclInit", func() error { return s.b.Init(s.opt.ConfigPath) })
		expect(t, acl.CodeRepeatInitialize, "second acl.Init", func() error {
			rt, err := acl.Init(s.b, s.opt.ConfigPath)
			if rt != nil {
				t.Error("acl.Init returned a runtime with an error")
			}
			return err
		})
	})
}

// info: the calls that describe the installation.
func (s *suite) info(t *testing.T) {
	t.Run("Name", func(t *testing.T) { assert.NotEmpty(t, s.b.Name()) })
	t.Run("GetSocName", func(t *testing.T) {
		var name string
		ok(t, "GetSocName", func() error { name = s.b.GetSocName(); return nil })
		assert.NotEmpty(t, name)
		assert.Equal(t, name, s.rt.SocName())
	})
	t.Run("GetVersion", func(t *testing.T) {
		var major, minor, patch int32
		ok(t, "GetVersion", func() error {
			var err error
			major, minor, patch, err = s.b.GetVersion()
			return err
		})
		assert.True(t, major > 0 || minor > 0 || patch > 0, "version %d.%d.%d", major, minor, patch)
		v, err := s.rt.Version()
		require.NoError(t, err)
		assert.Equal(t, [3]int32{major, minor, patch}, [3]int32{v.Major, v.Minor, v.Patch})
	})
	t.Run("GetRecentErrMsg", func(t *testing.T) {
		// Only that it answers after a failure; the text is the backend's.
		onThread(t, func() {
			_ = try(t, "SetDevice(-1)", func() error { return s.b.SetDevice(-1) })
			_ = try(t, "GetRecentErrMsg", func() error { _ = s.b.GetRecentErrMsg(); return nil })
		})
	})
	t.Run("GetDeviceCount", func(t *testing.T) {
		var n uint32
		ok(t, "GetDeviceCount", func() error {
			var err error
			n, err = s.b.GetDeviceCount()
			return err
		})
		require.NotZero(t, n, "the suite needs at least one device")
		s.devCount = int32(n)
		rn, err := s.rt.DeviceCount()
		require.NoError(t, err)
		assert.Equal(t, int(n), rn)
	})
	t.Run("GetRunMode", func(t *testing.T) {
		var m acl.RunMode
		ok(t, "GetRunMode", func() error {
			var err error
			m, err = s.b.GetRunMode()
			return err
		})
		assert.Contains(t, []acl.RunMode{acl.RunModeDevice, acl.RunModeHost}, m)
	})
}

// finalize leaves resources behind on purpose — aclrtResetDevice and
// aclFinalize release what the program left and succeed — then closes the
// idiomatic runtime (aclFinalize) and checks the repeat finalize code and
// that closing again is harmless.
func (s *suite) finalize(t *testing.T) {
	if s.opt.Leaks != nil {
		assert.Empty(t, s.opt.Leaks(), "resources left before the deliberate leftovers")
	}
	mem := pages(t, 2) // one page for each leave: a reset need not unregister host memory
	// leave creates one of each resource and releases none of them. It
	// runs on a helper thread, so it reports with check, not require.
	leave := func(t *testing.T, what string, reg unsafe.Pointer) {
		if !check(t, try(t, "SetDevice", func() error { return s.b.SetDevice(s.dev) }), "%s: SetDevice", what) {
			return
		}
		_, err := s.b.CreateContext(s.dev)
		if !check(t, err, "%s: CreateContext", what) {
			return
		}
		st, err := s.b.CreateStream()
		check(t, err, "%s: CreateStream", what)
		ev, err := s.b.CreateEvent()
		check(t, err, "%s: CreateEvent", what)
		d, err := s.b.Malloc(4096, acl.MemMallocHugeFirst)
		check(t, err, "%s: Malloc", what)
		_, err = s.b.MallocHost(4096)
		check(t, err, "%s: MallocHost", what)
		_, err = s.b.HostRegister(reg, pageSize, acl.HostRegisterMapped)
		check(t, err, "%s: HostRegister", what)
		check(t, s.b.MemsetAsync(d, 4096, 1, 4096, st), "%s: MemsetAsync", what)
		check(t, s.b.RecordEvent(ev, st), "%s: RecordEvent", what)
	}
	t.Run("ResetReleasesLeftovers", func(t *testing.T) {
		onThread(t, func() {
			leave(t, "before ResetDevice", hostPtr(mem))
			ok(t, "ResetDevice with resources left", func() error { return s.b.ResetDevice(s.dev) })
		})
	})
	t.Run("FinalizeReleasesLeftovers", func(t *testing.T) {
		onThread(t, func() { leave(t, "before aclFinalize", unsafe.Add(hostPtr(mem), pageSize)) })
		ok(t, "Runtime.Close (aclFinalize) with resources left", s.rt.Close)
	})
	t.Run("Repeat", func(t *testing.T) {
		expect(t, acl.CodeRepeatFinalize, "second aclFinalize", s.b.Finalize)
		ok(t, "second Runtime.Close", s.rt.Close)
	})
}

// afterFinalize: every runtime call after aclFinalize is
// ACL_ERROR_UNINITIALIZE, and closed idiomatic objects say they are closed.
func (s *suite) afterFinalize(t *testing.T) {
	for _, c := range runtimeCalls(s.b) {
		t.Run(c.name, func(t *testing.T) {
			expect(t, acl.CodeUninitialize, c.name+" after aclFinalize", c.call)
		})
	}
	t.Run("ClosedRuntime", func(t *testing.T) {
		expect(t, acl.CodeRTInvalidHandle, "Runtime.OpenDevice after Close", func() error {
			_, err := s.rt.OpenDevice(0)
			return err
		})
		expect(t, acl.CodeRTInvalidHandle, "Runtime.DeviceCount after Close", func() error {
			_, err := s.rt.DeviceCount()
			return err
		})
	})
}
