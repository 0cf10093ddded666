package acltest

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beforeInit: the runtime makes no aclInit check of its own
// (hicann/runtime @681ef76: ACL_ERROR_UNINITIALIZE appears only in
// src/acl/toolchain/dump.cpp), so runtime calls before aclInit behave as
// after it; aclFinalize before aclInit succeeds (the ACL layer checks only
// its finalized flag: src/acl/aclrt_impl/acl.cpp:630-643).
func (s *suite) beforeInit(t *testing.T) {
	s.noInitCheck(t, "before aclInit")
	t.Run("Model", s.modelBeforeInit)
	t.Run("Finalize", func(t *testing.T) {
		ok(t, "Finalize before aclInit", s.b.Finalize)
	})
}

// noInitCheck runs, on a thread with no current context, calls that a
// runtime with an aclInit check would refuse: each gives the result of
// its own checks. Whatever it creates it releases.
func (s *suite) noInitCheck(t *testing.T, when string) {
	t.Run("Queries", func(t *testing.T) {
		s.onFreshThread(t, func() {
			n, err := s.b.GetDeviceCount()
			if check(t, err, "GetDeviceCount %s", when) {
				assert.NotZero(t, n)
			}
			_, err = s.b.GetRunMode()
			check(t, err, "GetRunMode %s", when)
		})
	})
	t.Run("NoContext", func(t *testing.T) {
		s.onFreshThread(t, func() {
			for name, f := range map[string]func() error{
				"GetDevice":         func() error { _, err := s.b.GetDevice(); return err },
				"GetCurrentContext": func() error { _, err := s.b.GetCurrentContext(); return err },
				"CreateStream":      func() error { _, err := s.b.CreateStream(); return err },
				"Malloc":            func() error { _, err := s.b.Malloc(64, acl.MemMallocHugeFirst); return err },
			} {
				// No aclInit check in the runtime; the call's own check: no context → 107002 (api_impl.cc:2337).
				expect(t, acl.CodeRTContextNull, name+" "+when+" on a thread with no context", f)
			}
		})
	})
	t.Run("SetResetDevice", func(t *testing.T) {
		s.onFreshThread(t, func() {
			if !check(t, s.b.SetDevice(0), "SetDevice %s", when) {
				return
			}
			d, err := s.b.GetDevice()
			check(t, err, "GetDevice %s", when)
			assert.Equal(t, int32(0), d)
			check(t, s.b.ResetDevice(0), "ResetDevice %s", when)
			// hicann/runtime src/runtime/core/src/runtime.cc:2931 → 507007.
			expect(t, acl.CodeRTContextReleaseError, "ResetDevice of a device no longer set "+when, func() error { return s.b.ResetDevice(0) })
		})
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

// afterFinalize: runtime calls after aclFinalize are not refused for it
// (see beforeInit), and closed idiomatic objects say they are closed.
func (s *suite) afterFinalize(t *testing.T) {
	s.noInitCheck(t, "after aclFinalize")
	t.Run("InitAgain", func(t *testing.T) {
		// aclInit after aclFinalize with a config of other content than
		// the first aclInit's: hicann/runtime src/acl/aclrt_impl/
		// acl.cpp:403-416 → ACL_ERROR_INVALID_PARAM; the same config is
		// accepted (and finalized again).
		other := t.TempDir() + "/other.json"
		require.NoError(t, os.WriteFile(other, fmt.Appendf(nil, `{"err_msg_mode":"1","acltest":"%d"}`, s.rng.Uint64()), 0o600))
		expect(t, acl.CodeInvalidParam, "aclInit with another config after aclFinalize", func() error { return s.b.Init(other) })
		ok(t, "aclInit with the first config after aclFinalize", func() error { return s.b.Init(s.opt.ConfigPath) })
		ok(t, "aclFinalize", s.b.Finalize)
	})
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
