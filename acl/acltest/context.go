package acltest

import (
	"sync"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// context: contexts and their binding to OS threads.
func (s *suite) context(t *testing.T) {
	t.Run("Current", func(t *testing.T) {
		s.bind(t)
		cur, err := s.b.GetCurrentContext()
		require.NoError(t, err)
		assert.Equal(t, s.ctx, cur)
		d, err := s.b.GetDevice()
		require.NoError(t, err)
		assert.Equal(t, s.dev, d)
	})
	t.Run("CreateDestroy", func(t *testing.T) {
		s.bind(t)
		ctx2, err := s.b.CreateContext(s.dev)
		require.NoError(t, err)
		assert.NotEqual(t, s.ctx, ctx2)
		cur, err := s.b.GetCurrentContext()
		require.NoError(t, err)
		assert.Equal(t, ctx2, cur, "CreateContext makes the new context current")
		ok(t, "SetCurrentContext(first)", func() error { return s.b.SetCurrentContext(s.ctx) })
		ok(t, "DestroyContext", func() error { return s.b.DestroyContext(ctx2) })
		s.undefined(t, "destroyed context", func(t *testing.T) {
			// hicann/runtime src/runtime/api/impl/api_impl.cc:4184-4187 and
			// 4133-4139: RT_ERROR_CONTEXT_NULL → 107002.
			expect(t, acl.CodeRTContextNull, "SetCurrentContext(destroyed)", func() error { return s.b.SetCurrentContext(ctx2) })
			expect(t, acl.CodeRTContextNull, "DestroyContext twice", func() error { return s.b.DestroyContext(ctx2) })
		})
		cur, err = s.b.GetCurrentContext()
		require.NoError(t, err)
		assert.Equal(t, s.ctx, cur)
	})
	t.Run("DestroyDefault", func(t *testing.T) {
		// The default context belongs to the device (released by
		// aclrtResetDevice): hicann/runtime src/runtime/api/impl/
		// api_impl.cc:4140-4142 → RT_ERROR_CONTEXT_NULL, 107002.
		onThread(t, func() {
			if !check(t, s.b.SetDevice(s.dev), "SetDevice") {
				return
			}
			def, err := s.b.GetCurrentContext()
			if check(t, err, "GetCurrentContext") {
				expect(t, acl.CodeRTContextNull, "DestroyContext(default context)", func() error { return s.b.DestroyContext(def) })
				cur, err := s.b.GetCurrentContext()
				check(t, err, "GetCurrentContext after the refusal")
				assert.Equal(t, def, cur, "the default context is still current")
			}
			check(t, s.b.ResetDevice(s.dev), "ResetDevice")
		})
	})
	t.Run("BadHandle", func(t *testing.T) {
		s.bind(t)
		// ACL-layer NULL checks → 100000 (hicann/runtime src/acl/common/log_inner.h:452-460).
		expect(t, acl.CodeInvalidParam, "SetCurrentContext(NULL)", func() error { return s.b.SetCurrentContext(0) })
		expect(t, acl.CodeInvalidParam, "DestroyContext(NULL)", func() error { return s.b.DestroyContext(0) })
		s.undefined(t, "unknown context", func(t *testing.T) {
			// api_impl.cc:4184-4187, 4133-4139
			expect(t, acl.CodeRTContextNull, "SetCurrentContext(unknown)", func() error { return s.b.SetCurrentContext(bogusHandle) })
			expect(t, acl.CodeRTContextNull, "DestroyContext(unknown)", func() error { return s.b.DestroyContext(bogusHandle) })
		})
		cur, err := s.b.GetCurrentContext()
		require.NoError(t, err)
		assert.Equal(t, s.ctx, cur, "a refused SetCurrentContext leaves the current context alone")
	})
	t.Run("NoContextOnThread", func(t *testing.T) {
		s.onFreshThread(t, func() {
			for _, c := range []struct {
				name string
				call func() error
			}{
				{"GetCurrentContext", func() error { _, err := s.b.GetCurrentContext(); return err }},
				{"CreateStream", func() error { _, err := s.b.CreateStream(); return err }},
				{"CreateEvent", func() error { _, err := s.b.CreateEvent(); return err }},
				{"GetDevice", func() error { _, err := s.b.GetDevice(); return err }},
				{"Malloc", func() error { _, err := s.b.Malloc(64, acl.MemMallocHugeFirst); return err }},
				{"GetMemInfo", func() error { _, _, err := s.b.GetMemInfo(acl.HBMMem); return err }},
				{"SynchronizeStream(default stream)", func() error { return s.b.SynchronizeStream(0) }},
			} {
				// No current context: RT_ERROR_CONTEXT_NULL → 107002 (api_impl.cc:2337, errcode_manage.cc:218).
				expect(t, acl.CodeRTContextNull, c.name+" on a thread with no current context", c.call)
			}
		})
	})
	t.Run("ThreadMigration", func(t *testing.T) {
		// Thread A binds the context and creates a stream; thread B, another
		// OS thread, has no context until it binds one itself, and then
		// works with A's stream.
		aReady := make(chan acl.StreamHandle)
		aDone := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			onThread(t, func() {
				defer close(aReady)
				if !check(t, s.b.SetCurrentContext(s.ctx), "A: SetCurrentContext") {
					return
				}
				st, err := s.b.CreateStream()
				if !check(t, err, "A: CreateStream") {
					return
				}
				aReady <- st
				<-aDone // A stays locked on its thread while B runs
				cur, err := s.b.GetCurrentContext()
				check(t, err, "A: GetCurrentContext")
				assert.Equal(t, s.ctx, cur, "A keeps its context while B binds")
			})
		})
		st := <-aReady
		s.onFreshThread(t, func() {
			// A context is current per OS thread: B has none → 107002 (api_impl.cc:2337).
			expect(t, acl.CodeRTContextNull, "B: CreateStream before binding", func() error {
				_, err := s.b.CreateStream()
				return err
			})
			if !check(t, s.b.SetCurrentContext(s.ctx), "B: SetCurrentContext") {
				return
			}
			st2, err := s.b.CreateStream()
			if check(t, err, "B: CreateStream after binding") {
				check(t, s.b.DestroyStream(st2), "B: DestroyStream")
			}
			if st != 0 {
				check(t, s.b.SynchronizeStream(st), "B: SynchronizeStream of A's stream")
				check(t, s.b.DestroyStream(st), "B: DestroyStream of A's stream")
			}
		})
		close(aDone)
		wg.Wait()
	})
	t.Run("StreamOfOtherContext", func(t *testing.T) {
		s.bind(t)
		st, err := s.b.CreateStream()
		require.NoError(t, err)
		dev, err := s.b.Malloc(256, acl.MemMallocHugeFirst)
		require.NoError(t, err)
		host, err := s.b.MallocHost(256)
		require.NoError(t, err)

		ctx2, err := s.b.CreateContext(s.dev) // now current
		require.NoError(t, err)
		// The stream must be of the current context → 107003 (api_impl.cc:2882, errcode_manage.cc:126).
		expect(t, acl.CodeRTStreamContext, "MemcpyAsync on a stream of another context", func() error {
			return s.b.MemcpyAsync(dev, 256, host, 256, acl.MemcpyHostToDevice, st)
		})
		expect(t, acl.CodeRTStreamContext, "MemsetAsync on a stream of another context", func() error {
			return s.b.MemsetAsync(dev, 256, 0, 256, st)
		})
		// hicann/runtime src/runtime/api/impl/api_impl.cc:1582-1585
		expect(t, acl.CodeRTStreamContext, "DestroyStream of a stream of another context", func() error {
			return s.b.DestroyStream(st)
		})
		ok(t, "SetCurrentContext(own)", func() error { return s.b.SetCurrentContext(s.ctx) })
		ok(t, "DestroyContext(other)", func() error { return s.b.DestroyContext(ctx2) })
		ok(t, "MemcpyAsync in the stream's own context", func() error {
			return s.b.MemcpyAsync(dev, 256, host, 256, acl.MemcpyHostToDevice, st)
		})
		ok(t, "SynchronizeStream", func() error { return s.b.SynchronizeStream(st) })
		ok(t, "DestroyStream", func() error { return s.b.DestroyStream(st) })
		ok(t, "Free", func() error { return s.b.Free(dev) })
		ok(t, "FreeHost", func() error { return s.b.FreeHost(host) })
	})
}
