package fallback

import (
	"sync"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/osthread"
)

// event is an aclrtEvent. Each RecordEvent queues a record that, when its
// stream reaches it, stamps the time; recorded counts the records queued,
// reached those executed.
type event struct {
	h     acl.EventHandle
	ctx   *rtContext
	flag  acl.EventFlag
	where where

	mu       sync.Mutex
	recorded uint64
	reached  uint64
	at       time.Time
	errCode  acl.Code // sticky error of the recording stream when reached
	errMsg   string
	progress chan struct{} // closed and replaced when reached changes
	dead     bool
}

// reach marks record gen as executed at time t.
func (e *event) reach(gen uint64, t time.Time, code acl.Code, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || gen <= e.reached {
		return
	}
	e.reached, e.at, e.errCode, e.errMsg = gen, t, code, msg
	close(e.progress)
	e.progress = make(chan struct{})
}

// kill releases every waiter; the event is gone.
func (e *event) kill() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.dead {
		e.dead = true
		close(e.progress)
	}
}

// latest is the generation of the most recent record queued.
func (e *event) latest() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recorded
}

// waitGen blocks until record gen has been reached, the event is destroyed
// or the NPU closes; it reports whether gen was reached.
func (e *event) waitGen(gen uint64, done <-chan struct{}) bool {
	e.mu.Lock()
	for e.reached < gen && !e.dead {
		ch := e.progress
		e.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
		e.mu.Lock()
	}
	ok := e.reached >= gen
	e.mu.Unlock()
	return ok
}

// event resolves a live event handle.
func (c *call) event(h acl.EventHandle) (*event, error) {
	if h == 0 {
		return nil, c.fail(acl.CodeInvalidParam, "null event")
	}
	c.n.mu.RLock()
	e := c.n.events[h]
	c.n.mu.RUnlock()
	if e == nil {
		return nil, c.fail(acl.CodeRTInvalidHandle, "event 0x%x is unknown or destroyed", uintptr(h))
	}
	return e, nil
}

