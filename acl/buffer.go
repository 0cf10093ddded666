package acl

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// mem is what device and host buffers share: the allocation and the
// streams that have asynchronous work on it, which Close waits for so that
// memory is never freed under a queued copy.
type mem struct {
	res
	dev  *Device
	ptr  unsafe.Pointer
	size uintptr

	smu     sync.Mutex
	streams map[*Stream]struct{}
	// last is the stream recorded most recently since the last drain: a
	// run that repeats on one stream records nothing new.
	last atomic.Pointer[Stream]
}

// usedBy records that work on s touches the memory.
func (m *mem) usedBy(s *Stream) {
	if m.last.Load() == s {
		// Already in streams: drain clears last under smu when it takes
		// the set, so a stale hit still finds s in the set drain waits on.
		return
	}
	m.smu.Lock()
	if m.streams == nil {
		m.streams = make(map[*Stream]struct{})
	}
	m.streams[s] = struct{}{}
	m.last.Store(s)
	m.smu.Unlock()
}

// drain waits for the streams that have used the memory. Errors are the
// streams' to report (and a closed stream has already been drained).
func (m *mem) drain() {
	m.smu.Lock()
	ss := m.streams
	m.streams = nil
	m.last.Store(nil)
	m.smu.Unlock()
	for s := range ss {
		_ = s.Synchronize()
	}
}

func (m *mem) rank() int { return 2 }

func (m *mem) retire() {
	m.markClosed()
	m.drain()
}

func (m *mem) r() *res {
	if m == nil {
		return nil
	}
	return &m.res
}

// DeviceBuffer is an allocation of device memory (aclrtMalloc).
//
// A DeviceBuffer is safe for concurrent use; concurrent copies into
// overlapping bytes race on the device as they would in C.
type DeviceBuffer struct{ mem }

// Ptr returns the device address of the buffer, for raw calls; nil after
// Close.
func (b *DeviceBuffer) Ptr() unsafe.Pointer {
	if b == nil || b.isClosed() {
		return nil
	}
	return b.ptr
}

// Size returns the size of the buffer in bytes.
func (b *DeviceBuffer) Size() uintptr {
	if b == nil {
		return 0
	}
	return b.size
}

// Device returns the Device the buffer belongs to.
func (b *DeviceBuffer) Device() *Device {
	if b == nil {
		return nil
	}
	return b.dev
}

func (b *DeviceBuffer) dr() *res {
	if b == nil {
		return nil
	}
	return &b.res
}

// copySync is one synchronous aclrtMemcpy under the buffer's device
// context. A copy of nothing only checks that the handles are open.
func (b *DeviceBuffer) copySync(op string, dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind MemcpyKind, other *res) error {
	h, err := acquire(op, b.dr(), other)
	if err != nil {
		return err
	}
	defer h.release()
	if count == 0 {
		return nil
	}
	return b.dev.call(op, func() error { return b.dev.rt.b.Memcpy(dst, destMax, src, count, kind) })
}

// CopyFromHost copies all of src to the start of the buffer (aclrtMemcpy,
// host to device). src longer than the buffer fails with
// ACL_ERROR_INVALID_PARAM (destMax < count). An empty src copies nothing.
func (b *DeviceBuffer) CopyFromHost(src []byte) error {
	return b.CopyFromHostAt(0, src)
}

// CopyFromHostAt copies all of src into the buffer at byte offset off.
func (b *DeviceBuffer) CopyFromHostAt(off uintptr, src []byte) error {
	const op = "DeviceBuffer.CopyFromHost"
	if err := b.checkRange(op, off, 0); err != nil {
		return err
	}
	return b.copySync(op, unsafe.Add(b.ptr, off), b.size-off, unsafe.Pointer(unsafe.SliceData(src)), uintptr(len(src)), MemcpyHostToDevice, b.dr())
}

// CopyToHost copies the whole buffer to the start of dst (aclrtMemcpy,
// device to host). dst shorter than the buffer fails with
// ACL_ERROR_INVALID_PARAM (destMax < count).
func (b *DeviceBuffer) CopyToHost(dst []byte) error {
	if b == nil {
		return nilError("DeviceBuffer.CopyToHost")
	}
	return b.copyToHost(dst, 0, b.size)
}

// CopyToHostAt fills dst with the len(dst) bytes of the buffer that start
// at byte offset off.
func (b *DeviceBuffer) CopyToHostAt(dst []byte, off uintptr) error {
	return b.copyToHost(dst, off, uintptr(len(dst)))
}

func (b *DeviceBuffer) copyToHost(dst []byte, off, n uintptr) error {
	const op = "DeviceBuffer.CopyToHost"
	if err := b.checkRange(op, off, n); err != nil {
		return err
	}
	return b.copySync(op, unsafe.Pointer(unsafe.SliceData(dst)), uintptr(len(dst)), unsafe.Add(b.ptr, off), n, MemcpyDeviceToHost, b.dr())
}

