package acl_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInitNilBackend(t *testing.T) {
	rt, err := acl.Init(nil, "")
	assert.Nil(t, rt)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
}

func TestInitRepeat(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	rt2, err := acl.Init(npu, "")
	assert.Nil(t, rt2)
	assert.ErrorIs(t, err, acl.ErrRepeatInit)
	require.NoError(t, rt.Close())
	require.NoError(t, rt.Close())
}

// TestNilHandles calls every method on nil handles: each returns an error
// or a zero value, none panics.
func TestNilHandles(t *testing.T) {
	var (
		rt  *acl.Runtime
		d   *acl.Device
		s   *acl.Stream
		e   *acl.Event
		b   *acl.DeviceBuffer
		h   *acl.HostBuffer
		reg *acl.HostRegistration
	)
	ctx := context.Background()
	errs := map[string]error{
		"Runtime.DeviceCount":            func() error { _, err := rt.DeviceCount(); return err }(),
		"Runtime.Version":                func() error { _, err := rt.Version(); return err }(),
		"Runtime.OpenDevice":             func() error { _, err := rt.OpenDevice(0); return err }(),
		"Device.Do":                      d.Do(func() error { return nil }),
		"Device.NewStream":               func() error { _, err := d.NewStream(); return err }(),
		"Device.NewEvent":                func() error { _, err := d.NewEvent(0); return err }(),
		"Device.Malloc":                  func() error { _, err := d.Malloc(1, 0); return err }(),
		"Device.MallocHost":              func() error { _, err := d.MallocHost(1); return err }(),
		"Device.MemInfo":                 func() error { _, _, err := d.MemInfo(acl.HBMMem); return err }(),
		"Device.RegisterHostPointer":     func() error { _, err := d.RegisterHostPointer(nil, 1, 0); return err }(),
		"Device.RegisterHostV2":          func() error { _, err := d.RegisterHostV2(nil, 1, 0); return err }(),
		"Stream.Synchronize":             s.Synchronize(),
		"Stream.Wait":                    s.Wait(ctx),
		"Stream.WaitEvent":               s.WaitEvent(e),
		"Event.Record":                   e.Record(s),
		"Event.Synchronize":              e.Synchronize(),
		"Event.Wait":                     e.Wait(ctx),
		"Event.Elapsed":                  func() error { _, err := e.Elapsed(e); return err }(),
		"DeviceBuffer.CopyFromHost":      b.CopyFromHost([]byte{1}),
		"DeviceBuffer.CopyToHost":        b.CopyToHost([]byte{1}),
		"DeviceBuffer.CopyFrom":          b.CopyFrom(b),
		"DeviceBuffer.Memset":            b.Memset(0),
		"DeviceBuffer.MemsetAsync":       b.MemsetAsync(0, s),
		"DeviceBuffer.CopyFromHostAsync": b.CopyFromHostAsync(h, s),
		"DeviceBuffer.CopyToHostAsync":   b.CopyToHostAsync(h, s),
		"DeviceBuffer.CopyFromAsync":     b.CopyFromAsync(b, s),
	}
	for op, err := range errs {
		assert.ErrorIs(t, err, acl.ErrInvalidHandle, op)
		var e *acl.Error
		if assert.ErrorAs(t, err, &e, op) {
			assert.Equal(t, op, e.Op)
		}
	}
	for _, c := range []func() error{rt.Close, d.Close, s.Close, e.Close, b.Close, h.Close, reg.Close} {
		assert.NoError(t, c())
	}
	assert.Nil(t, rt.Backend())
	assert.Empty(t, rt.SocName())
	assert.Equal(t, int32(-1), d.ID())
	assert.Zero(t, d.Context())
	assert.Nil(t, d.Runtime())
	assert.Zero(t, s.Handle())
	assert.Nil(t, s.Device())
	assert.Zero(t, e.Handle())
	assert.Nil(t, e.Device())
	assert.Nil(t, b.Ptr())
	assert.Zero(t, b.Size())
	assert.Nil(t, b.Device())
	assert.Nil(t, h.Bytes())
	assert.Nil(t, h.Ptr())
	assert.Zero(t, h.Size())
	assert.Nil(t, reg.HostPtr())
	assert.Nil(t, reg.DevicePtr())
	assert.Zero(t, reg.Size())
}

// TestHandleArgumentNil passes nil handles as arguments to open ones.
func TestHandleArgumentNil(t *testing.T) {
	_, d, s := openStream(t)
	e, err := d.NewEvent(0)
	require.NoError(t, err)
	b := devMem(t, d, 64)
	for op, err := range map[string]error{
		"Stream.WaitEvent":               s.WaitEvent(nil),
		"Event.Record":                   e.Record(nil),
		"Event.Elapsed":                  func() error { _, err := e.Elapsed(nil); return err }(),
		"DeviceBuffer.CopyFrom":          b.CopyFrom(nil),
		"DeviceBuffer.CopyFromAsync":     b.CopyFromAsync(nil, s),
		"DeviceBuffer.CopyFromHostAsync": b.CopyFromHostAsync(nil, s),
		"DeviceBuffer.CopyToHostAsync":   b.CopyToHostAsync(nil, s),
		"DeviceBuffer.MemsetAsync":       b.MemsetAsync(0, nil),
	} {
		assert.ErrorIs(t, err, acl.ErrInvalidHandle, op)
		assert.Equal(t, op, err.(*acl.Error).Op)
	}
	_, err = d.RegisterHost(nil, acl.HostRegisterMapped)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	_, err = d.RegisterHostPointer(unsafe.Pointer(nil), 4096, acl.HostRegisterMapped)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
}

// TestEmptyCopies: copying nothing succeeds without a backend call.
func TestEmptyCopies(t *testing.T) {
	_, _, d := open(t)
	b := devMem(t, d, 64)
	assert.NoError(t, b.CopyFromHost(nil))
	assert.NoError(t, b.CopyFromHostAt(64, nil))
	assert.NoError(t, b.CopyToHostAt(nil, 64))
	require.NoError(t, b.Close())
	assert.ErrorIs(t, b.CopyFromHost([]byte{1}), acl.ErrInvalidHandle)
}
