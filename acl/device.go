package acl

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Device is one opened NPU with its own ACL context. The ACL current
// context belongs to an OS thread, while goroutines move between threads;
// so every Device operation (and every operation of the streams, events
// and buffers it created) locks the calling goroutine to its thread, makes
// the Device's context current there, calls the backend and unlocks. A
// Device therefore works from any goroutine, and goroutines need not call
// runtime.LockOSThread themselves. The thread is left with the Device's
// context current (ACL has no way back to "no context"); raw Backend calls
// outside Do must bind their own context.
//
// A Device owns what it creates: Close releases the streams, events,
// buffers and host registrations still open, then destroys the context and
// releases the device.
//
// A Device is safe for concurrent use.
type Device struct {
	res
	rt  *Runtime
	id  int32
	ctx ContextHandle

	kmu  sync.Mutex
	kids map[child]struct{} // open handles this Device created

	pins pinGuard // pinned executions of the Device's models (pin.go)
}

// pinnable returns a res of kind whose closing invalidates the Device's
// pinned executions.
func (d *Device) pinnable(kind string) res {
	return res{seq: resSeq.Add(1), kind: kind, pins: &d.pins}
}

// child is a handle a Device owns and releases when it closes.
type child interface {
	// retire marks the handle closed (waiting for calls in flight) and,
	// for memory, waits for the streams that have work on it. It runs
	// with no context bound: those streams may belong to other Devices.
	retire()
	// destroy releases the backend resource; the Device's context is
	// current on the calling (locked) thread.
	destroy() error
	// rank orders the release: streams first (their queued work may use
	// the others), then events, then memory.
	rank() int
}

// ID returns the device id.
func (d *Device) ID() int32 {
	if d == nil {
		return -1
	}
	return d.id
}

// Context returns the Device's ACL context handle, for raw backend calls.
func (d *Device) Context() ContextHandle {
	if d == nil {
		return 0
	}
	return d.ctx
}

// Runtime returns the Runtime the Device was opened from.
func (d *Device) Runtime() *Runtime {
	if d == nil {
		return nil
	}
	return d.rt
}

// bound runs fn with the calling goroutine locked to its OS thread and the
// Device's context current on that thread. It sets the context on every
// call: which context a thread has current cannot be known reliably from
// Go, and the set is a cheap call on both backends.
func (d *Device) bound(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.rt.b.SetCurrentContext(d.ctx); err != nil {
		return err
	}
	return fn()
}

// call runs fn bound to the Device's context if the Device is open.
func (d *Device) call(op string, fn func() error) error {
	if d == nil {
		return nilError(op)
	}
	h, err := acquire(op, &d.res)
	if err != nil {
		return err
	}
	defer h.release()
	return d.bound(fn)
}

// Do runs fn with the calling goroutine locked to its OS thread and the
// Device's context current there, for callers that batch several raw
// Backend calls under one lock and bind. fn must call only Backend methods
// (Runtime().Backend()), not methods of the Device or of its handles, and
// must not keep the context current past its return. Do returns fn's error
// or, if the Device is closed, an ACL_ERROR_RT_INVALID_HANDLE error.
func (d *Device) Do(fn func() error) error {
	return d.call("Device.Do", fn)
}

// adopt creates a handle through mk under the Device's context and records
// it as owned. mk runs only while the Device is open.
func (d *Device) adopt(op string, mk func() (child, error)) (child, error) {
	if d == nil {
		return nil, nilError(op)
	}
	h, err := acquire(op, &d.res)
	if err != nil {
		return nil, err
	}
	defer h.release()
	var c child
	err = d.bound(func() error {
		var err error
		c, err = mk()
		return err
	})
	if err != nil {
		return nil, err
	}
	d.kmu.Lock()
	d.kids[c] = struct{}{}
	d.kmu.Unlock()
	return c, nil
}

// releaseChild destroys c on behalf of its own Close. If the Device is
// closing, the Device has taken c over and releases it itself.
func (d *Device) releaseChild(c child, destroy func() error) error {
	d.res.mu.RLock()
	defer d.res.mu.RUnlock()
	if d.res.closed {
		return nil
	}
	d.kmu.Lock()
	delete(d.kids, c)
	d.kmu.Unlock()
	return d.bound(destroy)
}