// CreateEvent is aclrtCreateEvent.
func (n *NPU) CreateEvent() (acl.EventHandle, error) {
	c, err := n.begin("aclrtCreateEvent", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	return c.createEvent(acl.EventSync | acl.EventTimeLine)
}

// CreateEventWithFlag is aclrtCreateEventWithFlag; flag may combine
// ACL_EVENT_SYNC and ACL_EVENT_TIME_LINE.
func (n *NPU) CreateEventWithFlag(flag acl.EventFlag) (acl.EventHandle, error) {
	c, err := n.begin("aclrtCreateEventWithFlag", true)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	if flag&^(acl.EventSync|acl.EventTimeLine) != 0 {
		return 0, c.fail(acl.CodeInvalidParam, "undefined event flag bits 0x%x", uint32(flag&^(acl.EventSync|acl.EventTimeLine)))
	}
	return c.createEvent(flag)
}

func (c *call) createEvent(flag acl.EventFlag) (acl.EventHandle, error) {
	w := callers()
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.ctx.dead.Load() {
		return 0, c.fail(acl.CodeRTContextNull, "the current context of OS thread %d was destroyed", c.tid)
	}
	if k, limit := n.countOnDevice(c.ctx.dev, true), orDefault(n.cfg.maxEvents, DefaultMaxEvents); k >= limit {
		return 0, c.fail(acl.CodeRTNoEventResource, "device %d already has %d events, its limit", c.ctx.dev.id, k)
	}
	e := &event{h: acl.EventHandle(n.handle()), ctx: c.ctx, flag: flag, where: w, progress: make(chan struct{})}
	n.events[e.h] = e
	c.ctx.events[e.h] = e
	return e.h, nil
}

// RecordEvent is aclrtRecordEvent: the event is stamped when the stream
// reaches this point.
func (n *NPU) RecordEvent(h acl.EventHandle, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtRecordEvent", false)
	if err != nil {
		return err
	}
	defer n.exit()
	e, s, err := c.eventStream(h, sh, false, "")
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.recorded++
	gen := e.recorded
	e.mu.Unlock()
	clock := n.cfg.clock
	return c.enqueue(s, false, true, func(s *stream) error {
		_, code, msg := s.ctx.stopped()
		e.reach(gen, clock(), code, msg)
		return nil
	})
}

// StreamWaitEvent is aclrtStreamWaitEvent: work queued on the stream after
// this call waits until the event's most recent record (as of this call)
// has been reached. An event never recorded is not waited for.
func (n *NPU) StreamWaitEvent(sh acl.StreamHandle, h acl.EventHandle) error {
	c, err := n.begin("aclrtStreamWaitEvent", false)
	if err != nil {
		return err
	}
	defer n.exit()
	e, s, err := c.eventStream(h, sh, true, "a stream cannot wait for it")
	if err != nil {
		return err
	}
	gen := e.latest()
	if gen == 0 {
		return nil
	}
	done := n.done
	return c.enqueue(s, false, false, func(*stream) error {
		e.waitGen(gen, done)
		return nil
	})
}

// ResetEvent is aclrtResetEvent: a reset task of the event on stream sh
// (0: the default stream), after the checks of eventStream (an event
// without ACL_EVENT_SYNC has no wait task to reset). The reset runs in the
// stream's order (hicann/runtime src/runtime/core/src/event/event.cc:
// 764-792); waits bind to the record that is latest when they are queued,
// so it changes no wait queued before or after it.
func (n *NPU) ResetEvent(h acl.EventHandle, sh acl.StreamHandle) error {
	c, err := n.begin("aclrtResetEvent", false)
	if err != nil {
		return err
	}
	defer n.exit()
	_, s, err := c.eventStream(h, sh, false, "it has no wait task to reset")
	if err != nil {
		return err
	}
	return c.enqueue(s, false, false, func(*stream) error { return nil })
}

// eventStream resolves the event and the stream of aclrtRecordEvent,
// aclrtStreamWaitEvent and aclrtResetEvent in the order of hicann/runtime
// @681ef76, which decides the code when several arguments are wrong:
//  1. a NULL event: the ACL layer, ACL_ERROR_INVALID_PARAM
//     (src/acl/aclrt_impl/event.cpp:89, 117; stream.cpp:232);
//  2. the handles, by the runtime's handle guard before the API runs,
//     ACL_ERROR_RT_INVALID_HANDLE: event then stream (src/runtime/api/
//     api_c.cc:739-740, 773-774), stream then event for a wait
//     (api_c_stream.cc:127-128: streamFirst);
//  3. the error decorator: a wait or a reset needs an event with
//     ACL_EVENT_SYNC (syncWhy != "": src/runtime/api/impl/api_error.cc:
//     1414-1416, 1760-1762; event.hpp:133-136), else
//     ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
//  4. the implementation: a current context (ACL_ERROR_RT_CONTEXT_NULL;
//     api_impl.cc:1594-1595, 2137-2138, 2202-2203), stream 0 as its default
//     stream, a stream of that context (ACL_ERROR_RT_STREAM_CONTEXT;
//     api_impl.cc:1609-1610, 2152-2153, 2216);
//  5. event and stream on one device (eventDevice; not settled).
//
// c must come from begin without needCtx; eventStream sets c.ctx.
func (c *call) eventStream(h acl.EventHandle, sh acl.StreamHandle, streamFirst bool, syncWhy string) (*event, *stream, error) {
	if h == 0 {
		return nil, nil, c.fail(acl.CodeInvalidParam, "null event")
	}
	var (
		e   *event
		s   *stream
		err error
	)
	if streamFirst && sh != 0 {
		if s, err = c.streamHandle(sh); err != nil {
			return nil, nil, err
		}
	}
	if e, err = c.event(h); err != nil {
		return nil, nil, err
	}
	if !streamFirst && sh != 0 {
		if s, err = c.streamHandle(sh); err != nil {
			return nil, nil, err
		}
	}
	if syncWhy != "" && e.flag&acl.EventSync == 0 {
		return nil, nil, c.fail(acl.CodeRTFeatureNotSupport, "event 0x%x was created without ACL_EVENT_SYNC (flag 0x%x): %s", uintptr(h), uint32(e.flag), syncWhy)
	}
	c.tid = osthread.ID()
	if c.ctx = c.n.threads.current(c.tid); c.ctx == nil {
		return nil, nil, c.fail(acl.CodeRTContextNull, "OS thread %d has no current context: call aclrtSetDevice or aclrtSetCurrentContext on this thread first (a goroutine must hold runtime.LockOSThread to keep its thread)", c.tid)
	}
	if s == nil {
		s = c.ctx.def
	} else if err := c.inContext(s); err != nil {
		return nil, nil, err
	}
	if err := c.eventDevice(e, s); err != nil {
		return nil, nil, err
	}
	return e, s, nil
}

// SynchronizeEvent is aclrtSynchronizeEvent: it waits until the event's
// most recent record has been reached and reports the recording stream's
// sticky error at that point, if any.
func (n *NPU) SynchronizeEvent(h acl.EventHandle) error {
	c, err := n.begin("aclrtSynchronizeEvent", false)
	if err != nil {
		return err
	}
	defer n.exit()
	e, err := c.event(h)
	if err != nil {
		return err
	}
	gen := e.latest()
	if !e.waitGen(gen, n.done) {
		if n.closed.Load() {
			return c.closedErr()
		}
		return nil // destroyed while waited for
	}
	e.mu.Lock()
	code, msg := e.errCode, e.errMsg
	e.mu.Unlock()
	if code != 0 {
		return c.fail(code, "%s", msg)
	}
	return nil
}

// EventElapsedTime is aclrtEventElapsedTime: milliseconds between the
// times the two events' latest records were reached.
func (n *NPU) EventElapsedTime(start, end acl.EventHandle) (float32, error) {
	c, err := n.begin("aclrtEventElapsedTime", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	es, err := c.event(start)
	if err != nil {
		return 0, err
	}
	ee, err := c.event(end)
	if err != nil {
		return 0, err
	}
	t0, err := c.stamp(es, "start")
	if err != nil {
		return 0, err
	}
	t1, err := c.stamp(ee, "end")
	if err != nil {
		return 0, err
	}
	return float32(float64(t1.Sub(t0)) / float64(time.Millisecond)), nil
}

func (c *call) stamp(e *event, role string) (time.Time, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.recorded == 0:
		// hicann/runtime src/runtime/core/src/event/event.cc:1248-1250
		// RT_ERROR_EVENT_RECORDER_NULL, mapped to 507000
		// (src/runtime/core/src/common/errcode_manage.cc:197).
		return time.Time{}, c.fail(acl.CodeRTInternalError, "%s event 0x%x was never recorded (event recorder null)", role, uintptr(e.h))
	case e.reached < e.recorded:
		// event.cc:1265-1270: the timestamp is not written yet,
		// RT_ERROR_EVENT_TIMESTAMP_INVALID, 107006 (errcode_manage.cc:198).
		return time.Time{}, c.fail(acl.CodeRTEventTimestampInvalid, "%s event 0x%x is recorded but its stream has not reached the record yet (timestamp invalid)", role, uintptr(e.h))
	}
	return e.at, nil
}

// DestroyEvent is aclrtDestroyEvent. Streams waiting for the event stop
// waiting.
func (n *NPU) DestroyEvent(h acl.EventHandle) error {
	c, err := n.begin("aclrtDestroyEvent", false)
	if err != nil {
		return err
	}
	defer n.exit()
	e, err := c.event(h)
	if err != nil {
		return err
	}
	if !forget(n, n.events, e.ctx.events, h, e) {
		return c.fail(acl.CodeRTInvalidHandle, "event 0x%x is unknown or destroyed", uintptr(h))
	}
	e.kill()
	return nil
}

// eventDevice refuses an event used with a stream of another device (the
// ACL documentation: event and stream must be on one device). The public
// source does not settle the code; the fallback reports
// ACL_ERROR_RT_STREAM_CONTEXT, as for a stream of another context.
func (c *call) eventDevice(e *event, s *stream) error {
	if e.ctx.dev != s.ctx.dev {
		return c.fail(acl.CodeRTStreamContext, "event 0x%x was created on device %d, but stream 0x%x is on device %d",
			uintptr(e.h), e.ctx.dev.id, uintptr(s.h), s.ctx.dev.id)
	}
	return nil
}
