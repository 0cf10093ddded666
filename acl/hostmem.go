package acl

import (
	"runtime"
	"unsafe"
)

// HostBuffer is pinned host memory (aclrtMallocHost), the host side of
// asynchronous copies.
//
// A HostBuffer is safe for concurrent use as a handle; its bytes are plain
// memory that the program and queued copies share without locking, as in C.
type HostBuffer struct{ mem }

// Bytes returns the pinned memory as a byte slice, nil after Close. The
// slice aliases memory the Go heap does not own: it must not be used after
// Close.
func (h *HostBuffer) Bytes() []byte {
	if h == nil || h.isClosed() {
		return nil
	}
	return unsafe.Slice((*byte)(h.ptr), h.size)
}

// Ptr returns the host address of the buffer, for raw calls; nil after
// Close.
func (h *HostBuffer) Ptr() unsafe.Pointer {
	if h == nil || h.isClosed() {
		return nil
	}
	return h.ptr
}

// Size returns the size of the buffer in bytes.
func (h *HostBuffer) Size() uintptr {
	if h == nil {
		return 0
	}
	return h.size
}

// Close waits for the streams that have asynchronous work on the buffer,
// then frees it (aclrtFreeHost). Close is idempotent: later calls return
// nil.
func (h *HostBuffer) Close() error {
	if h == nil || !h.markClosed() {
		return nil
	}
	h.drain()
	return h.dev.releaseChild(h, h.destroy)
}

func (h *HostBuffer) destroy() error { return h.dev.rt.b.FreeHost(h.ptr) }

// HostRegistration is host memory registered for device access
// (aclrtHostRegister or aclrtHostRegisterV2); Close unregisters it.
//
// A HostRegistration is safe for concurrent use.
type HostRegistration struct {
	res
	dev    *Device
	host   unsafe.Pointer
	devPtr unsafe.Pointer
	size   uint64
	pin    runtime.Pinner // pins a registered Go-heap slice until unregistered
}

func (r *HostRegistration) rank() int { return 3 }

// HostPtr returns the registered host address; nil after Close.
func (r *HostRegistration) HostPtr() unsafe.Pointer {
	if r == nil || r.isClosed() {
		return nil
	}
	return r.host
}

// DevicePtr returns the device-side address of the registered memory; nil
// after Close (and for a V2 registration without HostRegMapped).
func (r *HostRegistration) DevicePtr() unsafe.Pointer {
	if r == nil || r.isClosed() {
		return nil
	}
	return r.devPtr
}

// Size returns the registered size in bytes.
func (r *HostRegistration) Size() uint64 {
	if r == nil {
		return 0
	}
	return r.size
}

// Close unregisters the memory (aclrtHostUnregister). Close is idempotent:
// later calls return nil.
func (r *HostRegistration) Close() error {
	if r == nil || !r.markClosed() {
		return nil
	}
	return r.dev.releaseChild(r, r.destroy)
}

func (r *HostRegistration) retire() { r.markClosed() }

func (r *HostRegistration) destroy() error {
	err := r.dev.rt.b.HostUnregister(r.host)
	r.pin.Unpin()
	return err
}
