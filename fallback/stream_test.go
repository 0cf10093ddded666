package fallback

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamOrder: tasks of one stream run one at a time in queue order,
// while the host goes on; streams run concurrently with each other.
func TestStreamOrder(t *testing.T) {
	n := newTestNPU(t)
	const streams, tasks = 4, 200
	var hs []acl.StreamHandle
	logs := make([][]int, streams)
	var running [streams]atomic.Int32
	for range streams {
		s, err := n.CreateStream()
		require.NoError(t, err)
		hs = append(hs, s)
	}
	for k := range tasks {
		for i, s := range hs {
			require.NoError(t, n.enqueueTask(s, func() error {
				if running[i].Add(1) != 1 {
					return errors.New("two tasks of one stream ran at once")
				}
				logs[i] = append(logs[i], k)
				running[i].Add(-1)
				return nil
			}))
		}
	}
	for i, s := range hs {
		require.NoError(t, n.SynchronizeStream(s))
		require.Len(t, logs[i], tasks)
		for k, v := range logs[i] {
			require.Equal(t, k, v, "stream %d ran task %d out of order", i, v)
		}
		require.NoError(t, n.DestroyStream(s))
	}
}

// TestStickyError: a failing task fails its stream for good; later work
// on it is skipped; other streams go on.
// TestStreamFailureModes: a failed task under ACL_CONTINUE_ON_FAILURE (the
// default) and ACL_STOP_ON_FAILURE (hicann/runtime src/runtime/core/src/
// stream/stream.cc:1790-1830, 4336-4352; api_impl.cc:1991-2034). A program
// that relied on a failure stopping the stream asks for StopOnFailure.
func TestStreamFailureModes(t *testing.T) {
	boom := acl.Errorf("custom", acl.CodeRTAICoreException, "kernel fault")
	t.Run("ContinueOnFailure", func(t *testing.T) {
		n := newTestNPU(t)
		s, err := n.CreateStream()
		require.NoError(t, err)
		var ran []int
		require.NoError(t, n.enqueueTask(s, func() error { ran = append(ran, 1); return nil }))
		require.NoError(t, n.enqueueOp(s, "aclopExecuteV2", func() error { ran = append(ran, 2); return boom }))
		require.NoError(t, n.enqueueTask(s, func() error { ran = append(ran, 3); return nil }))
		err = n.SynchronizeStream(s)
		requireCode(t, acl.CodeRTAICoreException, err)
		assert.Contains(t, err.Error(), "aclopExecuteV2")
		assert.Contains(t, err.Error(), "kernel fault")
		require.NoError(t, n.SynchronizeStream(s), "reported once")
		assert.Equal(t, []int{1, 2, 3}, ran)
		require.NoError(t, n.enqueueTask(s, func() error { ran = append(ran, 4); return nil }))
		require.NoError(t, n.SynchronizeStreamWithTimeout(s, hangBoundMs))
		assert.Equal(t, []int{1, 2, 3, 4}, ran)
		require.NoError(t, n.DestroyStream(s))
	})
	t.Run("StopOnFailure", func(t *testing.T) {
		n := newTestNPU(t)
		s, err := n.CreateStream()
		require.NoError(t, err)
		require.NoError(t, n.SetStreamFailureMode(s, acl.StopOnFailure))
		require.NoError(t, n.SetStreamFailureMode(s, acl.StopOnFailure), "the mode it has")
		requireCode(t, acl.CodeRTFeatureNotSupport, n.SetStreamFailureMode(s, acl.ContinueOnFailure))
		var ran []int
		// The first task holds the stream until all three are queued: the
		// failing op stops the context, which then takes no new task.
		gate := make(chan struct{})
		require.NoError(t, n.enqueueTask(s, func() error { <-gate; ran = append(ran, 1); return nil }))
		require.NoError(t, n.enqueueOp(s, "aclopExecuteV2", func() error { ran = append(ran, 2); return boom }))
		require.NoError(t, n.enqueueTask(s, func() error { ran = append(ran, 3); return nil }))
		close(gate)
		for range 3 {
			err := n.SynchronizeStream(s)
			requireCode(t, acl.CodeRTAICoreException, err)
			assert.Contains(t, err.Error(), "kernel fault")
		}
		assert.Equal(t, []int{1, 2}, ran)
		// The context stopped: no stream of it takes new work, every
		// synchronize reports the failure.
		requireCode(t, acl.CodeRTAICoreException, n.enqueueTask(s, func() error { ran = append(ran, 4); return nil }))
		requireCode(t, acl.CodeRTAICoreException, n.enqueueTask(0, func() error { ran = append(ran, 5); return nil }))
		requireCode(t, acl.CodeRTAICoreException, n.SynchronizeStream(0))
		assert.Equal(t, []int{1, 2}, ran)
		// Another context is unaffected.
		ctx2, err := n.CreateContext(0)
		require.NoError(t, err)
		require.NoError(t, n.enqueueTask(0, func() error { ran = append(ran, 6); return nil }))
		require.NoError(t, n.SynchronizeStream(0))
		assert.Equal(t, []int{1, 2, 6}, ran)
		require.NoError(t, n.DestroyContext(ctx2))
		require.NoError(t, n.SetDevice(0))
		require.NoError(t, n.DestroyStream(s))
	})
}

