package fallback

import (
	"runtime"
	"sync"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestContextPerOSThread: goroutines locked to different OS threads have
// independent current contexts; a thread that never bound one gets
// ACL_ERROR_RT_CONTEXT_NULL even while others work.
func TestContextPerOSThread(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	const workers = 4
	var wg sync.WaitGroup
	tids := make([]int, workers)
	start := make(chan struct{})
	var bound sync.WaitGroup // every worker holds its thread and context
	bound.Add(workers)
	for i := range workers {
		wg.Go(func() {
			ready := sync.OnceFunc(bound.Done)
			defer ready()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids[i] = unix.Gettid()
			dev := int32(i % 2)
			if !assert.NoError(t, n.SetDevice(dev)) {
				return
			}
			ctx, err := n.CreateContext(dev)
			if !assert.NoError(t, err) {
				return
			}
			ready()
			<-start // all threads bound at once
			for range 50 {
				cur, err := n.GetCurrentContext()
				assert.NoError(t, err)
				assert.Equal(t, ctx, cur, "worker %d", i)
				got, err := n.GetDevice()
				assert.NoError(t, err)
				assert.Equal(t, dev, got)
				p, err := n.Malloc(512, acl.MemMallocHugeFirst)
				if assert.NoError(t, err) {
					assert.Equal(t, dev, n.classify(p).Device)
					assert.NoError(t, n.Free(p))
				}
				runtime.Gosched()
			}
			assert.NoError(t, n.DestroyContext(ctx))
			// The destroyed context was current: the thread has none now.
			_, err = n.GetCurrentContext()
			assertCode(t, acl.CodeRTContextNull, err)
			assert.NoError(t, n.SetDevice(dev))
		})
	}
	// A thread that never binds sees no context at any time.
	bound.Wait()
	onThread(func() {
		close(start)
		for range 50 {
			_, err := n.GetCurrentContext()
			assertCode(t, acl.CodeRTContextNull, err)
			_, err = n.CreateStream()
			assertCode(t, acl.CodeRTContextNull, err)
		}
	})
	wg.Wait()
	seen := map[int]bool{}
	for _, tid := range tids {
		assert.False(t, seen[tid], "locked goroutines share a thread: %v", tids)
		seen[tid] = true
	}
	for d := range int32(2) {
		for range workers / 2 * 2 { // each worker set its device twice
			require.NoError(t, n.ResetDevice(d))
		}
	}
	// No reference left: hicann/runtime src/runtime/core/src/runtime.cc:2931.
	requireCode(t, acl.CodeRTContextReleaseError, n.ResetDevice(1))
	assert.Empty(t, n.Leaks())
}

// TestMigratedGoroutineLosesContext: the binding belongs to the thread, not
// the goroutine.
func TestMigratedGoroutineLosesContext(t *testing.T) {
	n := newTestNPU(t)
	ctx, err := n.GetCurrentContext()
	require.NoError(t, err)
	// Another thread borrows the context, then gives it up by exiting.
	onThread(func() {
		_, err := n.GetCurrentContext()
		assertCode(t, acl.CodeRTContextNull, err)
		assert.NoError(t, n.SetCurrentContext(ctx))
		p, err := n.Malloc(64, acl.MemMallocHugeFirst)
		if assert.NoError(t, err) {
			assert.NoError(t, n.Free(p))
		}
	})
	cur, err := n.GetCurrentContext()
	require.NoError(t, err)
	assert.Equal(t, ctx, cur)
	require.NoError(t, n.ResetDevice(0))
}

func TestSetDeviceRefcountAndReset(t *testing.T) {
	n := newTestNPU(t)
	def, err := n.GetCurrentContext()
	require.NoError(t, err)
	require.NoError(t, n.SetDevice(0)) // second reference
	again, err := n.GetCurrentContext()
	require.NoError(t, err)
	assert.Equal(t, def, again, "one default context per device")
	// hicann/runtime src/runtime/api/impl/api_impl.cc:4140-4142
	requireCode(t, acl.CodeRTContextNull, n.DestroyContext(def), "the default context belongs to the device")

	p := mustMalloc(t, n, 1024)
	require.NoError(t, n.ResetDevice(0))
	assert.Equal(t, npuhook.PlaceDevice, n.classify(p).Place, "still set once: nothing released")
	require.NoError(t, n.ResetDevice(0))
	assert.Equal(t, npuhook.PlaceInvalid, n.classify(p).Place, "the last reset releases the memory")
	_, err = n.GetCurrentContext()
	requireCode(t, acl.CodeRTContextNull, err)
	requireCode(t, acl.CodeRTContextNull, n.SetCurrentContext(def)) // hicann/runtime src/runtime/api/impl/api_impl.cc:4184-4187
	leaks := n.Leaks()
	require.Len(t, leaks, 1)
	assert.Equal(t, LeakDeviceMemory, leaks[0].Kind)
	assert.Equal(t, "aclrtResetDevice", leaks[0].At)

	// The device can be set again, with a new default context.
	require.NoError(t, n.SetDevice(0))
	fresh, err := n.GetCurrentContext()
	require.NoError(t, err)
	assert.NotEqual(t, def, fresh)
}

func TestStreamOfAnotherContext(t *testing.T) {
	n := newTestNPU(t, WithDevices(2))
	s0, err := n.CreateStream()
	require.NoError(t, err)
	ctx1, err := n.CreateContext(1)
	require.NoError(t, err)
	for _, err := range []error{
		n.SynchronizeStream(s0),
		n.SynchronizeStreamWithTimeout(s0, 0),
		n.DestroyStream(s0),
		n.enqueueTask(s0, func() error { return nil }),
		n.MemsetAsync(ptrOf(make([]byte, 1)), 1, 0, 1, s0),
	} {
		assertCode(t, acl.CodeRTStreamContext, err)
	}
	require.NoError(t, n.DestroyContext(ctx1))
	_, err = n.CreateStream()
	requireCode(t, acl.CodeRTContextNull, err, "the destroyed context was current")
	require.NoError(t, n.SetDevice(0))
	require.NoError(t, n.DestroyStream(s0))
}
