package acl

import (
	"context"
	"time"
)

// waitSlice bounds one blocking backend wait inside Wait(ctx), so that a
// cancelled context is noticed within about this long. The backend returns
// as soon as the work completes, so the slice costs no latency.
const waitSlice = 5 * time.Millisecond

// Stream is an ACL stream of a Device: work queued on it runs in order,
// asynchronously to the host.
//
// A Stream is safe for concurrent use; work queued from several goroutines
// runs in the order the calls reached the backend.
type Stream struct {
	res
	dev *Device
	h   StreamHandle
}

func (s *Stream) rank() int { return 0 }

func (s *Stream) r() *res {
	if s == nil {
		return nil
	}
	return &s.res
}

// Handle returns the backend's stream handle, for raw calls; 0 after Close.
func (s *Stream) Handle() StreamHandle {
	if s == nil || s.isClosed() {
		return 0
	}
	return s.h
}

// Device returns the Device the stream belongs to.
func (s *Stream) Device() *Device {
	if s == nil {
		return nil
	}
	return s.dev
}

// call runs fn under the stream's device context while the stream is open.
func (s *Stream) call(op string, fn func() error) error {
	h, err := acquire(op, s.r())
	if err != nil {
		return err
	}
	defer h.release()
	return s.dev.call(op, fn)
}

// Synchronize blocks until the work queued on the stream has completed
// (aclrtSynchronizeStream). A failed task is reported here: in the default
// mode (ContinueOnFailure) once, by the next Synchronize, the later tasks
// having run; after SetFailureMode(StopOnFailure) by every Synchronize of
// every stream of the device context, whose later tasks are skipped.
func (s *Stream) Synchronize() error { return s.wait(context.Background(), "Stream.Synchronize") }

// StreamDrainer is implemented by backends whose streams can be waited on
// from any OS thread (the fallback). Synchronize and Wait then wait for
// the queued work first with the goroutine unbound, free to move between
// threads, and make the bound synchronize call afterwards, which finds the
// work done and reports as the device does. Ranks of one process meeting
// in a collective then cost goroutine switches rather than hand-offs of
// locked OS threads (tens of microseconds each on a virtual machine:
// fallback/hcclsim BenchmarkSmallCollectives).
type StreamDrainer interface {
	// DrainStream blocks until the work queued on s before the call has
	// run, or ctx is done (returning ctx.Err()). It reports nothing
	// else: what is wrong with s is the bound synchronize's to report.
	DrainStream(ctx context.Context, s StreamHandle) error
}

// drain waits unbound for the queued work where the backend can
// (StreamDrainer); s is held open by the caller.
func (s *Stream) drain(ctx context.Context) error {
	if d, ok := s.dev.rt.b.(StreamDrainer); ok {
		return d.DrainStream(ctx, s.h)
	}
	return nil
}

// SetFailureMode sets what a failed task does to the stream
// (aclrtSetStreamFailureMode): StopOnFailure makes the first failure on any
// stream of the device's context stop the context (later tasks skipped,
// new tasks refused, the error reported by every synchronize); it cannot
// be set back. A program that relied on failures stopping a stream asks
// for StopOnFailure.
func (s *Stream) SetFailureMode(mode StreamFailureMode) error {
	return s.call("Stream.SetFailureMode", func() error { return s.dev.rt.b.SetStreamFailureMode(s.h, mode) })
}

// Wait is Synchronize that gives up when ctx is done, returning ctx.Err().
// It waits in short bounded slices (aclrtSynchronizeStreamWithTimeout), so
// no goroutine or OS thread stays blocked after Wait returns; the queued
// work itself is not cancelled. A backend that is a ContextSyncer waits
// on ctx itself, without slices.
func (s *Stream) Wait(ctx context.Context) error { return s.wait(ctx, "Stream.Wait") }