func TestTaskErrorsWithoutCodeAndPanics(t *testing.T) {
	n := newTestNPU(t)
	s1, err := n.CreateStream()
	require.NoError(t, err)
	s2, err := n.CreateStream()
	require.NoError(t, err)
	require.NoError(t, n.enqueueTask(s1, func() error { return errors.New("plain") }))
	require.NoError(t, n.enqueueTask(s2, func() error { panic("task bug") }))
	err = n.SynchronizeStream(s1)
	requireCode(t, acl.CodeRTTSError, err)
	assert.Contains(t, err.Error(), "plain")
	err = n.SynchronizeStream(s2)
	requireCode(t, acl.CodeRTTSError, err)
	assert.Contains(t, err.Error(), "panicked: task bug")
	requireCode(t, acl.CodeInvalidParam, n.enqueueTask(s1, nil))
	require.NoError(t, n.DestroyStream(s1))
	require.NoError(t, n.DestroyStream(s2))
}

func TestSynchronizeTimeouts(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	release := hold(t, n, s)
	requireCode(t, acl.CodeRTStreamSyncTimeout, n.SynchronizeStreamWithTimeout(s, 0), "poll")
	t0 := time.Now()
	err = n.SynchronizeStreamWithTimeout(s, 30)
	requireCode(t, acl.CodeRTStreamSyncTimeout, err)
	assert.GreaterOrEqual(t, time.Since(t0), 30*time.Millisecond)
	assert.ErrorIs(t, err, acl.ErrTimeout)
	requireCode(t, acl.CodeRTParamInvalid, n.SynchronizeStreamWithTimeout(s, -2))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, n.SynchronizeStreamContext(ctx, s), context.DeadlineExceeded)

	done := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond)
		release()
		done <- nil
	}()
	require.NoError(t, n.SynchronizeStreamWithTimeout(s, -1))
	<-done
	require.NoError(t, n.SynchronizeStreamWithTimeout(s, 0), "idle stream polls successfully")
	require.NoError(t, n.SynchronizeStreamContext(context.Background(), s))
	require.NoError(t, n.DestroyStream(s))
}

// TestDrainStream: DrainStream waits for the queued work from any
// goroutine (this one has no current context), ends with a cancelled
// context, and leaves every complaint (an unknown or the default stream, a
// task's failure, a closed NPU) to the synchronize that follows.
func TestDrainStream(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	release := hold(t, n, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, n.DrainStream(ctx, s), context.DeadlineExceeded)
	drained := make(chan error, 1)
	go func() { drained <- n.DrainStream(context.Background(), s) }()
	select {
	case <-drained:
		t.Fatal("DrainStream returned with a task still queued")
	case <-time.After(10 * time.Millisecond):
	}
	release()
	require.NoError(t, <-drained)
	require.NoError(t, n.SynchronizeStreamWithTimeout(s, 0), "drained: a poll finds the stream idle")
	require.NoError(t, n.DrainStream(context.Background(), acl.StreamHandle(0xdead0)))
	require.NoError(t, n.DrainStream(context.Background(), 0))
	require.NoError(t, n.DestroyStream(s))
	require.NoError(t, n.DrainStream(context.Background(), s))
	require.NoError(t, n.Close())
	require.NoError(t, n.DrainStream(context.Background(), s))
}