// Close releases what the Device still owns — streams (after their queued
// work completes), events, device buffers, host buffers and host
// registrations — then destroys its context (aclrtDestroyContext) and
// releases the device (aclrtResetDevice, when no other Device of the same
// id is open). Close waits for operations in flight on the Device; later
// operations fail with ACL_ERROR_RT_INVALID_HANDLE. Close is idempotent:
// later calls return nil. All cleanup steps run even if one fails; the
// errors are joined.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	d.res.mu.Lock()
	if d.res.closed {
		d.res.mu.Unlock()
		return nil
	}
	d.res.closed = true
	d.kmu.Lock()
	kids := make([]child, 0, len(d.kids))
	for c := range d.kids {
		kids = append(kids, c)
	}
	d.kids = nil
	d.kmu.Unlock()
	d.res.mu.Unlock()
	d.pins.bump()

	slices.SortStableFunc(kids, func(a, b child) int { return a.rank() - b.rank() })
	for _, c := range kids {
		c.retire()
	}
	var errs []error
	errs = append(errs, d.bound(func() error {
		var errs []error
		for _, c := range kids {
			errs = append(errs, c.destroy())
		}
		errs = append(errs, d.rt.b.DestroyContext(d.ctx))
		return errors.Join(errs...)
	}))
	errs = append(errs, d.rt.forget(d))
	return errors.Join(errs...)
}

// MemInfo returns the free and total bytes of one kind of memory of the
// device (aclrtGetMemInfo).
func (d *Device) MemInfo(attr MemAttr) (free, total uintptr, err error) {
	err = d.call("Device.MemInfo", func() error {
		var err error
		free, total, err = d.rt.b.GetMemInfo(attr)
		return err
	})
	return free, total, err
}