// wait is Synchronize and Wait: op names the caller in errors.
func (s *Stream) wait(ctx context.Context, op string) error {
	h, err := acquire(op, s.r())
	if err != nil {
		return err
	}
	defer h.release()
	if ctx.Done() == nil {
		_ = s.drain(ctx)
		return s.dev.call(op, func() error { return s.dev.rt.b.SynchronizeStream(s.h) })
	}
	if cs, ok := s.dev.rt.b.(ContextSyncer); ok {
		if err := ctx.Err(); err != nil {
			return err // as pollWait: an ended context wins even on an idle stream
		}
		if err := s.drain(ctx); err != nil {
			return err
		}
		return s.dev.call(op, func() error { return cs.SynchronizeStreamContext(ctx, s.h) })
	}
	return pollWait(ctx, func(ms int32) error {
		return s.dev.call(op, func() error { return s.dev.rt.b.SynchronizeStreamWithTimeout(s.h, ms) })
	})
}

// ContextSyncer is implemented by backends that can wait for a stream
// bounded by a context, returning ctx.Err() when it ends first (the
// fallback): Stream.Wait then needs no slices, whose timers and timeout
// errors cost allocations on every wait that outlasts one.
type ContextSyncer interface {
	SynchronizeStreamContext(ctx context.Context, s StreamHandle) error
}

// pollWait calls wait with timeouts of at most waitSlice (never beyond
// ctx's deadline) until it returns anything but a stream sync timeout or
// ctx is done.
func pollWait(ctx context.Context, wait func(ms int32) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		slice := waitSlice
		if dl, ok := ctx.Deadline(); ok {
			slice = min(slice, time.Until(dl))
		}
		ms := max(int32(slice/time.Millisecond), 1)
		err := wait(ms)
		if CodeOf(err) != CodeRTStreamSyncTimeout {
			return err
		}
	}
}

// WaitEvent makes work queued on the stream after this call wait until e
// has completed (aclrtStreamWaitEvent); the host does not block.
func (s *Stream) WaitEvent(e *Event) error {
	const op = "Stream.WaitEvent"
	h, err := acquire(op, s.r(), e.r())
	if err != nil {
		return err
	}
	defer h.release()
	return s.dev.call(op, func() error { return s.dev.rt.b.StreamWaitEvent(s.h, e.h) })
}

// Close waits for the work queued on the stream (aclrtDestroyStream
// requires it) and destroys the stream. Task errors are reported by
// Synchronize and Wait, not by Close. Close is idempotent: later calls
// return nil.
func (s *Stream) Close() error {
	if s == nil || !s.markClosed() {
		return nil
	}
	return s.dev.releaseChild(s, s.destroy)
}

func (s *Stream) retire() { s.markClosed() }

// destroy runs with the device context current.
func (s *Stream) destroy() error {
	b := s.dev.rt.b
	_ = b.SynchronizeStream(s.h) // a sticky task error is not Close's to report
	return b.DestroyStream(s.h)
}

// Do runs fn, which queues work on the stream through raw backend calls
// (those of another library bound to the same runtime, such as HCCL), with
// the calling goroutine locked to its OS thread and the stream's Device
// context current there. While fn runs the stream and every memory in use
// stay open (a concurrent Close waits); afterwards each memory's Close
// waits for the stream, so it is never freed under the queued work. fn
// gets the stream handle and must not keep the context current past its
// return. At most seven memories may be named; a nil or closed one fails
// with ACL_ERROR_RT_INVALID_HANDLE before fn runs.
func (s *Stream) Do(fn func(StreamHandle) error, use ...Memory) error {
	const op = "Stream.Do"
	if len(use) > maxHeld-1 {
		return Errorf(op, CodeInvalidParam, "%d memories named, at most %d", len(use), maxHeld-1)
	}
	var rs [maxHeld]*res
	rs[0] = s.r()
	for i, m := range use {
		rs[i+1] = memoryBase(m).r()
	}
	h, err := acquire(op, rs[:1+len(use)]...)
	if err != nil {
		return err
	}
	defer h.release()
	for _, m := range use {
		memoryBase(m).usedBy(s)
	}
	return s.dev.call(op, func() error { return fn(s.h) })
}
