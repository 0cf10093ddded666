package acl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Event is an ACL event of a Device: a marker recorded on a stream that
// completes when the stream reaches it.
//
// An Event is safe for concurrent use.
type Event struct {
	res
	dev   *Device
	h     EventHandle
	flags EventFlag

	// helper is a stream, created by the first Wait with a cancellable
	// context, on which Wait queues a wait for the event and then polls
	// with a timeout: the backend has no event wait with a timeout.
	hmu    sync.Mutex
	helper StreamHandle
}

func (e *Event) rank() int { return 1 }

func (e *Event) r() *res {
	if e == nil {
		return nil
	}
	return &e.res
}

// Handle returns the backend's event handle, for raw calls; 0 after Close.
func (e *Event) Handle() EventHandle {
	if e == nil || e.isClosed() {
		return 0
	}
	return e.h
}

// Device returns the Device the event belongs to.
func (e *Event) Device() *Device {
	if e == nil {
		return nil
	}
	return e.dev
}

// Record records the event on s (aclrtRecordEvent): the event completes
// when s reaches this point.
func (e *Event) Record(s *Stream) error {
	const op = "Event.Record"
	h, err := acquire(op, e.r(), s.r())
	if err != nil {
		return err
	}
	defer h.release()
	return s.dev.call(op, func() error { return e.dev.rt.b.RecordEvent(e.h, s.h) })
}

// Reset queues on s a reset of the event (aclrtResetEvent), for reusing an
// event that streams wait for. The event needs ACL_EVENT_SYNC; without it
// the runtime refuses with ACL_ERROR_RT_FEATURE_NOT_SUPPORT.
func (e *Event) Reset(s *Stream) error {
	const op = "Event.Reset"
	h, err := acquire(op, e.r(), s.r())
	if err != nil {
		return err
	}
	defer h.release()
	return s.dev.call(op, func() error { return e.dev.rt.b.ResetEvent(e.h, s.h) })
}

func (e *Event) call(op string, fn func() error) error {
	h, err := acquire(op, e.r())
	if err != nil {
		return err
	}
	defer h.release()
	return e.dev.call(op, fn)
}

// Synchronize blocks until the event has completed (aclrtSynchronizeEvent).
func (e *Event) Synchronize() error {
	return e.call("Event.Synchronize", func() error { return e.dev.rt.b.SynchronizeEvent(e.h) })
}

// Wait is Synchronize that gives up when ctx is done, returning ctx.Err().
// With a cancellable ctx it queues a wait for the event on a helper stream
// of the event and polls that stream in short bounded slices, so no
// goroutine or OS thread stays blocked after Wait returns. An event created
// without EventSync cannot be waited for by a stream; its Wait synchronizes
// on a goroutine that outlives a cancelled Wait until the event completes.
func (e *Event) Wait(ctx context.Context) error {
	const op = "Event.Wait"
	if e == nil {
		return nilError(op)
	}
	b := e.dev.rt.b
	if ctx.Done() == nil {
		return e.call(op, func() error { return b.SynchronizeEvent(e.h) })
	}
	if e.flags != 0 && e.flags&EventSync == 0 {
		// A stream may wait only for an ACL_EVENT_SYNC event (hicann/runtime
		// src/runtime/api/impl/api_error.cc:1414-1416), so no helper stream
		// here: a goroutine synchronizes and Wait stops waiting for it when
		// ctx ends; that goroutine ends when the event completes.
		done := make(chan error, 1)
		go func() { done <- e.call(op, func() error { return b.SynchronizeEvent(e.h) }) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var helper StreamHandle
	err := e.call(op, func() error {
		e.hmu.Lock()
		defer e.hmu.Unlock()
		if e.helper == 0 {
			s, err := b.CreateStream()
			if err != nil {
				return err
			}
			e.helper = s
		}
		helper = e.helper
		return b.StreamWaitEvent(helper, e.h)
	})
	if err != nil {
		return err
	}
	return pollWait(ctx, func(ms int32) error {
		return e.call(op, func() error { return b.SynchronizeStreamWithTimeout(helper, ms) })
	})
}

// Elapsed returns the time from start to e, both recorded and completed
// (aclrtEventElapsedTime). An event never recorded fails with
// ACL_ERROR_RT_PARAM_INVALID, one recorded but not yet reached with
// ACL_ERROR_RT_EVENT_NOT_COMPLETE.
func (e *Event) Elapsed(start *Event) (time.Duration, error) {
	const op = "Event.Elapsed"
	h, err := acquire(op, e.r(), start.r())
	if err != nil {
		return 0, err
	}
	defer h.release()
	var ms float32
	err = e.dev.call(op, func() error {
		var err error
		ms, err = e.dev.rt.b.EventElapsedTime(start.h, e.h)
		return err
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Close destroys the event (aclrtDestroyEvent). Close is idempotent: later
// calls return nil.
func (e *Event) Close() error {
	if e == nil || !e.markClosed() {
		return nil
	}
	return e.dev.releaseChild(e, e.destroy)
}

func (e *Event) retire() { e.markClosed() }

// destroy runs with the device context current.
func (e *Event) destroy() error {
	b := e.dev.rt.b
	var errs []error
	if e.helper != 0 {
		_ = b.SynchronizeStream(e.helper) // only waits queued by Wait; nothing to report
		errs = append(errs, b.DestroyStream(e.helper))
	}
	return errors.Join(append(errs, b.DestroyEvent(e.h))...)
}
