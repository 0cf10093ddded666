package fallback

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ascend-go/cann/acl"
)

// task is one unit of stream work.
type task struct {
	op     string              // the call that queued it, for messages
	run    func(*stream) error // the work; runs on the stream's goroutine
	fn     func() error        // the work of a hook task (instead of run: no wrapper to allocate)
	fault  acl.Code            // injected failure: the task fails with it instead of running
	always bool                // runs even after the stream failed (event records), so waiters are released
	work   bool                // counted in Counters.Tasks
	// inline: the task may run on a goroutine that synchronizes the stream
	// (runInline) instead of the stream's own: it does not depend on the
	// goroutine or OS thread it runs on (hook tasks).
	inline bool
}

// stream is an aclrtStream: an in-order task queue served by its own
// goroutine. In the default failure mode (ACL_CONTINUE_ON_FAILURE) a failed
// task does not stop the stream: later tasks run and the next synchronize
// reports the first failure since the previous one, then forgets it
// (hicann/runtime src/runtime/core/src/stream/stream.cc:1790-1830). Once a
// stream of its context is set to ACL_STOP_ON_FAILURE, the first failure on
// any stream of the context stops the whole context: queued tasks are
// skipped (event records still complete), new tasks are refused and every
// synchronize reports that failure (stream.cc:4336-4352, 1772-1788;
// src/runtime/core/src/context/context.cc:2889).
type stream struct {
	h     acl.StreamHandle
	ctx   *rtContext
	n     *NPU
	where where

	mu         sync.Mutex
	q          []task
	head       int
	submitted  uint64
	completed  uint64
	errCode    acl.Code
	errMsg     string
	progress   chan struct{} // made by a waiter, closed (and dropped) when task progressAt completes
	progressAt uint64        // the lowest task number a waiter of progress waits for
	// The first waiter uses waiter (one token, made once) instead of a
	// fresh progress channel, so a serving loop's waits allocate nothing;
	// waiters that arrive while it waits share progress.
	waiter     chan struct{}
	waiterBusy bool
	waiterAt   uint64 // the task number it waits for; ^0 once signalled
	closing    bool
	running    bool // a task is executing (on the stream's goroutine or inline): tasks run one at a time, in order

	// Mirrors of submitted and completed, for the bounded spins that spare
	// a short wait the futex sleep and wake-up of a goroutine hand-off.
	pushed atomic.Uint64
	done   atomic.Uint64

	wake   chan struct{}
	exited chan struct{}
	stop   atomic.Bool // set to ACL_STOP_ON_FAILURE
}

func newStream(n *NPU, ctx *rtContext, h acl.StreamHandle, w where) *stream {
	s := &stream{
		h: h, ctx: ctx, n: n, where: w,
		wake:   make(chan struct{}, 1),
		exited: make(chan struct{}),
	}
	go s.loop()
	return s
}

// push queues t; it fails only when the stream is being destroyed.
func (s *stream) push(t task) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.q = append(s.q, t)
	s.submitted++
	s.pushed.Store(s.submitted)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

func (s *stream) loop() {
	defer close(s.exited)
	for {
		s.mu.Lock()
		for s.head == len(s.q) || s.running {
			if s.closing && !s.running {
				s.mu.Unlock()
				return
			}
			seen, seenDone := s.submitted, s.completed
			s.mu.Unlock()
			// A program that queues work in a loop queues the next task
			// within microseconds: wait for it briefly before sleeping. A
			// task running inline (runInline) wakes the loop when it ends
			// with work left.
			if !spin(taskSpin, func() bool { return s.pushed.Load() != seen || s.done.Load() != seenDone }) {
				<-s.wake
			}
			s.mu.Lock()
		}
		t := s.pop()
		s.mu.Unlock()
		s.runTask(t)
	}
}

// pop takes the next task and marks the stream running; s.mu held, a task
// queued and none running.
func (s *stream) pop() task {
	t := s.q[s.head]
	s.q[s.head] = task{}
	if s.head++; s.head == len(s.q) {
		s.q, s.head = s.q[:0], 0
	}
	s.running = true
	return t
}

