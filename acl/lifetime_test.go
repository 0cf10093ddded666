package acl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuffersOnTheirDevice: a buffer lands on the device it was allocated
// from, whatever device the calling thread last bound.
func TestBuffersOnTheirDevice(t *testing.T) {
	npu, d0, d1 := openTwo(t)
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
	npu, d, st := openStream(t)
	hb := hostMem(t, d, 4096)
	buf := devMem(t, d, 4096)
	release := hold(t, npu, d, st)
	require.NoError(t, buf.MemsetAsync(0x5a, st))
	require.NoError(t, buf.CopyToHostAsync(hb, st))

	waited := make(chan error, 1)
	go func() { waited <- st.Wait(context.Background()) }()
	closed := mustBlock(t, "Device.Close, its stream busy,", d.Close)
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
	npu, d, st := openStream(t)
	hb := hostMem(t, d, 4096)
	buf := devMem(t, d, 4096)
	release := hold(t, npu, d, st)
	require.NoError(t, buf.CopyFromHostAsync(hb, st))
	closed := mustBlock(t, "HostBuffer.Close, a copy from it queued,", hb.Close)
	release()
	within(t, 10*time.Second, "HostBuffer.Close", func() { assert.NoError(t, <-closed) })
	require.NoError(t, st.Synchronize(), "the queued copy ran on live memory")
	require.NoError(t, buf.Close())
}

// TestRuntimeCloseClosesDevices: Runtime.Close leaves every handle closed.
func TestRuntimeCloseClosesDevices(t *testing.T) {
	npu, rt, d := open(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	buf := devMem(t, d, 64)
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
	npu, d, st := openStream(t)
	buf := devMem(t, d, 64)
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
	npu, d0, d1 := openTwo(t)
	st1, err := d1.NewStream()
	require.NoError(t, err)
	hb0 := hostMem(t, d0, 4096)
	buf1 := devMem(t, d1, 4096)
	release := hold(t, npu, d1, st1)
	require.NoError(t, buf1.CopyFromHostAsync(hb0, st1))
	closed := mustBlock(t, "Device.Close, another device's stream using its memory,", d0.Close)
	release()
	within(t, 10*time.Second, "Device.Close", func() { assert.NoError(t, <-closed) })
	require.NoError(t, st1.Synchronize(), "the queued copy ran on live memory")
	require.NoError(t, d1.Close())
	assert.Empty(t, npu.Leaks())
}
