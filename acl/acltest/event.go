package acltest

import (
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newEvent creates an event destroyed at the end of the test.
func (s *suite) newEvent(t *testing.T, flag acl.EventFlag) acl.EventHandle {
	t.Helper()
	var ev acl.EventHandle
	var err error
	if flag == 0 {
		ev, err = s.b.CreateEvent()
	} else {
		ev, err = s.b.CreateEventWithFlag(flag)
	}
	require.NoError(t, err, "CreateEvent")
	require.NotZero(t, ev)
	t.Cleanup(func() { _ = s.b.DestroyEvent(ev) })
	return ev
}

// event: event lifecycle, recording, elapsed time, bad handles and
// ordering across streams.
func (s *suite) event(t *testing.T) {
	t.Run("Lifecycle", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		for _, flag := range []acl.EventFlag{0, acl.EventSync, acl.EventTimeLine, acl.EventSync | acl.EventTimeLine} {
			var ev acl.EventHandle
			ok(t, "CreateEvent", func() error {
				var err error
				if flag == 0 {
					ev, err = s.b.CreateEvent()
				} else {
					ev, err = s.b.CreateEventWithFlag(flag)
				}
				return err
			})
			require.NotZero(t, ev)
			ok(t, "RecordEvent", func() error { return s.b.RecordEvent(ev, st) })
			ok(t, "SynchronizeEvent", func() error { return s.b.SynchronizeEvent(ev) })
			if flag == 0 || flag&acl.EventSync != 0 {
				ok(t, "StreamWaitEvent", func() error { return s.b.StreamWaitEvent(st, ev) })
				ok(t, "ResetEvent", func() error { return s.b.ResetEvent(ev, st) })
				// A NULL stream is the default stream
				// (src/runtime/api/impl/api_impl.cc:2205-2208).
				ok(t, "ResetEvent(default stream)", func() error { return s.b.ResetEvent(ev, 0) })
				ok(t, "RecordEvent after ResetEvent", func() error { return s.b.RecordEvent(ev, st) })
				ok(t, "SynchronizeEvent after ResetEvent", func() error { return s.b.SynchronizeEvent(ev) })
			} else {
				// No ACL_EVENT_SYNC, no wait task: hicann/runtime
				// src/runtime/api/impl/api_error.cc:1414-1416 → 207000,
				// and nothing to reset (api_error.cc:1760-1762 → 207000).
				expect(t, acl.CodeRTFeatureNotSupport, "StreamWaitEvent(event without ACL_EVENT_SYNC)", func() error { return s.b.StreamWaitEvent(st, ev) })
				expect(t, acl.CodeRTFeatureNotSupport, "ResetEvent(event without ACL_EVENT_SYNC)", func() error { return s.b.ResetEvent(ev, st) })
			}
			ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
			ok(t, "DestroyEvent", func() error { return s.b.DestroyEvent(ev) })
			s.undefined(t, "destroyed event", func(t *testing.T) {
				s.badEvent(t, st, ev, "destroyed")
				expect(t, acl.CodeRTInvalidHandle, "DestroyEvent twice", func() error { return s.b.DestroyEvent(ev) })
			})
		}
	})
	t.Run("BadHandle", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		s.undefined(t, "unknown event", func(t *testing.T) { s.badEvent(t, st, bogusHandle, "unknown") })
		good := s.newEvent(t, acl.EventTimeLine)
		ok(t, "RecordEvent", func() error { return s.b.RecordEvent(good, st) })
		ok(t, "SynchronizeEvent", func() error { return s.b.SynchronizeEvent(good) })
		for _, c := range []struct {
			name string
			call func() error
		}{
			{"DestroyEvent(NULL)", func() error { return s.b.DestroyEvent(0) }},
			{"RecordEvent(NULL)", func() error { return s.b.RecordEvent(0, st) }},
			{"SynchronizeEvent(NULL)", func() error { return s.b.SynchronizeEvent(0) }},
			{"StreamWaitEvent(NULL)", func() error { return s.b.StreamWaitEvent(st, 0) }},
			// src/acl/aclrt_impl/event.cpp:116 → 100000.
			{"ResetEvent(NULL)", func() error { return s.b.ResetEvent(0, st) }},
			{"EventElapsedTime(NULL start)", func() error { _, err := s.b.EventElapsedTime(0, good); return err }},
			{"EventElapsedTime(NULL end)", func() error { _, err := s.b.EventElapsedTime(good, 0); return err }},
		} {
			expect(t, acl.CodeInvalidParam, c.name, c.call)
		}
		s.undefined(t, "unknown event timed", func(t *testing.T) {
			expect(t, acl.CodeRTInvalidHandle, "EventElapsedTime(unknown start)", func() error {
				_, err := s.b.EventElapsedTime(bogusHandle, good)
				return err
			})
			expect(t, acl.CodeRTInvalidHandle, "EventElapsedTime(unknown end)", func() error {
				_, err := s.b.EventElapsedTime(good, bogusHandle)
				return err
			})
		})
	})
	t.Run("ElapsedTime", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		start, end := s.newEvent(t, acl.EventTimeLine), s.newEvent(t, acl.EventTimeLine)
		const n = 1 << 20
		x, y := s.devMem(t, n), s.devMem(t, n)
		ok(t, "RecordEvent(start)", func() error { return s.b.RecordEvent(start, st) })
		for range 4 {
			ok(t, "MemcpyAsync D2D", func() error { return s.b.MemcpyAsync(y, n, x, n, acl.MemcpyDeviceToDevice, st) })
		}
		ok(t, "RecordEvent(end)", func() error { return s.b.RecordEvent(end, st) })
		ok(t, "SynchronizeEvent(end)", func() error { return s.b.SynchronizeEvent(end) })
		var ms float32
		ok(t, "EventElapsedTime", func() error {
			var err error
			ms, err = s.b.EventElapsedTime(start, end)
			return err
		})
		assert.GreaterOrEqual(t, ms, float32(0))
		assert.Less(t, ms, float32(60_000))
	})
	t.Run("ElapsedNeverRecorded", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		rec, never := s.newEvent(t, acl.EventTimeLine), s.newEvent(t, acl.EventTimeLine)
		ok(t, "RecordEvent", func() error { return s.b.RecordEvent(rec, st) })
		ok(t, "SynchronizeEvent", func() error { return s.b.SynchronizeEvent(rec) })
		// hicann/runtime src/runtime/core/src/event/event.cc:1248-1250,
		// errcode_manage.cc:197: RT_ERROR_EVENT_RECORDER_NULL → 507000.
		expect(t, acl.CodeRTInternalError, "EventElapsedTime(end never recorded)", func() error {
			_, err := s.b.EventElapsedTime(rec, never)
			return err
		})
		expect(t, acl.CodeRTInternalError, "EventElapsedTime(start never recorded)", func() error {
			_, err := s.b.EventElapsedTime(never, rec)
			return err
		})
	})
	t.Run("ElapsedNotComplete", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		start, end := s.newEvent(t, acl.EventTimeLine), s.newEvent(t, acl.EventTimeLine)
		ok(t, "RecordEvent(start)", func() error { return s.b.RecordEvent(start, st) })
		ok(t, "SynchronizeEvent(start)", func() error { return s.b.SynchronizeEvent(start) })
		release := s.hold(t, st)
		ok(t, "RecordEvent(end) behind a held task", func() error { return s.b.RecordEvent(end, st) })
		expect(t, acl.CodeRTEventTimestampInvalid, "EventElapsedTime(end not reached)", func() error {
			_, err := s.b.EventElapsedTime(start, end)
			return err
		})
		release()
		ok(t, "SynchronizeEvent(end)", func() error { return s.b.SynchronizeEvent(end) })
		ok(t, "EventElapsedTime after completion", func() error {
			_, err := s.b.EventElapsedTime(start, end)
			return err
		})
	})
	t.Run("CrossStreamOrder", func(t *testing.T) {
		// s1 uploads and records e; s2 waits for e, then downloads. With a
		// hold on s1, s2 must not get ahead of it.
		s.bind(t)
		s1, s2 := s.newStream(t), s.newStream(t)
		e := s.newEvent(t, 0)
		for round := range 4 {
			n := 1 + s.rng.IntN(32<<10)
			in, out := s.pinned(t, n), s.pinned(t, n)
			want := s.randBytes(n)
			copy(in, want)
			clear(out)
			x := s.devMem(t, n)
			var release func()
			if round == 0 && s.opt.HoldStream != nil {
				release = s.hold(t, s1)
			}
			ok(t, "MemcpyAsync H2D on s1", func() error {
				return s.b.MemcpyAsync(x, uintptr(n), hostPtr(in), uintptr(n), acl.MemcpyHostToDevice, s1)
			})
			ok(t, "RecordEvent on s1", func() error { return s.b.RecordEvent(e, s1) })
			ok(t, "StreamWaitEvent on s2", func() error { return s.b.StreamWaitEvent(s2, e) })
			ok(t, "MemcpyAsync D2H on s2", func() error {
				return s.b.MemcpyAsync(hostPtr(out), uintptr(n), x, uintptr(n), acl.MemcpyDeviceToHost, s2)
			})
			if release != nil {
				expect(t, acl.CodeRTStreamSyncTimeout, "SynchronizeStreamWithTimeout(s2 waiting on s1's event)", func() error {
					return s.b.SynchronizeStreamWithTimeout(s2, 20)
				})
				assert.Equal(t, make([]byte, n), out, "s2 ran ahead of the event it waits for")
				release()
			}
			ok(t, "SynchronizeStream(s2)", func() error { return s.b.SynchronizeStream(s2) })
			require.Equal(t, want, out)
		}
	})
}

// badEvent checks that every event-taking call refuses ev (unknown or
// destroyed) with ACL_ERROR_RT_INVALID_HANDLE.
func (s *suite) badEvent(t *testing.T, st acl.StreamHandle, ev acl.EventHandle, what string) {
	t.Helper()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"RecordEvent", func() error { return s.b.RecordEvent(ev, st) }},
		{"SynchronizeEvent", func() error { return s.b.SynchronizeEvent(ev) }},
		{"StreamWaitEvent", func() error { return s.b.StreamWaitEvent(st, ev) }},
		{"ResetEvent", func() error { return s.b.ResetEvent(ev, st) }},
		{"EventElapsedTime", func() error { _, err := s.b.EventElapsedTime(ev, ev); return err }},
	} {
		// Unknown or destroyed handles → 107017 (src/runtime/core/src/common/runtime_handle_guard.cc:91).
		expect(t, acl.CodeRTInvalidHandle, c.name+"("+what+" event)", c.call)
	}
}
