package fallback

import (
	"errors"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamState: EnqueueOpState runs the task like EnqueueOp and returns
// a state that turns failed, for good, once the stream has a sticky error
// (a task behind it is then skipped); the default stream resolves on the
// calling thread; bad arguments give EnqueueOp's errors.
func TestStreamState(t *testing.T) {
	n := newTestNPU(t)
	s, err := n.CreateStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.DestroyStream(s) })
	require.NoError(t, n.SetStreamFailureMode(s, acl.StopOnFailure))

	failed, code := streamState{}.Failed()
	assert.False(t, failed, "the zero value observes nothing")
	assert.Equal(t, acl.Success, code)

	ran := 0
	st, err := n.enqueueOpState(s, "test", func() error { ran++; return nil })
	require.NoError(t, err)
	require.NoError(t, n.SynchronizeStream(s))
	assert.Equal(t, 1, ran)
	failed, _ = st.Failed()
	assert.False(t, failed)

	gate := make(chan struct{})
	require.NoError(t, n.enqueueTask(s, func() error { <-gate; return errors.New("boom") }))
	st2, err := n.enqueueOpState(s, "test", func() error { ran++; return nil })
	require.NoError(t, err)
	failed, _ = st2.Failed()
	assert.False(t, failed, "nothing failed yet")
	close(gate)
	require.Error(t, n.SynchronizeStream(s))
	for _, x := range []streamState{st, st2} {
		failed, code = x.Failed()
		assert.True(t, failed)
		assert.Equal(t, acl.CodeRTTSError, code)
	}
	assert.Equal(t, 1, ran, "the task behind the failure was skipped")

	// The stop spread to the context: its default stream takes no task.
	_, err = n.enqueueOpState(0, "test", func() error { return nil })
	assert.Equal(t, acl.CodeRTTSError, acl.CodeOf(err), "default stream of the stopped context: %v", err)
	// Another context is unaffected.
	ctx2, err := n.CreateContext(0)
	require.NoError(t, err)
	def, err := n.enqueueOpState(0, "test", func() error { return nil })
	require.NoError(t, err, "the default stream of another context")
	require.NoError(t, n.SynchronizeStream(0))
	failed, _ = def.Failed()
	assert.False(t, failed, "another context's failure is not this one's")
	require.NoError(t, n.DestroyContext(ctx2))
	require.NoError(t, n.SetDevice(0))

	_, err = n.enqueueOpState(s, "test", nil)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "nil task: %v", err)
	_, err = n.enqueueOpState(acl.StreamHandle(0xdead), "test", func() error { return nil })
	assert.Equal(t, acl.CodeRTInvalidHandle, acl.CodeOf(err), "unknown stream: %v", err)
}