// NewStream creates a stream in the Device's context (aclrtCreateStream).
func (d *Device) NewStream() (*Stream, error) {
	c, err := d.adopt("Device.NewStream", func() (child, error) {
		h, err := d.rt.b.CreateStream()
		if err != nil {
			return nil, err
		}
		return &Stream{res: d.pinnable("stream"), dev: d, h: h}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*Stream), nil
}

// NewEvent creates an event in the Device's context: aclrtCreateEvent for
// flags 0, aclrtCreateEventWithFlag otherwise (EventSync, EventTimeLine).
func (d *Device) NewEvent(flags EventFlag) (*Event, error) {
	c, err := d.adopt("Device.NewEvent", func() (child, error) {
		var h EventHandle
		var err error
		if flags == 0 {
			h, err = d.rt.b.CreateEvent()
		} else {
			h, err = d.rt.b.CreateEventWithFlag(flags)
		}
		if err != nil {
			return nil, err
		}
		return &Event{res: newRes("event"), dev: d, h: h, flags: flags}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*Event), nil
}

// Malloc allocates size bytes of device memory (aclrtMalloc). Size 0 fails
// with ACL_ERROR_INVALID_PARAM, more than the device has free with
// ACL_ERROR_RT_MEMORY_ALLOCATION.
func (d *Device) Malloc(size uintptr, policy MemMallocPolicy) (*DeviceBuffer, error) {
	c, err := d.adopt("Device.Malloc", func() (child, error) {
		p, err := d.rt.b.Malloc(size, policy)
		if err != nil {
			return nil, err
		}
		return &DeviceBuffer{mem: mem{res: d.pinnable("device buffer"), dev: d, ptr: p, size: size}}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*DeviceBuffer), nil
}

// Free frees device memory the runtime allocated for the caller (aclrtFree):
// the output of a DataBuffer made with (nil, 0), whose address DataBuffer.Addr
// reports after an execution. Memory from Malloc is freed by closing its
// DeviceBuffer instead.
func (d *Device) Free(p unsafe.Pointer) error {
	return d.call("Device.Free", func() error { return d.rt.b.Free(p) })
}

// MallocHost allocates size bytes of pinned host memory (aclrtMallocHost),
// usable by asynchronous copies.
func (d *Device) MallocHost(size uintptr) (*HostBuffer, error) {
	c, err := d.adopt("Device.MallocHost", func() (child, error) {
		p, err := d.rt.b.MallocHost(size)
		if err != nil {
			return nil, err
		}
		return &HostBuffer{mem: mem{res: d.pinnable("host buffer"), dev: d, ptr: p, size: size}}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*HostBuffer), nil
}

// RegisterHost registers b for device access (aclrtHostRegister) and
// returns the registration, whose DevicePtr is the device-side address of
// b[0]. b must start on a 4 KiB page (else ACL_ERROR_RT_PARAM_INVALID,
// checked here because the runtime leaves it to the driver) and stay unchanged in
// place until Close. The device reads and writes b behind Go's back, so
// memory outside the Go heap (MallocHost, mmap) is the natural choice; a
// slice of the Go heap is pinned (runtime.Pinner) until Close, as the Go
// rules require for memory a foreign agent keeps a pointer to.
func (d *Device) RegisterHost(b []byte, typ HostRegisterType) (*HostRegistration, error) {
	const op = "Device.RegisterHost"
	if len(b) == 0 {
		return nil, &Error{Op: op, Code: CodeInvalidParam, Msg: "empty buffer"}
	}
	return d.registerHost(op, unsafe.Pointer(unsafe.SliceData(b)), uint64(len(b)), typ, b)
}

// RegisterHostPointer is RegisterHost for memory given by address and
// size; the memory must not belong to the Go heap.
func (d *Device) RegisterHostPointer(p unsafe.Pointer, size uint64, typ HostRegisterType) (*HostRegistration, error) {
	return d.registerHost("Device.RegisterHostPointer", p, size, typ, nil)
}

// HostRegisterAlign is the alignment aclrtHostRegister requires of the
// host address ("Host 内存地址需 4K 页对齐", hicann/runtime
// docs/api_docs/aclrtHostRegister.md, parameter ptr). The ACL layer does
// not check it (hicann/runtime src/acl/aclrt_impl/memory.cpp,
// aclrtHostRegisterImpl checks only null pointers and size > 0 before
// rtsHostRegister), so it is checked here, before the device sees the
// address, with the code the driver's refusal maps to (107000,
// ACL_ERROR_RT_PARAM_INVALID: hicann/runtime errcode_manage.cc:38), as the
// fallback gives it.
const HostRegisterAlign = 4096

func (d *Device) registerHost(op string, p unsafe.Pointer, size uint64, typ HostRegisterType, keep []byte) (*HostRegistration, error) {
	if uintptr(p)%HostRegisterAlign != 0 {
		return nil, Errorf(op, CodeRTParamInvalid, "host address %#x is not %d-byte (page) aligned", uintptr(p), HostRegisterAlign)
	}
	c, err := d.adopt(op, func() (child, error) {
		dp, err := d.rt.b.HostRegister(p, size, typ)
		if err != nil {
			return nil, err
		}
		r := &HostRegistration{res: newRes("host registration"), dev: d, host: p, devPtr: dp, size: size}
		if keep != nil {
			// Pin does nothing for memory outside the Go heap.
			r.pin.Pin(unsafe.SliceData(keep))
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*HostRegistration), nil
}

// RegisterHostV2 registers host memory with aclrtHostRegisterV2 flags
// (HostRegMapped, HostRegPinned, …). With HostRegMapped the registration's
// DevicePtr is looked up with aclrtHostGetDevicePointer; otherwise it is
// nil.
func (d *Device) RegisterHostV2(p unsafe.Pointer, size uint64, flag HostRegFlag) (*HostRegistration, error) {
	c, err := d.adopt("Device.RegisterHostV2", func() (child, error) {
		if err := d.rt.b.HostRegisterV2(p, size, flag); err != nil {
			return nil, err
		}
		var dp unsafe.Pointer
		if flag&HostRegMapped != 0 {
			var err error
			if dp, err = d.rt.b.HostGetDevicePointer(p, 0); err != nil {
				return nil, errors.Join(err, d.rt.b.HostUnregister(p))
			}
		}
		return &HostRegistration{res: newRes("host registration"), dev: d, host: p, devPtr: dp, size: size}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*HostRegistration), nil
}