// TestDestroyStreamDrains: DestroyStream waits for the queued work and
// stops the goroutine.
func TestDestroyStreamDrains(t *testing.T) {
	n := newTestNPU(t)
	base := streamWorkers()
	s, err := n.CreateStream()
	require.NoError(t, err)
	requireWorkers(t, base+1)
	var count atomic.Int32
	for range 100 {
		require.NoError(t, n.enqueueTask(s, func() error {
			time.Sleep(10 * time.Microsecond)
			count.Add(1)
			return nil
		}))
	}
	require.NoError(t, n.DestroyStream(s))
	assert.Equal(t, int32(100), count.Load())
	waitWorkers(t, base)
	requireCode(t, acl.CodeRTInvalidHandle, n.enqueueTask(s, func() error { return nil }))
	requireCode(t, acl.CodeRTInvalidHandle, n.DestroyStream(s))
	requireCode(t, acl.CodeInvalidParam, n.DestroyStream(0))
}

// TestNoGoroutineLeak: every way of ending streams (destroy, context
// destroy, reset, finalize, close) stops their goroutines.
func TestNoGoroutineLeak(t *testing.T) {
	base := streamWorkers()
	n, err := New(WithDevices(2), WithDeviceMemory(testMem), WithHostMemory(testMem))
	require.NoError(t, err)
	require.NoError(t, n.Init(""))
	onThread(func() {
		assert.NoError(t, n.SetDevice(0))
		for range 3 {
			_, err := n.CreateStream()
			assert.NoError(t, err)
		}
		ctx, err := n.CreateContext(1)
		assert.NoError(t, err)
		_, err = n.CreateStream()
		assert.NoError(t, err)
		assert.NoError(t, n.DestroyContext(ctx))
	})
	// 3 streams + device 0's default stream remain.
	requireWorkers(t, base+4)
	require.NoError(t, n.Finalize())
	waitWorkers(t, base)
	require.NoError(t, n.Init(""))
	onThread(func() {
		assert.NoError(t, n.SetDevice(1))
		_, err := n.CreateStream()
		assert.NoError(t, err)
		assert.NoError(t, n.ResetDevice(1))
	})
	waitWorkers(t, base)
	onThread(func() {
		assert.NoError(t, n.SetDevice(1))
		_, err := n.CreateStream()
		assert.NoError(t, err)
	})
	require.NoError(t, n.Close())
	require.NoError(t, n.Close())
	waitWorkers(t, base)
	kinds := map[LeakKind]int{}
	for _, l := range n.Leaks() {
		kinds[l.Kind]++
	}
	assert.Equal(t, map[LeakKind]int{LeakStream: 6}, kinds)
}

// TestCloseAbortsWaits: Close releases a synchronize blocked on work that
// never finishes by itself.
//
// No step depends on timing: the task is running on the stream's worker
// before the synchronize starts (so the synchronize waits; it cannot run
// the task inline), and the task is released only once the synchronize
// has returned, so it can return only because Close aborted it (or, had
// Close come first, refused it). Both give ACL_ERROR_UNINITIALIZE. The
// task's release then lets Close finish its teardown.
func TestCloseAbortsWaits(t *testing.T) {
	base := streamWorkers()
	n, err := New(WithDeviceMemory(testMem), WithHostMemory(testMem))
	require.NoError(t, err)
	require.NoError(t, n.Init(""))
	release := make(chan struct{})
	queued := make(chan struct{})
	got := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		onThread(func() {
			assert.NoError(t, n.SetDevice(0))
			running := make(chan struct{})
			assert.NoError(t, n.enqueueTask(0, func() error { close(running); <-release; return nil }))
			<-running
			close(queued)
			err := n.SynchronizeStream(0) // blocked, or refused if Close came first
			close(release)
			got <- err
		})
	})
	<-queued
	time.Sleep(5 * time.Millisecond) // usually lets the synchronize block first; either order passes
	require.NoError(t, n.Close())
	assertCode(t, acl.CodeUninitialize, <-got)
	wg.Wait()
	waitWorkers(t, base)
	requireCode(t, acl.CodeUninitialize, n.Init(""))
}