// checkRange refuses an offset (and length) outside the buffer before any
// address is formed from it.
func (b *DeviceBuffer) checkRange(op string, off, n uintptr) error {
	if b == nil {
		return nilError(op)
	}
	if off > b.size || n > b.size-off {
		return Errorf(op, CodeInvalidParam, "range [%d, %d+%d) outside the %d-byte buffer", off, off, n, b.size)
	}
	return nil
}

// CopyFrom copies all of src to the start of the buffer (aclrtMemcpy,
// device to device). A src larger than the buffer fails with
// ACL_ERROR_INVALID_PARAM.
func (b *DeviceBuffer) CopyFrom(src *DeviceBuffer) error {
	const op = "DeviceBuffer.CopyFrom"
	if b == nil || src == nil {
		return nilError(op)
	}
	return b.copySync(op, b.ptr, b.size, src.ptr, src.size, MemcpyDeviceToDevice, src.dr())
}

// Memset sets every byte of the buffer to value (aclrtMemset).
func (b *DeviceBuffer) Memset(value byte) error {
	const op = "DeviceBuffer.Memset"
	h, err := acquire(op, b.dr())
	if err != nil {
		return err
	}
	defer h.release()
	return b.dev.call(op, func() error { return b.dev.rt.b.Memset(b.ptr, b.size, int32(value), b.size) })
}

// async queues one aclrtMemcpyAsync on s, after taking every handle
// involved, and records s on the buffers so their Close waits for it.
func async(op string, s *Stream, dst *mem, dstPtr unsafe.Pointer, destMax uintptr, src *mem, srcPtr unsafe.Pointer, count uintptr, kind MemcpyKind) error {
	h, err := acquire(op, s.r(), dst.r(), src.r())
	if err != nil {
		return err
	}
	defer h.release()
	dst.usedBy(s)
	src.usedBy(s)
	return s.dev.call(op, func() error {
		return s.dev.rt.b.MemcpyAsync(dstPtr, destMax, srcPtr, count, kind, s.h)
	})
}

// CopyFromHostAsync queues on s a copy of all of src (pinned host memory)
// to the start of the buffer (aclrtMemcpyAsync, host to device). The copy
// happens when s reaches it; src must not change until then.
func (b *DeviceBuffer) CopyFromHostAsync(src *HostBuffer, s *Stream) error {
	const op = "DeviceBuffer.CopyFromHostAsync"
	if b == nil || src == nil {
		return nilError(op)
	}
	return async(op, s, &b.mem, b.ptr, b.size, &src.mem, src.ptr, src.size, MemcpyHostToDevice)
}

// CopyToHostAsync queues on s a copy of the whole buffer to the start of
// dst (pinned host memory; aclrtMemcpyAsync, device to host). dst holds the
// bytes once s has reached the copy (Synchronize, Wait or an event).
func (b *DeviceBuffer) CopyToHostAsync(dst *HostBuffer, s *Stream) error {
	const op = "DeviceBuffer.CopyToHostAsync"
	if b == nil || dst == nil {
		return nilError(op)
	}
	return async(op, s, &dst.mem, dst.ptr, dst.size, &b.mem, b.ptr, b.size, MemcpyDeviceToHost)
}

// CopyFromAsync queues on s a copy of all of src to the start of the
// buffer (aclrtMemcpyAsync, device to device).
func (b *DeviceBuffer) CopyFromAsync(src *DeviceBuffer, s *Stream) error {
	const op = "DeviceBuffer.CopyFromAsync"
	if b == nil || src == nil {
		return nilError(op)
	}
	return async(op, s, &b.mem, b.ptr, b.size, &src.mem, src.ptr, src.size, MemcpyDeviceToDevice)
}

// MemsetAsync queues on s the setting of every byte of the buffer to value
// (aclrtMemsetAsync).
func (b *DeviceBuffer) MemsetAsync(value byte, s *Stream) error {
	const op = "DeviceBuffer.MemsetAsync"
	h, err := acquire(op, s.r(), b.dr())
	if err != nil {
		return err
	}
	defer h.release()
	b.usedBy(s)
	return s.dev.call(op, func() error {
		return s.dev.rt.b.MemsetAsync(b.ptr, b.size, int32(value), b.size, s.h)
	})
}

// Close waits for the streams that have asynchronous work on the buffer,
// then frees it (aclrtFree). Close is idempotent: later calls return nil.
func (b *DeviceBuffer) Close() error {
	if b == nil || !b.markClosed() {
		return nil
	}
	b.drain()
	return b.dev.releaseChild(b, b.destroy)
}

func (b *DeviceBuffer) destroy() error { return b.dev.rt.b.Free(b.ptr) }
