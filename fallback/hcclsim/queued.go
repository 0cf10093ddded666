package hcclsim

import "time"

// Work a communicator has on streams, for CommDestroy: it lets queued work
// finish first, but must not wait for tasks their stream will never run.
// A stream that failed (sticky error, for any reason: an HCCL task or a
// copy or kernel before it) skips every task still queued on it, so such
// tasks count as done.

// queuedTask is one task of the communicator on a stream.
type queuedTask struct {
	// skipped reports whether the task's stream failed, so that it will
	// never run; nil while the task is being queued (it may still run).
	skipped func() bool
}

// neverSkipped is the skipped of work already running.
func neverSkipped() bool { return false }

// track records a task before it is queued. Its owner calls setSkipped
// once queued and untrack when it finishes (or was never queued).
func (c *comm) track() *queuedTask {
	qt := &queuedTask{}
	c.mu.Lock()
	if c.queued == nil {
		c.queued = make(map[*queuedTask]struct{})
		c.queueChg = make(chan struct{})
	}
	c.queued[qt] = struct{}{}
	c.mu.Unlock()
	return qt
}

func (c *comm) setSkipped(qt *queuedTask, skipped func() bool) {
	c.mu.Lock()
	qt.skipped = skipped
	c.mu.Unlock()
}

func (c *comm) untrack(qt *queuedTask) {
	c.mu.Lock()
	delete(c.queued, qt)
	close(c.queueChg) // wakes a waiting destroy
	c.queueChg = make(chan struct{})
	c.mu.Unlock()
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
		skipped := make([]func() bool, len(pending))
		for i, qt := range pending {
			skipped[i] = qt.skipped
		}
		changed := c.queueChg
		c.mu.Unlock()
		live := false
		for _, f := range skipped {
			if f == nil || !f() {
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
