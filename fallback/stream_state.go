package fallback

import "github.com/ascend-go/cann/acl"

// streamState implements npuhook.StreamState: it observes one stream from
// any goroutine: whether its context
// stopped on a failure (ACL_STOP_ON_FAILURE), after which the stream skips
// every task still queued (they never run). A layer that counts its queued
// tasks (the HCCL model's CommDestroy) uses it not to wait for tasks that
// will never run. The zero value observes nothing and reports no failure.
// Safe for concurrent use.
type streamState struct{ s *stream }

// Failed reports whether the stream stopped on a failure, and its code.
// It is never cleared, so once true it stays true: no task queued on the
// stream from then on, or still waiting in its queue, will run. A failure
// in the default mode (ACL_CONTINUE_ON_FAILURE) does not stop the stream.
func (st streamState) Failed() (bool, acl.Code) {
	if st.s == nil {
		return false, acl.Success
	}
	stopped, code, _ := st.s.ctx.stopped()
	return stopped, code
}

// enqueueOpState is enqueueOp that also returns the state of the stream
// the task went to (the null handle resolves, as in enqueueOp, to the
// current context's default stream, so the state is taken here, on the
// calling thread).
func (n *NPU) enqueueOpState(s acl.StreamHandle, op string, fn func() error) (streamState, error) {
	c, err := n.begin(op, true)
	if err != nil {
		return streamState{}, err
	}
	defer n.exit()
	if fn == nil {
		return streamState{}, c.fail(acl.CodeInvalidParam, "nil task")
	}
	st, err := c.stream(s)
	if err != nil {
		return streamState{}, err
	}
	if err := c.enqueueTask(st, task{op: c.op, fn: fn, work: true, inline: true}); err != nil {
		return streamState{}, err
	}
	return streamState{st}, nil
}
