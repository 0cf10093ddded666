package acl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// TestEventWaitEveryFlag: Wait with a cancellable context completes for
// events of every flag set, including a timeline-only event that a stream
// may not wait for.
func TestEventWaitEveryFlag(t *testing.T) {
	_, dev, s := openStream(t)
	for _, f := range []acl.EventFlag{0, acl.EventSync, acl.EventTimeLine, acl.EventSync | acl.EventTimeLine} {
		e, err := dev.NewEvent(f)
		require.NoError(t, err)
		require.NoError(t, e.Record(s))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.NoError(t, e.Wait(ctx), "flags %#x", f)
		cancel()
		require.NoError(t, e.Close())
	}
}

// TestEventReset: Event.Reset queues aclrtResetEvent; an event without
// EventSync is refused as the runtime refuses it, and a closed event or
// stream is an invalid handle.
func TestEventReset(t *testing.T) {
	_, dev, s := openStream(t)
	e, err := dev.NewEvent(acl.EventSync)
	require.NoError(t, err)
	require.NoError(t, e.Record(s))
	require.NoError(t, e.Reset(s))
	require.NoError(t, s.Synchronize())
	plain, err := dev.NewEvent(acl.EventTimeLine)
	require.NoError(t, err)
	require.Equal(t, acl.CodeRTFeatureNotSupport, acl.CodeOf(plain.Reset(s)))
	require.NoError(t, e.Close())
	require.ErrorIs(t, e.Reset(s), acl.ErrInvalidHandle)
	require.NoError(t, s.Close())
	require.ErrorIs(t, plain.Reset(s), acl.ErrInvalidHandle)
}
