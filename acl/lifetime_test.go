package acl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hold queues on st a task that blocks until the returned release is
// called (idempotent).
func hold(t *testing.T, npu *fallback.NPU, d *acl.Device, st *acl.Stream) func() {
	t.Helper()
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	require.NoError(t, d.Do(func() error {
		_, err := npuhook.Of(npu).Enqueue(st.Handle(), "hold", func() error { <-gate; return nil })
		return err
	}))
	t.Cleanup(release)
	return release
}

// within fails the test if f has not returned after d: a deadlock or hang.
// f runs on another goroutine, so it reports with assert, never require.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

// TestBuffersOnTheirDevice: a buffer lands on the device it was allocated
// from, whatever device the calling thread last bound.
func TestBuffersOnTheirDevice(t *testing.T) {
	npu, rt, d0 := open(t, fallback.WithDevices(2))
	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 20 {
				d := []*acl.Device{d0, d1}[(g+k)%2]
				b, err := d.Malloc(512, acl.MemMallocHugeFirst)
				if !assert.NoError(t, err) {
					return
				}
				pl := npuhook.Of(npu).Classify(b.Ptr())
				assert.Equal(t, npuhook.PlaceDevice, pl.Place)
				assert.Equal(t, d.ID(), pl.Device)
				assert.NoError(t, b.Close())
			}
		})
	}
	wg.Wait()
}

// TestLockOrder: copies naming the same buffers in opposite orders, racing
// with Close of those buffers and of the stream, never deadlock.
func TestLockOrder(t *testing.T) {
	_, _, d := open(t)
	within(t, 30*time.Second, "racing copies and closes", func() {
		for range 20 {
			st, err := d.NewStream()
			if !assert.NoError(t, err) {
				return
			}
			a, err := d.Malloc(4096, acl.MemMallocHugeFirst)
			if !assert.NoError(t, err) {
				return
			}
			b, err := d.Malloc(4096, acl.MemMallocHugeFirst)
			if !assert.NoError(t, err) {
				return
			}
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Go(func() {
					for range 20 {
						var err error
						switch g % 3 {
						case 0:
							err = a.CopyFromAsync(b, st)
						case 1:
							err = b.CopyFromAsync(a, st)
						default:
							err = a.CopyFrom(b)
						}
						if err != nil {
							assert.ErrorIs(t, err, acl.ErrInvalidHandle)
							return
						}
					}
				})
			}
			wg.Go(func() { assert.NoError(t, a.Close()) })
			wg.Go(func() { assert.NoError(t, b.Close()) })
			wg.Go(func() { assert.NoError(t, st.Close()) })
			wg.Wait()
		}
	})
}

