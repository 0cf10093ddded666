package acl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
)

// drainLog is a fallback NPU that records the order of the waits acl makes
// on a stream; block makes DrainStream wait for its context instead.
type drainLog struct {
	*fallback.NPU
	mu    sync.Mutex
	calls []string
	block bool
}

func (d *drainLog) log(s string) {
	d.mu.Lock()
	d.calls = append(d.calls, s)
	d.mu.Unlock()
}

func (d *drainLog) DrainStream(ctx context.Context, s acl.StreamHandle) error {
	d.log("drain")
	if d.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return d.NPU.DrainStream(ctx, s)
}

func (d *drainLog) SynchronizeStream(s acl.StreamHandle) error {
	d.log("sync")
	return d.NPU.SynchronizeStream(s)
}

func (d *drainLog) SynchronizeStreamContext(ctx context.Context, s acl.StreamHandle) error {
	d.log("sync-ctx")
	return d.NPU.SynchronizeStreamContext(ctx, s)
}

// drainStream opens device 0 of a drainLog and a stream on it, all closed
// when the test ends.
func drainStream(t *testing.T) (*drainLog, *acl.Stream) {
	t.Helper()
	npu, err := fallback.New()
	require.NoError(t, err)
	d := &drainLog{NPU: npu}
	_, dev := openOn(t, d)
	s, err := dev.NewStream()
	require.NoError(t, err)
	return d, s
}

// TestStreamDrainsBeforeSync: on a StreamDrainer, Synchronize and Wait
// wait unbound first and then make the bound synchronize, which reports
// the stream's failure as before (once, in the default mode).
func TestStreamDrainsBeforeSync(t *testing.T) {
	d, s := drainStream(t)
	require.NoError(t, s.Synchronize())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Wait(ctx))
	require.NoError(t, s.Wait(context.Background()))
	require.Equal(t, []string{"drain", "sync", "drain", "sync-ctx", "drain", "sync"}, d.calls)

	d.FailTask(1, acl.CodeRTTSError)
	dev := s.Device()
	buf := devMem(t, dev, 64)
	defer buf.Close()
	require.NoError(t, buf.MemsetAsync(0, s))
	require.Equal(t, acl.CodeRTTSError, acl.CodeOf(s.Synchronize()))
	require.NoError(t, s.Synchronize())
}

// TestStreamDrainCancelled: a context that ends during the unbound wait
// ends Wait with ctx.Err(), without the bound synchronize.
func TestStreamDrainCancelled(t *testing.T) {
	d, s := drainStream(t)
	d.block = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Wait(ctx), context.DeadlineExceeded)
	require.Equal(t, []string{"drain"}, d.calls)
}
