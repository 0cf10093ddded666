package acltest

import (
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// device: device ids and device-level queries, before the suite sets its
// device.
func (s *suite) device(t *testing.T) {
	require.NotZero(t, s.devCount, "device count unknown")
	t.Run("ResetUnset", func(t *testing.T) {
		// No device has been set yet in this process.
		// hicann/runtime src/runtime/core/src/runtime.cc:2931 (no primary
		// context to release: RT_ERROR_CONTEXT_DEL), api_error.cc:3443-3446,
		// errcode_manage.cc:221 → 507007.
		expect(t, acl.CodeRTContextReleaseError, "ResetDevice of a device never set", func() error { return s.b.ResetDevice(0) })
	})
	t.Run("BadID", func(t *testing.T) {
		for _, id := range []int32{-1, s.devCount, s.devCount + 7, 1 << 30} {
			expect(t, acl.CodeRTInvalidDeviceID, "SetDevice(bad id)", func() error { return s.b.SetDevice(id) })
			expect(t, acl.CodeRTInvalidDeviceID, "CreateContext(bad id)", func() error {
				_, err := s.b.CreateContext(id)
				return err
			})
			expect(t, acl.CodeRTInvalidDeviceID, "ResetDevice(bad id)", func() error { return s.b.ResetDevice(id) })
			expect(t, acl.CodeRTInvalidDeviceID, "Runtime.OpenDevice(bad id)", func() error {
				d, err := s.rt.OpenDevice(id)
				assert.Nil(t, d)
				return err
			})
		}
	})
}

// setup sets the suite's device and creates the context the raw subtests
// bind to.
func (s *suite) setup(t *testing.T) {
	s.dev = 0
	onThread(t, func() {
		if !check(t, try(t, "SetDevice", func() error { return s.b.SetDevice(s.dev) }), "SetDevice(%d)", s.dev) {
			return
		}
		d, err := s.b.GetDevice()
		check(t, err, "GetDevice")
		assert.Equal(t, s.dev, d, "GetDevice after SetDevice")
		ctx, err := s.b.CreateContext(s.dev)
		if !check(t, err, "CreateContext") {
			return
		}
		assert.NotZero(t, ctx)
		cur, err := s.b.GetCurrentContext()
		check(t, err, "GetCurrentContext")
		assert.Equal(t, ctx, cur, "CreateContext makes the new context current")
		s.ctx = ctx
	})
	require.NotZero(t, s.ctx)
}

// teardown releases the raw subtests' context and device, so the
// idiomatic layer starts from a clean device.
func (s *suite) teardown(t *testing.T) {
	s.bind(t)
	ok(t, "DestroyContext", func() error { return s.b.DestroyContext(s.ctx) })
	ok(t, "ResetDevice", func() error { return s.b.ResetDevice(s.dev) })
	// hicann/runtime src/runtime/core/src/runtime.cc:2931 → 507007.
	expect(t, acl.CodeRTContextReleaseError, "ResetDevice of a device already reset", func() error { return s.b.ResetDevice(s.dev) })
	s.undefined(t, "destroyed context", func(t *testing.T) {
		// hicann/runtime src/runtime/api/impl/api_impl.cc:4184-4187 → 107002.
		expect(t, acl.CodeRTContextNull, "SetCurrentContext(destroyed)", func() error { return s.b.SetCurrentContext(s.ctx) })
	})
	s.ctx = 0
	if s.opt.Leaks != nil {
		assert.Empty(t, s.opt.Leaks(), "resources the raw subtests left")
	}
}