// TestDeviceCloseWaitsForStreams: Device.Close lets queued work finish
// before destroying the stream and the memory it uses, and a Wait running
// meanwhile ends with the closed-handle error.
func TestDeviceCloseWaitsForStreams(t *testing.T) {
	npu, _, d := open(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	hb, err := d.MallocHost(4096)
	require.NoError(t, err)
	buf, err := d.Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	release := hold(t, npu, d, st)
	require.NoError(t, buf.MemsetAsync(0x5a, st))
	require.NoError(t, buf.CopyToHostAsync(hb, st))

	waited := make(chan error, 1)
	go func() { waited <- st.Wait(context.Background()) }()
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Device.Close returned (%v) while its stream was still busy", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	within(t, 10*time.Second, "Device.Close after the stream drained", func() { assert.NoError(t, <-closed) })
	within(t, 10*time.Second, "Stream.Wait", func() {
		err := <-waited
		if err != nil { // the Wait may also have finished before the Close
			assert.ErrorIs(t, err, acl.ErrInvalidHandle)
		}
	})
	assert.Empty(t, npu.Leaks())
	assert.ErrorIs(t, st.Synchronize(), acl.ErrInvalidHandle)
	assert.Nil(t, hb.Bytes())
}

// TestBufferCloseWaitsForStreams: closing a buffer with a copy still queued
// waits for it instead of freeing memory under the device.
func TestBufferCloseWaitsForStreams(t *testing.T) {
	npu, _, d := open(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	hb, err := d.MallocHost(4096)
	require.NoError(t, err)
	buf, err := d.Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	release := hold(t, npu, d, st)
	require.NoError(t, buf.CopyFromHostAsync(hb, st))
	closed := make(chan error, 1)
	go func() { closed <- hb.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("HostBuffer.Close returned (%v) while a copy from it was queued", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	within(t, 10*time.Second, "HostBuffer.Close", func() { assert.NoError(t, <-closed) })
	require.NoError(t, st.Synchronize(), "the queued copy ran on live memory")
	require.NoError(t, buf.Close())
}

// TestRuntimeCloseClosesDevices: Runtime.Close leaves every handle closed.
func TestRuntimeCloseClosesDevices(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	buf, err := d.Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	assert.Empty(t, npu.Leaks(), "Runtime.Close released everything explicitly")
	for op, err := range map[string]error{
		"Stream.Synchronize":  st.Synchronize(),
		"DeviceBuffer.Memset": buf.Memset(0),
		"Device.NewStream":    func() error { _, err := d.NewStream(); return err }(),
		"Runtime.OpenDevice":  func() error { _, err := rt.OpenDevice(0); return err }(),
		"Runtime.DeviceCount": func() error { _, err := rt.DeviceCount(); return err }(),
	} {
		assert.ErrorIs(t, err, acl.ErrInvalidHandle, op)
	}
	assert.Empty(t, rt.SocName())
	require.NoError(t, rt.Close())
}

// TestStickyErrorThroughWait: a failed task surfaces through Wait with its
// code: once in the default mode (ContinueOnFailure), by every Wait and
// Synchronize after SetFailureMode(StopOnFailure); Close does not report
// it again.
func TestStickyErrorThroughWait(t *testing.T) {
	npu, _, d := open(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	buf, err := d.Malloc(64, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	npu.FailTask(1, acl.CodeRTAICoreException)
	require.NoError(t, buf.MemsetAsync(1, st))
	assert.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(st.Wait(ctx)))
	assert.NoError(t, st.Synchronize(), "reported once")

	require.NoError(t, st.SetFailureMode(acl.StopOnFailure))
	npu.FailTask(1, acl.CodeRTAICoreException)
	require.NoError(t, buf.MemsetAsync(1, st))
	assert.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(st.Wait(ctx)))
	assert.Equal(t, acl.CodeRTAICoreException, acl.CodeOf(st.Synchronize()), "sticky")
	assert.NoError(t, st.Close())
}

// TestEventWaitNeverRecorded: waiting for an event never recorded returns
// at once, as the backend's synchronize does.
func TestEventWaitNeverRecorded(t *testing.T) {
	_, _, d := open(t)
	ev, err := d.NewEvent(0)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	within(t, 5*time.Second, "Event.Wait", func() {
		assert.NoError(t, ev.Synchronize())
		assert.NoError(t, ev.Wait(ctx))
	})
}

// TestDeviceCloseWaitsForOtherDevicesStreams: memory of one Device in use
// by a stream of another is not released under that stream's queued work.
func TestDeviceCloseWaitsForOtherDevicesStreams(t *testing.T) {
	npu, rt, d0 := open(t, fallback.WithDevices(2))
	d1, err := rt.OpenDevice(1)
	require.NoError(t, err)
	st1, err := d1.NewStream()
	require.NoError(t, err)
	hb0, err := d0.MallocHost(4096)
	require.NoError(t, err)
	buf1, err := d1.Malloc(4096, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	release := hold(t, npu, d1, st1)
	require.NoError(t, buf1.CopyFromHostAsync(hb0, st1))
	closed := make(chan error, 1)
	go func() { closed <- d0.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Device.Close returned (%v) while another device's stream used its memory", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	within(t, 10*time.Second, "Device.Close", func() { assert.NoError(t, <-closed) })
	require.NoError(t, st1.Synchronize(), "the queued copy ran on live memory")
	require.NoError(t, d1.Close())
	assert.Empty(t, npu.Leaks())
}
