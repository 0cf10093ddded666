package native

import (
	"math"

	"github.com/ascend-go/cann/internal/dl"

	"github.com/ascend-go/cann/acl"
)

// CreateStream calls aclrtCreateStream.
func (b *Backend) CreateStream() (acl.StreamHandle, error) {
	h, err := b.handleOut(symCreateStream)
	return acl.StreamHandle(h), err
}

// DestroyStream calls aclrtDestroyStream.
func (b *Backend) DestroyStream(st acl.StreamHandle) error {
	return b.call1(symDestroyStream, uintptr(st))
}

// SynchronizeStream calls aclrtSynchronizeStream. It blocks the calling OS
// thread until the stream drains.
func (b *Backend) SynchronizeStream(st acl.StreamHandle) error {
	return b.call1(symSynchronizeStream, uintptr(st))
}

// SynchronizeStreamWithTimeout calls aclrtSynchronizeStreamWithTimeout
// (timeoutMs: -1 waits forever, 0 polls).
func (b *Backend) SynchronizeStreamWithTimeout(st acl.StreamHandle, timeoutMs int32) error {
	return b.call2(symSynchronizeStreamWithTimeout, uintptr(st), uintptr(timeoutMs))
}

// CreateEvent calls aclrtCreateEvent.
func (b *Backend) CreateEvent() (acl.EventHandle, error) {
	h, err := b.handleOut(symCreateEvent)
	return acl.EventHandle(h), err
}

// CreateEventWithFlag calls aclrtCreateEventWithFlag.
func (b *Backend) CreateEventWithFlag(flag acl.EventFlag) (acl.EventHandle, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = f.Outp(0), uintptr(flag)
	err := b.invoke(symCreateEventWithFlag, f, 2)
	v := acl.EventHandle(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// RecordEvent calls aclrtRecordEvent.
func (b *Backend) RecordEvent(e acl.EventHandle, st acl.StreamHandle) error {
	return b.call2(symRecordEvent, uintptr(e), uintptr(st))
}

// SynchronizeEvent calls aclrtSynchronizeEvent.
func (b *Backend) SynchronizeEvent(e acl.EventHandle) error {
	return b.call1(symSynchronizeEvent, uintptr(e))
}

// StreamWaitEvent calls aclrtStreamWaitEvent.
func (b *Backend) StreamWaitEvent(st acl.StreamHandle, e acl.EventHandle) error {
	return b.call2(symStreamWaitEvent, uintptr(st), uintptr(e))
}

// EventElapsedTime calls aclrtEventElapsedTime and returns milliseconds.
func (b *Backend) EventElapsedTime(start, end acl.EventHandle) (float32, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = f.Outp(0), uintptr(start), uintptr(end)
	err := b.invoke(symEventElapsedTime, f, 3)
	v := math.Float32frombits(uint32(f.Out[0]))
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// ResetEvent calls aclrtResetEvent (optional symbol): a reset task of the
// event queued on st (NULL: the default stream).
func (b *Backend) ResetEvent(e acl.EventHandle, st acl.StreamHandle) error {
	return b.call2(symResetEvent, uintptr(e), uintptr(st))
}

// DestroyEvent calls aclrtDestroyEvent.
func (b *Backend) DestroyEvent(e acl.EventHandle) error {
	return b.call1(symDestroyEvent, uintptr(e))
}

// SetStreamFailureMode calls aclrtSetStreamFailureMode (optional symbol).
func (b *Backend) SetStreamFailureMode(st acl.StreamHandle, mode acl.StreamFailureMode) error {
	return b.call2(symSetStreamFailureMode, uintptr(st), uintptr(mode))
}