// runTask runs a popped task (skipping it if the context stopped) and
// records its completion.
func (s *stream) runTask(t task) {
	stopped, _, _ := s.ctx.stopped()
	var code acl.Code
	var msg string
	switch {
	case stopped && !t.always:
	case t.fault != 0:
		code, msg = t.fault, fmt.Sprintf("stream 0x%x: injected fault in %s task", uintptr(s.h), t.op)
	default:
		code, msg = s.execute(t)
		if t.work {
			s.n.ctr.tasks.Add(1)
		}
	}

	if code != 0 {
		s.ctx.failed(code, msg)
	}
	s.mu.Lock()
	if code != 0 && s.errCode == 0 {
		s.errCode, s.errMsg = code, msg
	}
	s.completed++
	s.done.Store(s.completed)
	s.running = false
	if s.progress != nil && s.completed >= s.progressAt {
		close(s.progress)
		s.progress = nil
	}
	if s.waiterBusy && s.completed >= s.waiterAt {
		select {
		case s.waiter <- struct{}{}:
		default:
		}
		s.waiterAt = ^uint64(0)
	}
	s.mu.Unlock()
}

// runInline runs the stream's queued tasks up to number seq on the calling
// goroutine while the stream's goroutine is idle and the next task may run
// inline. A synchronizing ACL caller is locked to its OS thread, and waking
// a parked locked thread costs tens of microseconds (a futex wake of that
// thread and a hand-off of the scheduler's P, BenchmarkSmallCollectives'
// x_locked); running the task where the caller already is costs nothing
// of the kind. Order is kept: tasks run one at a time (stream.running), in
// queue order. The stream's goroutine is woken if work is left.
func (s *stream) runInline(seq uint64) {
	for s.done.Load() < seq {
		s.mu.Lock()
		if s.running || s.head == len(s.q) || !s.q[s.head].inline {
			s.mu.Unlock()
			break
		}
		t := s.pop()
		s.mu.Unlock()
		s.n.ctr.inline.Add(1)
		s.runTask(t)
	}
	s.mu.Lock()
	left := (s.head < len(s.q) || s.closing) && !s.running
	s.mu.Unlock()
	if left {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// execute runs a task, turning its error (or panic) into the stream's
// sticky error.
func (s *stream) execute(t task) (code acl.Code, msg string) {
	defer func() {
		if r := recover(); r != nil {
			code, msg = acl.CodeRTTSError, fmt.Sprintf("stream 0x%x: %s task panicked: %v", uintptr(s.h), t.op, r)
		}
	}()
	var err error
	if t.fn != nil {
		err = t.fn()
	} else {
		err = t.run(s)
	}
	if err == nil {
		return 0, ""
	}
	code = acl.CodeOf(err)
	if code == acl.CodeFailure || code == acl.Success {
		code = acl.CodeRTTSError
	}
	// The stream reports the code; an error of that same code is quoted
	// without it, so the message does not say the code twice.
	text := err.Error()
	var ae *acl.Error
	if errors.As(err, &ae) && ae.Code == code && ae.Op != "" {
		text = ae.Op + ": " + ae.Msg
	}
	return code, fmt.Sprintf("stream 0x%x: %s task failed: %s", uintptr(s.h), t.op, text)
}

const (
	waitDone = iota
	waitTimeout
	waitCanceled
	waitClosed
)

// Spin budgets: how long the stream's goroutine looks for a next task,
// and a synchronizing caller for completion, before each sleeps on a
// channel. Bounded, so an idle stream costs no CPU after taskSpin.
const (
	taskSpin = 50 * time.Microsecond
	waitSpin = 20 * time.Microsecond
)

// spin polls cond, yielding the processor between polls, for at most
// budget; it reports whether cond became true.
func spin(budget time.Duration, cond func() bool) bool {
	if runtime.GOMAXPROCS(0) == 1 {
		return cond() // the other side cannot run while this one polls
	}
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i&15 == 0 {
			if i == 0 {
				start = time.Now()
			} else if time.Since(start) > budget {
				return false
			}
		}
		runtime.Gosched()
	}
}

// progressCh returns the channel closed when task number seq (or an
// earlier one another waiter awaits) completes; s.mu is held.
func (s *stream) progressCh(seq uint64) chan struct{} {
	if s.progress == nil {
		s.progress, s.progressAt = make(chan struct{}), seq
	}
	// Closed once the earliest awaited task completes, not at every task:
	// a waiter behind many tasks is woken (and makes a channel) once.
	s.progressAt = min(s.progressAt, seq)
	return s.progress
}

// waitFor blocks until task number seq has completed (or cancel, timer or
// the NPU's close fires: the wait* code says which).
func (s *stream) waitFor(seq uint64, cancel <-chan struct{}, timer <-chan time.Time, poll bool) int {
	if s.done.Load() < seq && !poll && cancel == nil && timer == nil {
		// An unbounded wait may run the tasks itself: a task running
		// inline cannot be abandoned at a deadline or cancellation.
		s.runInline(seq)
	}
	if s.done.Load() >= seq || (!poll && spin(waitSpin, func() bool { return s.done.Load() >= seq })) {
		return waitDone
	}
	s.mu.Lock()
	if s.completed >= seq || poll {
		done := s.completed >= seq
		s.mu.Unlock()
		if done {
			return waitDone
		}
		return waitTimeout
	}
	var ch chan struct{}
	own := !s.waiterBusy
	if own {
		if s.waiter == nil {
			s.waiter = make(chan struct{}, 1)
		}
		select {
		case <-s.waiter: // a token a waiter that gave up left behind
		default:
		}
		s.waiterBusy, s.waiterAt, ch = true, seq, s.waiter
	}
	res := waitDone
	for s.completed < seq && res == waitDone {
		if !own {
			ch = s.progressCh(seq)
		}
		s.mu.Unlock()
		s.n.ctr.syncParks.Add(1)
		select {
		case <-ch:
		case <-timer:
			res = waitTimeout
		case <-cancel:
			res = waitCanceled
		case <-s.n.done:
			res = waitClosed
		}
		s.mu.Lock()
	}
	if own {
		s.waiterBusy = false
	}
	s.mu.Unlock()
	return res
}

// wait blocks until every task queued before the call has completed. A
// nil timer channel waits forever; poll returns at once.
func (s *stream) wait(ctx context.Context, timer <-chan time.Time, poll bool) int {
	var cancel <-chan struct{}
	if ctx != nil {
		cancel = ctx.Done()
	}
	return s.waitFor(s.pushed.Load(), cancel, timer, poll)
}

// takeError is what a synchronize reports: the context's failure once it
// stopped (sticky), else the stream's first failure since the last
// synchronize, which it clears.
func (s *stream) takeError() (acl.Code, string) {
	if stopped, code, msg := s.ctx.stopped(); stopped {
		return code, msg
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	code, msg := s.errCode, s.errMsg
	s.errCode, s.errMsg = 0, ""
	return code, msg
}

func (s *stream) pending() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.submitted - s.completed
}

// shutdown lets the queued work finish and stops the goroutine.
func (s *stream) shutdown() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.exited
}

