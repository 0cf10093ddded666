package native

import (
	"math"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ascend-go/cann/acl"
)

// CreateStream calls aclrtCreateStream.
func (b *Backend) CreateStream() (acl.StreamHandle, error) {
	s := getScratch()
	err := b.call(symCreateStream, uintptr(unsafe.Pointer(&s.a)))
	v := s.a
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return acl.StreamHandle(v), nil
}

// DestroyStream calls aclrtDestroyStream.
func (b *Backend) DestroyStream(st acl.StreamHandle) error {
	return b.call(symDestroyStream, uintptr(st))
}

// SynchronizeStream calls aclrtSynchronizeStream. It blocks the calling OS
// thread until the stream drains.
func (b *Backend) SynchronizeStream(st acl.StreamHandle) error {
	return b.call(symSynchronizeStream, uintptr(st))
}

// SynchronizeStreamWithTimeout calls aclrtSynchronizeStreamWithTimeout
// (timeoutMs: -1 waits forever, 0 polls).
func (b *Backend) SynchronizeStreamWithTimeout(st acl.StreamHandle, timeoutMs int32) error {
	return b.call(symSynchronizeStreamWithTimeout, uintptr(st), uintptr(timeoutMs))
}

// CreateEvent calls aclrtCreateEvent.
func (b *Backend) CreateEvent() (acl.EventHandle, error) {
	s := getScratch()
	err := b.call(symCreateEvent, uintptr(unsafe.Pointer(&s.a)))
	v := s.a
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return acl.EventHandle(v), nil
}

// CreateEventWithFlag calls aclrtCreateEventWithFlag.
func (b *Backend) CreateEventWithFlag(flag acl.EventFlag) (acl.EventHandle, error) {
	s := getScratch()
	err := b.call(symCreateEventWithFlag, uintptr(unsafe.Pointer(&s.a)), uintptr(flag))
	v := s.a
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return acl.EventHandle(v), nil
}

// RecordEvent calls aclrtRecordEvent.
func (b *Backend) RecordEvent(e acl.EventHandle, st acl.StreamHandle) error {
	return b.call(symRecordEvent, uintptr(e), uintptr(st))
}

// SynchronizeEvent calls aclrtSynchronizeEvent.
func (b *Backend) SynchronizeEvent(e acl.EventHandle) error {
	return b.call(symSynchronizeEvent, uintptr(e))
}

// StreamWaitEvent calls aclrtStreamWaitEvent.
func (b *Backend) StreamWaitEvent(st acl.StreamHandle, e acl.EventHandle) error {
	return b.call(symStreamWaitEvent, uintptr(st), uintptr(e))
}

// EventElapsedTime calls aclrtEventElapsedTime and returns milliseconds.
func (b *Backend) EventElapsedTime(start, end acl.EventHandle) (float32, error) {
	s := getScratch()
	err := b.call(symEventElapsedTime, uintptr(unsafe.Pointer(&s.a)), uintptr(start), uintptr(end))
	v := math.Float32frombits(uint32(s.a))
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// DestroyEvent calls aclrtDestroyEvent.
func (b *Backend) DestroyEvent(e acl.EventHandle) error {
	return b.call(symDestroyEvent, uintptr(e))
}

// syscall0 calls a C function without arguments and returns its result.
func syscall0(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}
