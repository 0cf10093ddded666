package fallback

import (
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock advances by step at every reading.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestEventElapsedTimeUsesTheClock(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0), step: 1500 * time.Microsecond}
	n := newTestNPU(t, WithClock(clk.Now))
	s, err := n.CreateStream()
	require.NoError(t, err)
	a, err := n.CreateEvent()
	require.NoError(t, err)
	b, err := n.CreateEventWithFlag(acl.EventTimeLine)
	require.NoError(t, err)
	require.NoError(t, n.RecordEvent(a, s))
	require.NoError(t, n.enqueueTask(s, func() error { return nil }))
	require.NoError(t, n.RecordEvent(b, s))
	require.NoError(t, n.SynchronizeEvent(b))
	ms, err := n.EventElapsedTime(a, b)
	require.NoError(t, err)
	assert.InDelta(t, 1.5, ms, 1e-6)
	ms, err = n.EventElapsedTime(b, a)
	require.NoError(t, err)
	assert.InDelta(t, -1.5, ms, 1e-6)

	// Re-recording moves the stamp.
	require.NoError(t, n.RecordEvent(a, s))
	require.NoError(t, n.SynchronizeStream(s))
	ms, err = n.EventElapsedTime(b, a)
	require.NoError(t, err)
	assert.InDelta(t, 1.5, ms, 1e-6)

	_, err = n.CreateEventWithFlag(0x100)
	requireCode(t, acl.CodeInvalidParam, err)
	require.NoError(t, n.DestroyEvent(a))
	require.NoError(t, n.DestroyEvent(b))
	require.NoError(t, n.DestroyStream(s))
}

func TestEventStates(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	a, err := n.CreateEvent()
	require.NoError(t, err)
	b, err := n.CreateEvent()
	require.NoError(t, err)

	// Never recorded: nothing to wait for, no time.
	require.NoError(t, n.SynchronizeEvent(a))
	_, err = n.EventElapsedTime(a, b)
	requireCode(t, acl.CodeRTInternalError, err) // hicann/runtime src/runtime/core/src/event/event.cc:1248-1250
	require.NoError(t, n.StreamWaitEvent(s, a), "waiting for an event never recorded does not block")
	require.NoError(t, n.SynchronizeStreamWithTimeout(s, hangBoundMs))

	require.NoError(t, n.RecordEvent(a, s))
	release := hold(t, n, s)
	require.NoError(t, n.RecordEvent(b, s))
	_, err = n.EventElapsedTime(a, b)
	requireCode(t, acl.CodeRTEventTimestampInvalid, err)
	assert.ErrorContains(t, err, "has not reached")
	release()
	require.NoError(t, n.SynchronizeEvent(b))
	_, err = n.EventElapsedTime(a, b)
	require.NoError(t, err)

	require.NoError(t, n.DestroyEvent(a))
	require.NoError(t, n.DestroyEvent(b))
	require.NoError(t, n.DestroyStream(s))
}

// TestStreamWaitEventOrders: work on s2 queued after StreamWaitEvent waits
// for s1's record, even when the record is far behind in s1's queue.
func TestStreamWaitEventOrders(t *testing.T) {
	n := newTestNPU(t)
	s1, err := n.CreateStream()
	require.NoError(t, err)
	s2, err := n.CreateStream()
	require.NoError(t, err)
	e, err := n.CreateEvent()
	require.NoError(t, err)
	var mu sync.Mutex
	var order []string
	log := func(s string) func() error {
		return func() error { mu.Lock(); order = append(order, s); mu.Unlock(); return nil }
	}
	release := hold(t, n, s1)
	require.NoError(t, n.enqueueTask(s1, log("s1 work")))
	require.NoError(t, n.RecordEvent(e, s1))
	require.NoError(t, n.StreamWaitEvent(s2, e))
	require.NoError(t, n.enqueueTask(s2, log("s2 after wait")))
	requireCode(t, acl.CodeRTStreamSyncTimeout, n.SynchronizeStreamWithTimeout(s2, 20))
	release()
	require.NoError(t, n.SynchronizeStream(s2))
	assert.Equal(t, []string{"s1 work", "s2 after wait"}, order)
	require.NoError(t, n.DestroyEvent(e))
	require.NoError(t, n.DestroyStream(s1))
	require.NoError(t, n.DestroyStream(s2))
}

// TestDestroyEventReleasesWaiters: a stream waiting for an event that is
// destroyed before its record is reached goes on.
func TestDestroyEventReleasesWaiters(t *testing.T) {
	n := newTestNPU(t)
	s1, err := n.CreateStream()
	require.NoError(t, err)
	s2, err := n.CreateStream()
	require.NoError(t, err)
	e, err := n.CreateEvent()
	require.NoError(t, err)
	release := hold(t, n, s1)
	require.NoError(t, n.RecordEvent(e, s1))
	require.NoError(t, n.StreamWaitEvent(s2, e))
	requireCode(t, acl.CodeRTStreamSyncTimeout, n.SynchronizeStreamWithTimeout(s2, 10))
	require.NoError(t, n.DestroyEvent(e))
	require.NoError(t, n.SynchronizeStreamWithTimeout(s2, hangBoundMs))
	release()
	require.NoError(t, n.DestroyStream(s1))
	require.NoError(t, n.DestroyStream(s2))
}

// TestEventCarriesStreamError: an event recorded on a failed stream is
// still reached (nobody hangs) and reports the failure.
func TestEventCarriesStreamError(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	// A record carries the failure of a stopped stream (ACL_STOP_ON_FAILURE).
	require.NoError(t, n.SetStreamFailureMode(s, acl.StopOnFailure))
	e, err := n.CreateEvent()
	require.NoError(t, err)
	// The stream is held until the record is queued: under stop-on-failure
	// the fault spreads to the context, which would otherwise refuse the
	// record itself if the failing task ran first.
	gate := make(chan struct{})
	n.FailTask(2, acl.CodeRTAICPUException)
	require.NoError(t, n.enqueueTask(s, func() error { <-gate; return nil }))
	require.NoError(t, n.enqueueTask(s, func() error { return nil }))
	require.NoError(t, n.RecordEvent(e, s))
	close(gate)
	err = n.SynchronizeEvent(e)
	requireCode(t, acl.CodeRTAICPUException, err)
	assert.ErrorContains(t, err, "injected fault")
	require.NoError(t, n.DestroyEvent(e))
	require.NoError(t, n.DestroyStream(s))
	assert.Empty(t, n.Leaks())
}