// stream resolves a stream handle for the calling thread: the null handle
// is the current context's default stream; others must be live and belong
// to the current context.
func (c *call) stream(h acl.StreamHandle) (*stream, error) {
	if h == 0 {
		return c.ctx.def, nil
	}
	s, err := c.streamHandle(h)
	if err != nil {
		return nil, err
	}
	return s, c.inContext(s)
}

// streamHandle looks up a stream handle other than 0, as the runtime's
// handle guard does before anything else (107017).
func (c *call) streamHandle(h acl.StreamHandle) (*stream, error) {
	c.n.mu.RLock()
	s := c.n.streams[h]
	c.n.mu.RUnlock()
	if s == nil {
		return nil, c.fail(acl.CodeRTInvalidHandle, "stream 0x%x is unknown or destroyed", uintptr(h))
	}
	return s, nil
}

// inContext requires stream s to belong to the current context.
func (c *call) inContext(s *stream) error {
	h := s.h
	if s.ctx != c.ctx {
		return c.fail(acl.CodeRTStreamContext, "stream 0x%x belongs to context 0x%x (device %d), but the current context of OS thread %d is 0x%x (device %d)",
			uintptr(h), uintptr(s.ctx.h), s.ctx.dev.id, c.tid, uintptr(c.ctx.h), c.ctx.dev.id)
	}
	return nil
}

