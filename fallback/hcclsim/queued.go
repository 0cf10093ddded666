package hcclsim

import (
	"time"

	"github.com/ascend-go/cann/acl"
)

// Work a communicator has on streams, for CommDestroy: it lets queued work
// finish first, but must not wait for tasks their stream will never run.
// A stream that failed (sticky error, for any reason: an HCCL task or a
// copy or kernel before it) skips every task still queued on it, so such
// tasks count as done.

// queuedTask is one task of the communicator on a stream.
type queuedTask struct {
	// state observes the task's stream: once it failed, the task will
	// never run. nil while the task is being queued (it may still run).
	state streamState
}

// streamState reports whether a stream failed (npuhook.StreamState).
type streamState interface{ Failed() (bool, acl.Code) }

// skipped reports whether the task's stream failed, so that it will never
// run.
func (qt *queuedTask) skipped() bool {
	if qt.state == nil {
		return false
	}
	failed, _ := qt.state.Failed()
	return failed
}

// running is the state of work already running: never skipped.
type running struct{}

func (running) Failed() (bool, acl.Code) { return false, 0 }

// track records a task before it is queued. Its owner calls setSkipped
// once queued and untrack when it finishes (or was never queued).
func (c *comm) track() *queuedTask {
	qt := &queuedTask{}
	c.trackTask(qt)
	return qt
}

// trackTask is track of a task record the caller owns (pooled tasks).
func (c *comm) trackTask(qt *queuedTask) {
	c.mu.Lock()
	if c.queued == nil {
		c.queued = make(map[*queuedTask]struct{})
		c.queueChg = make(chan struct{})
	}
	c.queued[qt] = struct{}{}
	c.mu.Unlock()
}

func (c *comm) setSkipped(qt *queuedTask, state streamState) {
	c.mu.Lock()
	qt.state = state
	c.mu.Unlock()
}

func (c *comm) untrack(qt *queuedTask) {
	c.mu.Lock()
	c.untrackLocked(qt)
	c.mu.Unlock()
}

// untrackLocked is untrack with c.mu held.
func (c *comm) untrackLocked(qt *queuedTask) {
	delete(c.queued, qt)
	if c.queueWatch { // wake a waiting destroy
		close(c.queueChg)
		c.queueChg = make(chan struct{})
		c.queueWatch = false
	}
}

// queuePoll is how often a waiting destroy asks the streams whether they
// failed (a failure does not wake it; a finished task does).
const queuePoll = 2 * time.Millisecond

// waitQueued waits until every tracked task finished or its stream
// failed, at most timeout.
func (c *comm) waitQueued(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var poll *time.Ticker
	for {
		c.mu.Lock()
		var pending []*queuedTask
		for qt := range c.queued {
			pending = append(pending, qt)
		}
		states := make([]streamState, len(pending))
		for i, qt := range pending {
			states[i] = qt.state
		}
		changed := c.queueChg
		c.queueWatch = true
		c.mu.Unlock()
		live := false
		for _, st := range states {
			if qt := (queuedTask{st}); st == nil || !qt.skipped() {
				live = true
				break
			}
		}
		if !live {
			return
		}
		if poll == nil {
			poll = time.NewTicker(queuePoll)
			defer poll.Stop()
		}
		select {
		case <-changed:
		case <-poll.C:
		case <-deadline.C:
			return
		}
	}
}
