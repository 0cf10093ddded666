package acltest

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openDevice opens the suite's device through the idiomatic layer, closed
// at the end of the test.
func (s *suite) openDevice(t *testing.T) *acl.Device {
	t.Helper()
	d, err := s.rt.OpenDevice(s.dev)
	require.NoError(t, err, "OpenDevice")
	require.NotNil(t, d)
	t.Cleanup(func() { assert.NoError(t, d.Close(), "Device.Close") })
	return d
}

// holdIdiomatic holds an idiomatic stream busy (see hold).
func (s *suite) holdIdiomatic(t *testing.T, d *acl.Device, st *acl.Stream) func() {
	t.Helper()
	if s.opt.HoldStream == nil {
		t.Skip("the backend cannot hold a stream busy (Options.HoldStream is nil)")
	}
	var release func()
	require.NoError(t, d.Do(func() error {
		var err error
		release, err = s.opt.HoldStream(st.Handle())
		return err
	}), "HoldStream")
	t.Cleanup(release)
	return release
}

// idiomatic: the Device/Stream/Event/buffer layer of package acl on top of
// the backend.
func (s *suite) idiomatic(t *testing.T) {
	t.Run("OpenClose", func(t *testing.T) {
		d, err := s.rt.OpenDevice(s.dev)
		require.NoError(t, err)
		assert.Equal(t, s.dev, d.ID())
		assert.NotZero(t, d.Context())
		assert.Same(t, s.rt, d.Runtime())
		assert.Equal(t, s.b, s.rt.Backend())
		free, total, err := d.MemInfo(s.memAttr(t))
		require.NoError(t, err)
		assert.LessOrEqual(t, free, total)
		require.NoError(t, d.Close())
		require.NoError(t, d.Close(), "Close is idempotent")
		s.closedErr(t, "Device.NewStream", func() error { _, err := d.NewStream(); return err })
		s.closedErr(t, "Device.Malloc", func() error { _, err := d.Malloc(64, acl.MemMallocHugeFirst); return err })
		s.closedErr(t, "Device.Do", func() error { return d.Do(func() error { return nil }) })
	})
	t.Run("SameDeviceTwice", func(t *testing.T) {
		// Two Devices of one id have their own contexts; closing one leaves
		// the other working.
		d1 := s.openDevice(t)
		d2, err := s.rt.OpenDevice(s.dev)
		require.NoError(t, err)
		assert.NotEqual(t, d1.Context(), d2.Context())
		require.NoError(t, d2.Close())
		buf, err := d1.Malloc(1024, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		want := s.randBytes(1024)
		require.NoError(t, buf.CopyFromHost(want))
		got := make([]byte, 1024)
		require.NoError(t, buf.CopyToHost(got))
		assert.Equal(t, want, got)
	})
	t.Run("Do", func(t *testing.T) {
		d := s.openDevice(t)
		var st acl.StreamHandle
		require.NoError(t, d.Do(func() error {
			cur, err := s.b.GetCurrentContext()
			if err != nil {
				return err
			}
			if cur != d.Context() {
				return errors.New("d.Do did not bind the device's context")
			}
			st, err = s.b.CreateStream()
			if err != nil {
				return err
			}
			if err := s.b.SynchronizeStream(st); err != nil {
				return err
			}
			return s.b.DestroyStream(st)
		}))
		sentinel := errors.New("from fn")
		assert.Same(t, sentinel, d.Do(func() error { return sentinel }), "Do returns fn's error")
	})
	t.Run("Buffers", func(t *testing.T) {
		d := s.openDevice(t)
		for range 8 {
			n := 1 + s.rng.IntN(64<<10)
			a, err := d.Malloc(uintptr(n), acl.MemMallocHugeFirst)
			require.NoError(t, err)
			b, err := d.Malloc(uintptr(n), acl.MemMallocHugeFirst)
			require.NoError(t, err)
			assert.Equal(t, uintptr(n), a.Size())
			assert.NotNil(t, a.Ptr())
			assert.Same(t, d, a.Device())
			want := s.randBytes(n)
			require.NoError(t, a.CopyFromHost(want))
			require.NoError(t, b.CopyFrom(a))
			got := make([]byte, n)
			require.NoError(t, b.CopyToHost(got))
			require.Equal(t, want, got)

			// Partial copies at offsets.
			off := s.rng.IntN(n)
			part := s.randBytes(s.rng.IntN(n - off + 1))
			require.NoError(t, b.CopyFromHostAt(uintptr(off), part))
			copy(want[off:], part)
			got2 := make([]byte, n-off)
			require.NoError(t, b.CopyToHostAt(got2, uintptr(off)))
			require.Equal(t, want[off:], got2)

			v := byte(s.rng.Uint32())
			require.NoError(t, a.Memset(v))
			require.NoError(t, a.CopyToHost(got))
			require.Equal(t, fill(n, v), got)
			require.NoError(t, a.Close())
			require.NoError(t, b.Close())
		}
	})
	t.Run("BufferErrors", func(t *testing.T) {
		d := s.openDevice(t)
		a, err := d.Malloc(256, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		small, err := d.Malloc(128, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		// count > destMax is the runtime's check (hicann/runtime
		// src/runtime/api/impl/api_error.cc:2138) → 107000.
		expect(t, acl.CodeRTParamInvalid, "CopyFromHost longer than the buffer", func() error { return a.CopyFromHost(make([]byte, 257)) })
		expect(t, acl.CodeRTParamInvalid, "CopyToHost shorter than the buffer", func() error { return a.CopyToHost(make([]byte, 255)) })
		expect(t, acl.CodeRTParamInvalid, "CopyFrom a larger buffer", func() error { return small.CopyFrom(a) })
		expect(t, acl.CodeInvalidParam, "CopyFromHostAt past the end", func() error { return a.CopyFromHostAt(300, []byte{1}) })
		expect(t, acl.CodeInvalidParam, "CopyToHostAt past the end", func() error { return a.CopyToHostAt(make([]byte, 8), 250) })
		expect(t, acl.CodeInvalidParam, "Malloc(0)", func() error { _, err := d.Malloc(0, acl.MemMallocHugeFirst); return err })
		expect(t, acl.CodeInvalidParam, "MallocHost(0)", func() error { _, err := d.MallocHost(0); return err })
		require.NoError(t, a.Close())
		require.NoError(t, a.Close(), "Close is idempotent")
		assert.Nil(t, a.Ptr())
		s.closedErr(t, "DeviceBuffer.CopyFromHost", func() error { return a.CopyFromHost([]byte{1}) })
		s.closedErr(t, "DeviceBuffer.CopyToHost", func() error { return a.CopyToHost(make([]byte, 256)) })
		s.closedErr(t, "DeviceBuffer.CopyFrom", func() error { return small.CopyFrom(a) })
		s.closedErr(t, "DeviceBuffer.Memset", func() error { return a.Memset(0) })
		var nilBuf *acl.DeviceBuffer
		// A nil handle is ACL_ERROR_INVALID_PARAM, as the ACL layer answers a
		// NULL handle (hicann/runtime src/acl/common/log_inner.h:452-460);
		// it still matches ErrInvalidHandle.
		err = try(t, "nil DeviceBuffer.CopyFromHost", func() error { return nilBuf.CopyFromHost([]byte{1}) })
		assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%v", err)
		assert.ErrorIs(t, err, acl.ErrInvalidHandle)
		assert.NoError(t, nilBuf.Close())
	})
	t.Run("AsyncCopies", func(t *testing.T) {
		d := s.openDevice(t)
		st, err := d.NewStream()
		require.NoError(t, err)
		assert.NotZero(t, st.Handle())
		assert.Same(t, d, st.Device())
		for range 8 {
			n := 1 + s.rng.IntN(64<<10)
			in, err := d.MallocHost(uintptr(n))
			require.NoError(t, err)
			out, err := d.MallocHost(uintptr(n))
			require.NoError(t, err)
			require.Len(t, in.Bytes(), n)
			want := s.randBytes(n)
			copy(in.Bytes(), want)
			a, err := d.Malloc(uintptr(n), acl.MemMallocHugeFirst)
			require.NoError(t, err)
			b, err := d.Malloc(uintptr(n), acl.MemMallocHugeFirst)
			require.NoError(t, err)
			require.NoError(t, a.MemsetAsync(0x77, st))
			require.NoError(t, a.CopyFromHostAsync(in, st))
			require.NoError(t, b.CopyFromAsync(a, st))
			require.NoError(t, b.CopyToHostAsync(out, st))
			require.NoError(t, st.Wait(context.Background()))
			require.Equal(t, want, out.Bytes())
			// Closing a buffer waits for the stream work that uses it.
			require.NoError(t, b.MemsetAsync(0x01, st))
			require.NoError(t, b.CopyToHostAsync(out, st))
			require.NoError(t, b.Close())
			require.NoError(t, out.Close())
			assert.Nil(t, out.Bytes())
			require.NoError(t, a.Close())
			require.NoError(t, in.Close())
		}
		require.NoError(t, st.Close())
		require.NoError(t, st.Close(), "Close is idempotent")
		assert.Zero(t, st.Handle())
		s.closedErr(t, "Stream.Synchronize", st.Synchronize)
		s.closedErr(t, "Stream.Wait", func() error { return st.Wait(context.Background()) })
	})
	t.Run("StreamWait", func(t *testing.T) {
		d := s.openDevice(t)
		st, err := d.NewStream()
		require.NoError(t, err)
		require.NoError(t, st.Synchronize())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, st.Wait(ctx), "Wait on an idle stream")
		cancel()
		assert.ErrorIs(t, st.Wait(ctx), context.Canceled, "Wait with a cancelled context")
	})
	t.Run("StreamWaitDeadline", func(t *testing.T) {
		d := s.openDevice(t)
		st, err := d.NewStream()
		require.NoError(t, err)
		release := s.holdIdiomatic(t, d, st)
		base := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, st.Wait(ctx), context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second, "Wait overran its deadline")
		ctx2, cancel2 := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- st.Wait(ctx2) }()
		time.Sleep(10 * time.Millisecond)
		cancel2()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not return after its context was cancelled")
		}
		noGoroutinesLeft(t, base)
		release()
		require.NoError(t, st.Wait(context.Background()))
	})
	t.Run("Events", func(t *testing.T) {
		d := s.openDevice(t)
		s1, err := d.NewStream()
		require.NoError(t, err)
		s2, err := d.NewStream()
		require.NoError(t, err)
		start, err := d.NewEvent(acl.EventTimeLine)
		require.NoError(t, err)
		// A stream waits only for an event with ACL_EVENT_SYNC (hicann/runtime
		// src/runtime/api/impl/api_error.cc:1414-1416).
		end, err := d.NewEvent(acl.EventSync | acl.EventTimeLine)
		require.NoError(t, err)
		assert.NotZero(t, start.Handle())
		assert.Same(t, d, start.Device())
		for range 4 {
			n := 1 + s.rng.IntN(32<<10)
			in, err := d.MallocHost(uintptr(n))
			require.NoError(t, err)
			out, err := d.MallocHost(uintptr(n))
			require.NoError(t, err)
			want := s.randBytes(n)
			copy(in.Bytes(), want)
			buf, err := d.Malloc(uintptr(n), acl.MemMallocHugeFirst)
			require.NoError(t, err)
			require.NoError(t, start.Record(s1))
			require.NoError(t, buf.CopyFromHostAsync(in, s1))
			require.NoError(t, end.Record(s1))
			require.NoError(t, s2.WaitEvent(end))
			require.NoError(t, buf.CopyToHostAsync(out, s2))
			require.NoError(t, s2.Synchronize())
			require.Equal(t, want, out.Bytes())
			require.NoError(t, end.Synchronize())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			require.NoError(t, end.Wait(ctx))
			cancel()
			el, err := end.Elapsed(start)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, el, time.Duration(0))
			// Reused next round: reset behind the wait
			// (hicann/runtime src/acl/aclrt_impl/event.cpp:113-121).
			require.NoError(t, end.Reset(s2))
		}
		expect(t, acl.CodeRTFeatureNotSupport, "Event.Reset of an event without ACL_EVENT_SYNC", func() error { return start.Reset(s1) })
		never, err := d.NewEvent(0)
		require.NoError(t, err)
		expect(t, acl.CodeRTInternalError, "Event.Elapsed of an event never recorded", func() error {
			_, err := never.Elapsed(start)
			return err
		})
		require.NoError(t, end.Close())
		require.NoError(t, end.Close(), "Close is idempotent")
		assert.Zero(t, end.Handle())
		s.closedErr(t, "Event.Record", func() error { return end.Record(s1) })
		s.closedErr(t, "Event.Reset", func() error { return end.Reset(s1) })
		s.closedErr(t, "Event.Synchronize", end.Synchronize)
		s.closedErr(t, "Event.Wait", func() error { return end.Wait(context.Background()) })
		s.closedErr(t, "Event.Elapsed", func() error { _, err := end.Elapsed(start); return err })
		s.closedErr(t, "Stream.WaitEvent", func() error { return s2.WaitEvent(end) })
	})
	t.Run("EventWaitDeadline", func(t *testing.T) {
		d := s.openDevice(t)
		st, err := d.NewStream()
		require.NoError(t, err)
		ev, err := d.NewEvent(0)
		require.NoError(t, err)
		release := s.holdIdiomatic(t, d, st)
		require.NoError(t, ev.Record(st))
		// The first Wait creates the event's helper stream, which may start
		// backend goroutines of its own: count after it.
		ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel0()
		assert.ErrorIs(t, ev.Wait(ctx0), context.DeadlineExceeded)
		base := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, ev.Wait(ctx), context.DeadlineExceeded)
		noGoroutinesLeft(t, base)
		// hicann/runtime src/runtime/core/src/event/event.cc:1265-1270 → 107006.
		expect(t, acl.CodeRTEventTimestampInvalid, "Event.Elapsed of an event not reached", func() error {
			_, err := ev.Elapsed(ev)
			return err
		})
		release()
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel2()
		require.NoError(t, ev.Wait(ctx2))
		require.NoError(t, ev.Close())
	})
	t.Run("DeviceCloseReleasesAll", func(t *testing.T) {
		d, err := s.rt.OpenDevice(s.dev)
		require.NoError(t, err)
		st, err := d.NewStream()
		require.NoError(t, err)
		ev, err := d.NewEvent(0)
		require.NoError(t, err)
		buf, err := d.Malloc(4096, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		hb, err := d.MallocHost(4096)
		require.NoError(t, err)
		mem := pages(t, 1)
		reg, err := d.RegisterHost(mem, acl.HostRegisterMapped)
		require.NoError(t, err)
		require.NoError(t, buf.CopyFromHostAsync(hb, st))
		require.NoError(t, ev.Record(st))
		require.NoError(t, d.Close())
		s.closedErr(t, "Stream.Synchronize", st.Synchronize)
		s.closedErr(t, "Event.Synchronize", ev.Synchronize)
		s.closedErr(t, "DeviceBuffer.Memset", func() error { return buf.Memset(0) })
		assert.Nil(t, hb.Bytes())
		assert.Nil(t, reg.DevicePtr())
		for _, c := range []func() error{st.Close, ev.Close, buf.Close, hb.Close, reg.Close} {
			assert.NoError(t, c(), "Close after the device closed")
		}
		if s.opt.Leaks != nil {
			assert.Empty(t, s.opt.Leaks(), "resources the device reset had to release after Device.Close")
		}
	})
	t.Run("RegisterHost", func(t *testing.T) {
		d := s.openDevice(t)
		st, err := d.NewStream()
		require.NoError(t, err)
		mem := pages(t, 2)
		reg, err := d.RegisterHost(mem, acl.HostRegisterMapped)
		require.NoError(t, err)
		assert.NotNil(t, reg.DevicePtr())
		assert.Equal(t, hostPtr(mem), reg.HostPtr())
		assert.Equal(t, uint64(len(mem)), reg.Size())
		expect(t, acl.CodeHostMemoryAlreadyRegistered, "RegisterHost of registered memory", func() error {
			_, err := d.RegisterHost(mem[pageSize:], acl.HostRegisterMapped)
			return err
		})
		// Alignment is the driver's check; the fallback and the stub give
		// ACL_ERROR_RT_PARAM_INVALID (the public source does not settle it).
		expect(t, acl.CodeRTParamInvalid, "RegisterHost of unaligned memory", func() error {
			_, err := d.RegisterHost(pages(t, 1)[8:], acl.HostRegisterMapped)
			return err
		})
		// Registered memory feeds raw asynchronous copies.
		want := s.randBytes(len(mem))
		copy(mem, want)
		buf, err := d.Malloc(uintptr(len(mem)), acl.MemMallocHugeFirst)
		require.NoError(t, err)
		require.NoError(t, d.Do(func() error {
			return s.b.MemcpyAsync(buf.Ptr(), buf.Size(), reg.HostPtr(), uintptr(reg.Size()), acl.MemcpyHostToDevice, st.Handle())
		}))
		require.NoError(t, st.Synchronize())
		got := make([]byte, len(mem))
		require.NoError(t, buf.CopyToHost(got))
		assert.Equal(t, want, got)
		require.NoError(t, reg.Close())
		require.NoError(t, reg.Close(), "Close is idempotent")
		assert.Nil(t, reg.DevicePtr())

		other := pages(t, 1)
		v2, err := d.RegisterHostV2(hostPtr(other), pageSize, acl.HostRegMapped)
		require.NoError(t, err)
		assert.NotNil(t, v2.DevicePtr())
		require.NoError(t, v2.Close())
		// Close unregistered it: → 507911 (api_impl.cc:2636-2641).
		expect(t, acl.CodeHostMemoryNotRegistered, "raw HostUnregister after Close", func() error {
			return d.Do(func() error { return s.b.HostUnregister(hostPtr(other)) })
		})
	})
	t.Run("AnyGoroutine", func(t *testing.T) {
		// Goroutines that are not locked to a thread and yield between
		// calls (so they migrate between OS threads), plus one on a thread
		// that has no context at all, all use the Device without binding
		// anything themselves.
		d := s.openDevice(t)
		var wg sync.WaitGroup
		seeds := make([][]byte, 8)
		for i := range seeds {
			seeds[i] = s.randBytes(1 + s.rng.IntN(8192))
		}
		for i := range seeds {
			wg.Go(func() {
				want := seeds[i]
				buf, err := d.Malloc(uintptr(len(want)), acl.MemMallocHugeFirst)
				if !check(t, err, "Malloc") {
					return
				}
				defer func() { check(t, buf.Close(), "Close") }()
				st, err := d.NewStream()
				if !check(t, err, "NewStream") {
					return
				}
				defer func() { check(t, st.Close(), "Close") }()
				hb, err := d.MallocHost(uintptr(len(want)))
				if !check(t, err, "MallocHost") {
					return
				}
				defer func() { check(t, hb.Close(), "Close") }()
				for range 20 {
					runtime.Gosched()
					if !check(t, buf.CopyFromHost(want), "CopyFromHost") {
						return
					}
					runtime.Gosched()
					if !check(t, buf.CopyToHostAsync(hb, st), "CopyToHostAsync") {
						return
					}
					runtime.Gosched()
					if !check(t, st.Synchronize(), "Synchronize") {
						return
					}
					assert.Equal(t, want, hb.Bytes())
				}
			})
		}
		wg.Wait()
		s.onFreshThread(t, func() {
			buf, err := d.Malloc(64, acl.MemMallocHugeFirst)
			if check(t, err, "Malloc on a thread with no context") {
				check(t, buf.CopyFromHost(make([]byte, 64)), "CopyFromHost")
				check(t, buf.Close(), "Close")
			}
		})
	})
	t.Run("TwoDevices", func(t *testing.T) {
		// One goroutine alternates between the streams and buffers of two
		// devices: each call must bind its own device's context (a stream
		// used under the other device's context fails with
		// ACL_ERROR_RT_STREAM_CONTEXT).
		if s.devCount < 2 {
			t.Skip("the backend has one device")
		}
		var devs [2]*acl.Device
		var sts [2]*acl.Stream
		var bufs [2]*acl.DeviceBuffer
		var hbs [2]*acl.HostBuffer
		for i := range devs {
			d, err := s.rt.OpenDevice(int32(i))
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, d.Close()) })
			devs[i] = d
			sts[i], err = d.NewStream()
			require.NoError(t, err)
			bufs[i], err = d.Malloc(4096, acl.MemMallocHugeFirst)
			require.NoError(t, err)
			hbs[i], err = d.MallocHost(4096)
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for k := range 40 {
					i := (g + k) % 2
					v := byte(g*40 + k)
					if !check(t, bufs[i].MemsetAsync(v, sts[i]), "MemsetAsync on device %d", i) {
						return
					}
					runtime.Gosched()
					if !check(t, devs[1-i].Do(func() error { return nil }), "Do on device %d", 1-i) {
						return
					}
					if !check(t, sts[i].Synchronize(), "Synchronize on device %d", i) {
						return
					}
				}
			})
		}
		wg.Wait()
		for i := range devs {
			require.NoError(t, bufs[i].Memset(byte(0x10+i)))
			require.NoError(t, bufs[i].CopyToHostAsync(hbs[i], sts[i]))
			require.NoError(t, sts[i].Synchronize())
			assert.Equal(t, fill(4096, byte(0x10+i)), hbs[i].Bytes(), "device %d", i)
		}
	})
	t.Run("ConcurrentClose", func(t *testing.T) {
		// Close racing with use: every call either works or reports the
		// closed handle; nothing panics, hangs or leaks.
		d := s.openDevice(t)
		for range 8 {
			st, err := d.NewStream()
			require.NoError(t, err)
			buf, err := d.Malloc(4096, acl.MemMallocHugeFirst)
			require.NoError(t, err)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 10 {
						err := buf.MemsetAsync(1, st)
						if err == nil {
							err = st.Synchronize()
						}
						if err != nil {
							assert.ErrorIs(t, err, acl.ErrInvalidHandle)
							return
						}
					}
				})
			}
			wg.Go(func() { assert.NoError(t, buf.Close()) })
			wg.Go(func() { assert.NoError(t, st.Close()) })
			wg.Wait()
		}
	})
	t.Run("Leaks", func(t *testing.T) {
		if s.opt.Leaks == nil {
			t.Skip("the backend does not report leaks (Options.Leaks is nil)")
		}
		assert.Empty(t, s.opt.Leaks())
	})
}

// noGoroutinesLeft asserts that the goroutine count comes back to at most
// base: a Wait that gave up left nothing running behind it.
func noGoroutinesLeft(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base, "goroutines left behind by Wait")
}

// closedErr asserts that f fails because its handle is closed:
// ACL_ERROR_RT_INVALID_HANDLE with Op naming the method.
func (s *suite) closedErr(t *testing.T, op string, f func() error) {
	t.Helper()
	err := try(t, op, f)
	var e *acl.Error
	if assert.ErrorAs(t, err, &e, op) {
		assert.Equal(t, acl.CodeRTInvalidHandle, e.Code, "%s: %v", op, err)
		assert.Equal(t, op, e.Op, "%s: %v", op, err)
		assert.ErrorIs(t, err, acl.ErrInvalidHandle)
	}
}