// enqueue queues a task on s. Work tasks (copies, memsets, Enqueue) count
// for task fault injection; event records and waits do not.
func (c *call) enqueue(s *stream, work, always bool, run func(*stream) error) error {
	return c.enqueueTask(s, task{op: c.op, run: run, always: always, work: work})
}

// enqueueTask is enqueue of a task the caller built.
func (c *call) enqueueTask(s *stream, t task) error {
	if stopped, code, msg := s.ctx.stopped(); stopped {
		return c.fail(code, "the context of stream 0x%x stopped on failure (ACL_STOP_ON_FAILURE) and takes no new task: %s", uintptr(s.h), msg)
	}
	if t.work {
		t.fault = c.n.faults.next(&c.n.faults.task, acl.CodeRTTSError)
	}
	if !s.push(t) {
		return c.fail(acl.CodeRTInvalidHandle, "stream 0x%x is being destroyed", uintptr(s.h))
	}
	return nil
}

// CreateStream is aclrtCreateStream: a new stream in the calling thread's
// current context, served by its own goroutine until DestroyStream.
func (n *NPU) CreateStream() (acl.StreamHandle, error) {
	c, err := n.begin("aclrtCreateStream", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	w := callers()
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.ctx.dead.Load() {
		return 0, c.fail(acl.CodeRTContextNull, "the current context of OS thread %d was destroyed", c.tid)
	}
	if k, limit := n.countOnDevice(c.ctx.dev, false), orDefault(n.cfg.maxStreams, DefaultMaxStreams); k >= limit {
		return 0, c.fail(acl.CodeRTNoStreamResource, "device %d already has %d streams, its limit", c.ctx.dev.id, k)
	}
	h := acl.StreamHandle(n.handle())
	s := newStream(n, c.ctx, h, w)
	n.streams[h] = s
	c.ctx.streams[h] = s
	return h, nil
}

// DestroyStream is aclrtDestroyStream: it waits for the queued work, then
// stops the stream's goroutine.
func (n *NPU) DestroyStream(h acl.StreamHandle) error {
	c, err := n.begin("aclrtDestroyStream", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if h == 0 {
		return c.fail(acl.CodeInvalidParam, "null stream")
	}
	s, err := c.stream(h)
	if err != nil {
		return err
	}
	if !forget(n, n.streams, s.ctx.streams, h, s) {
		return c.fail(acl.CodeRTInvalidHandle, "stream 0x%x is unknown or destroyed", uintptr(h))
	}
	s.shutdown()
	return nil
}

// SynchronizeStream is aclrtSynchronizeStream: it waits for the work queued
// so far and reports the stream's sticky error, if any.
func (n *NPU) SynchronizeStream(h acl.StreamHandle) error {
	c, err := n.begin("aclrtSynchronizeStream", true)
	if err != nil {
		return err
	}
	defer n.exit()
	return c.syncStream(context.Background(), h, -1)
}

// SynchronizeStreamWithTimeout is aclrtSynchronizeStreamWithTimeout:
// timeoutMs -1 waits forever, 0 polls, > 0 waits that many milliseconds;
// expiry gives ACL_ERROR_RT_STREAM_SYNC_TIMEOUT.
func (n *NPU) SynchronizeStreamWithTimeout(h acl.StreamHandle, timeoutMs int32) error {
	c, err := n.begin("aclrtSynchronizeStreamWithTimeout", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if timeoutMs < -1 {
		// hicann/runtime src/acl/aclrt_impl/stream.cpp:141-148
		return c.fail(acl.CodeRTParamInvalid, "timeout %d ms is outside [-1, INT_MAX]", timeoutMs)
	}
	return c.syncStream(context.Background(), h, timeoutMs)
}

func (c *call) syncStream(ctx context.Context, h acl.StreamHandle, timeoutMs int32) error {
	s, err := c.stream(h)
	if err != nil {
		return err
	}
	var timer <-chan time.Time
	if timeoutMs > 0 {
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		timer = t.C
	}
	switch s.wait(ctx, timer, timeoutMs == 0) {
	case waitTimeout:
		return c.fail(acl.CodeRTStreamSyncTimeout, "stream 0x%x still has %d queued tasks after %d ms", uintptr(s.h), s.pending(), timeoutMs)
	case waitCanceled:
		return ctx.Err()
	case waitClosed:
		return c.closedErr()
	}
	if code, msg := s.takeError(); code != 0 {
		return c.fail(code, "%s", msg)
	}
	return nil
}

// SetStreamFailureMode is aclrtSetStreamFailureMode (hicann/runtime
// src/acl/aclrt_impl/stream.cpp:258-265, src/runtime/api/impl/
// api_impl.cc:1991-2034). Only bit 0 of mode counts; setting the mode a
// stream has succeeds; ACL_STOP_ON_FAILURE makes the stream's whole
// context stop on its first failure and cannot be undone
// (ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api_impl.cc:2018-2021). The null
// stream is the current context's default stream, which the Atlas A2/A3
// documentation allows (docs/zh/api_ref/06_stream_management.md:483-490).
// A stream of another context is ACL_ERROR_RT_STREAM_CONTEXT
// (api_impl.cc:2032-2033).
func (n *NPU) SetStreamFailureMode(h acl.StreamHandle, mode acl.StreamFailureMode) error {
	c, err := n.begin("aclrtSetStreamFailureMode", true)
	if err != nil {
		return err
	}
	defer n.exit()
	var s *stream
	if h == 0 {
		s = c.ctx.def
	} else {
		n.mu.RLock()
		s = n.streams[h]
		n.mu.RUnlock()
		if s == nil {
			return c.fail(acl.CodeRTInvalidHandle, "stream 0x%x is unknown or destroyed", uintptr(h))
		}
	}
	stop := mode&1 == acl.StopOnFailure
	if s.stop.Load() == stop {
		return nil
	}
	if !stop {
		return c.fail(acl.CodeRTFeatureNotSupport, "changing stream 0x%x from stop mode to continue mode is not supported", uintptr(h))
	}
	if s.ctx != c.ctx {
		return c.fail(acl.CodeRTStreamContext, "stream 0x%x belongs to context 0x%x, not the current context 0x%x", uintptr(h), uintptr(s.ctx.h), uintptr(c.ctx.h))
	}
	s.stop.Store(true)
	s.ctx.stopMode.Store(true)
	return nil
}

// SynchronizeStreamContext is SynchronizeStream bounded by ctx: it returns
// ctx.Err() if ctx ends first.
func (n *NPU) SynchronizeStreamContext(ctx context.Context, s acl.StreamHandle) error {
	c, err := n.begin("aclrtSynchronizeStream", true)
	if err != nil {
		return err
	}
	defer n.exit()
	return c.syncStream(ctx, s, -1)
}

// DrainStream waits, from any goroutine, until the work queued on stream h
// before the call has run, or ctx is done (returning ctx.Err()); it runs
// queued tasks inline as a synchronize does. It reports nothing else: an
// unknown or default stream, or a closed NPU, return nil for the
// synchronize that follows (acl.StreamDrainer) to report. Stream.Wait
// drains unbound, so ranks of one process meeting in a collective switch
// goroutines, not locked OS threads.
func (n *NPU) DrainStream(ctx context.Context, h acl.StreamHandle) error {
	if h == 0 {
		return nil
	}
	if !n.enter() {
		return nil
	}
	defer n.exit()
	n.mu.RLock()
	s := n.streams[h]
	n.mu.RUnlock()
	if s == nil {
		return nil
	}
	if s.wait(ctx, nil, false) == waitCanceled {
		return ctx.Err()
	}
	return nil
}
