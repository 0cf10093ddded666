package acltest

import (
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hold makes st busy through Options.HoldStream, skipping the test when
// the backend cannot; the release is also registered as a cleanup so a
// failing test never leaves a stream held.
func (s *suite) hold(t *testing.T, st acl.StreamHandle) func() {
	t.Helper()
	if s.opt.HoldStream == nil {
		t.Skip("the backend cannot hold a stream busy (Options.HoldStream is nil)")
	}
	release, err := s.opt.HoldStream(st)
	require.NoError(t, err, "HoldStream")
	t.Cleanup(release)
	return release
}

// newStream creates a stream destroyed at the end of the test (the test's
// thread must have the suite context current).
func (s *suite) newStream(t *testing.T) acl.StreamHandle {
	t.Helper()
	st, err := s.b.CreateStream()
	require.NoError(t, err, "CreateStream")
	require.NotZero(t, st)
	t.Cleanup(func() { _ = s.b.SynchronizeStream(st); _ = s.b.DestroyStream(st) })
	return st
}

// stream: stream lifecycle, bad handles, timeouts, in-order execution and
// sticky task errors.
func (s *suite) stream(t *testing.T) {
	t.Run("Lifecycle", func(t *testing.T) {
		s.bind(t)
		st, err := s.b.CreateStream()
		require.NoError(t, err)
		require.NotZero(t, st)
		ok(t, "SynchronizeStream(idle)", func() error { return s.b.SynchronizeStream(st) })
		for _, ms := range []int32{-1, 0, 1, 100} {
			ok(t, "SynchronizeStreamWithTimeout(idle)", func() error { return s.b.SynchronizeStreamWithTimeout(st, ms) })
		}
		ok(t, "DestroyStream", func() error { return s.b.DestroyStream(st) })
		s.undefined(t, "destroyed stream", func(t *testing.T) {
			s.badStream(t, st, "destroyed")
			// A destroyed handle → 107017 (runtime_handle_guard.cc:91).
			expect(t, acl.CodeRTInvalidHandle, "DestroyStream twice", func() error { return s.b.DestroyStream(st) })
		})
	})
	t.Run("BadHandle", func(t *testing.T) {
		s.bind(t)
		s.undefined(t, "unknown stream", func(t *testing.T) { s.badStream(t, bogusHandle, "unknown") })
		// NULL → 100000 (log_inner.h:452).
		expect(t, acl.CodeInvalidParam, "DestroyStream(NULL)", func() error { return s.b.DestroyStream(0) })
	})
	t.Run("BadTimeout", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		for _, ms := range []int32{-2, -1000, -1 << 31} {
			// hicann/runtime src/acl/aclrt_impl/stream.cpp:141-148
			expect(t, acl.CodeRTParamInvalid, "SynchronizeStreamWithTimeout(timeout < -1)", func() error {
				return s.b.SynchronizeStreamWithTimeout(st, ms)
			})
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		s.bind(t)
		st := s.newStream(t)
		release := s.hold(t, st)
		expect(t, acl.CodeRTStreamSyncTimeout, "SynchronizeStreamWithTimeout(busy stream)", func() error {
			return s.b.SynchronizeStreamWithTimeout(st, 20)
		})
		release()
		ok(t, "SynchronizeStreamWithTimeout after release", func() error { return s.b.SynchronizeStreamWithTimeout(st, -1) })
		ok(t, "SynchronizeStream after release", func() error { return s.b.SynchronizeStream(st) })
	})
	t.Run("InOrder", func(t *testing.T) {
		// memset, H2D, D2D, D2H queued back to back on one stream run in
		// order: the final host bytes are the uploaded ones.
		s.bind(t)
		st := s.newStream(t)
		for range 8 {
			n := 1 + s.rng.IntN(64<<10)
			in, out := s.pinned(t, n), s.pinned(t, n)
			want := s.randBytes(n)
			copy(in, want)
			clear(out)
			x, y := s.devMem(t, n), s.devMem(t, n)
			ok(t, "MemsetAsync", func() error { return s.b.MemsetAsync(x, uintptr(n), 0x5a, uintptr(n), st) })
			ok(t, "MemcpyAsync H2D", func() error {
				return s.b.MemcpyAsync(x, uintptr(n), hostPtr(in), uintptr(n), acl.MemcpyHostToDevice, st)
			})
			ok(t, "MemcpyAsync D2D", func() error {
				return s.b.MemcpyAsync(y, uintptr(n), x, uintptr(n), acl.MemcpyDeviceToDevice, st)
			})
			ok(t, "MemcpyAsync D2H", func() error {
				return s.b.MemcpyAsync(hostPtr(out), uintptr(n), y, uintptr(n), acl.MemcpyDeviceToHost, st)
			})
			ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
			require.Equal(t, want, out)
		}
	})
	t.Run("Asynchronous", func(t *testing.T) {
		// Work queued behind a held task has not run until the hold ends.
		s.bind(t)
		st := s.newStream(t)
		const n = 4096
		in, out := s.pinned(t, n), s.pinned(t, n)
		want := s.randBytes(n)
		copy(in, want)
		clear(out)
		x := s.devMem(t, n)
		release := s.hold(t, st)
		ok(t, "MemcpyAsync H2D", func() error {
			return s.b.MemcpyAsync(x, n, hostPtr(in), n, acl.MemcpyHostToDevice, st)
		})
		ok(t, "MemcpyAsync D2H", func() error {
			return s.b.MemcpyAsync(hostPtr(out), n, x, n, acl.MemcpyDeviceToHost, st)
		})
		assert.Equal(t, make([]byte, n), out, "queued copies ran before the stream reached them")
		release()
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		assert.Equal(t, want, out)
	})
	t.Run("ContinueOnFailure", func(t *testing.T) {
		// The default failure mode, ACL_CONTINUE_ON_FAILURE: the tasks after
		// a failed one run; the next synchronize reports the failure and
		// forgets it (hicann/runtime src/runtime/core/src/stream/
		// stream.cc:1790-1830; docs/zh/api_ref/06_stream_management.md:475).
		if s.opt.FailNextTask == nil {
			t.Skip("the backend cannot fail a stream task (Options.FailNextTask is nil)")
		}
		s.bind(t)
		st := s.newStream(t)
		const n = 1024
		x := s.devMem(t, n)
		ok(t, "Memset", func() error { return s.b.Memset(x, n, 0x33, n) })
		ok(t, "FailNextTask", func() error { return s.opt.FailNextTask(st, acl.CodeRTAICoreException) })
		ok(t, "MemsetAsync (fails on the device)", func() error { return s.b.MemsetAsync(x, n, 0x11, n, st) })
		got := make([]byte, n)
		ok(t, "Memcpy D2H", func() error { return s.b.Memcpy(hostPtr(got), n, x, n, acl.MemcpyDeviceToHost) })
		ok(t, "MemsetAsync after the failure (runs)", func() error { return s.b.MemsetAsync(x, n, 0x22, n, st) })
		expect(t, acl.CodeRTAICoreException, "SynchronizeStream after a failed task", func() error { return s.b.SynchronizeStream(st) })
		ok(t, "SynchronizeStream again (reported once)", func() error { return s.b.SynchronizeStream(st) })
		ok(t, "SynchronizeStreamWithTimeout (reported once)", func() error { return s.b.SynchronizeStreamWithTimeout(st, 100) })
		ok(t, "Memcpy D2H", func() error { return s.b.Memcpy(hostPtr(got), n, x, n, acl.MemcpyDeviceToHost) })
		assert.Equal(t, fill(n, 0x22), got, "the failed task must not run, the one after it must")
	})
}

// badStream checks that every stream-taking call refuses st (unknown or
// destroyed) with ACL_ERROR_RT_INVALID_HANDLE. The current thread must
// have the suite context.
func (s *suite) badStream(t *testing.T, st acl.StreamHandle, what string) {
	t.Helper()
	ev, err := s.b.CreateEvent()
	require.NoError(t, err)
	defer func() { _ = s.b.DestroyEvent(ev) }()
	const n = 256
	x := s.devMem(t, n)
	h := s.pinned(t, n)
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"SynchronizeStream", func() error { return s.b.SynchronizeStream(st) }},
		{"SynchronizeStreamWithTimeout", func() error { return s.b.SynchronizeStreamWithTimeout(st, 10) }},
		{"RecordEvent", func() error { return s.b.RecordEvent(ev, st) }},
		{"StreamWaitEvent", func() error { return s.b.StreamWaitEvent(st, ev) }},
		{"MemcpyAsync", func() error { return s.b.MemcpyAsync(x, n, hostPtr(h), n, acl.MemcpyHostToDevice, st) }},
		{"MemsetAsync", func() error { return s.b.MemsetAsync(x, n, 0, n, st) }},
	} {
		// Unknown or destroyed handles → 107017 (runtime_handle_guard.cc:91).
		expect(t, acl.CodeRTInvalidHandle, c.name+"("+what+" stream)", c.call)
	}
}

// fill returns n bytes of v.
func fill(n int, v byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = v
	}
	return p
}
