package acl

import (
	"errors"
	"runtime"
	"sync"
)

// Runtime is an initialized AscendCL runtime over one Backend: the Go
// handle of aclInit … aclFinalize. It owns the Devices opened through it.
//
// A Runtime is safe for concurrent use.
//
// No cleanup or finalizer is attached to a Runtime or to anything it owns:
// ACL calls must run on a thread bound to the right context, never on the
// cleanup goroutine, and every handle stays reachable from its owner anyway
// (Runtime → Device → Stream, Event, buffers), so an explicit Close of the
// owner releases whatever the program forgot.
type Runtime struct {
	res
	b Backend

	mu      sync.Mutex
	devices map[*Device]struct{}
	refs    map[int32]int // open Devices per device id
}

// Version is the runtime version reported by aclrtGetVersion.
type Version struct{ Major, Minor, Patch int32 }

// Init initializes AscendCL on b (aclInit; configPath "" passes NULL) and
// returns the Runtime. The native library allows one initialization per
// process: a second Init on the same backend fails with
// ACL_ERROR_REPEAT_INITIALIZE.
func Init(b Backend, configPath string) (*Runtime, error) {
	if b == nil {
		return nil, &Error{Op: "acl.Init", Code: CodeInvalidParam, Msg: "nil backend"}
	}
	if err := b.Init(configPath); err != nil {
		return nil, err
	}
	return &Runtime{
		res:     newRes("runtime"),
		b:       b,
		devices: make(map[*Device]struct{}),
		refs:    make(map[int32]int),
	}, nil
}

// Backend returns the backend the Runtime runs on, for raw calls (inside
// Device.Do when they need the device's context).
func (r *Runtime) Backend() Backend {
	if r == nil {
		return nil
	}
	return r.b
}

// Close closes every Device still open (see Device.Close), then finalizes
// AscendCL (aclFinalize). Close is idempotent: later calls return nil.
func (r *Runtime) Close() error {
	if r == nil {
		return nil
	}
	r.res.mu.Lock()
	if r.res.closed {
		r.res.mu.Unlock()
		return nil
	}
	r.res.closed = true
	r.res.mu.Unlock()

	r.mu.Lock()
	devs := make([]*Device, 0, len(r.devices))
	for d := range r.devices {
		devs = append(devs, d)
	}
	r.mu.Unlock()
	var errs []error
	for _, d := range devs {
		errs = append(errs, d.Close())
	}
	errs = append(errs, r.b.Finalize())
	return errors.Join(errs...)
}

// DeviceCount returns the number of devices (aclrtGetDeviceCount).
func (r *Runtime) DeviceCount() (int, error) {
	const op = "Runtime.DeviceCount"
	if r == nil {
		return 0, nilError(op)
	}
	h, err := acquire(op, &r.res)
	if err != nil {
		return 0, err
	}
	defer h.release()
	n, err := r.b.GetDeviceCount()
	return int(n), err
}

// SocName returns the SoC name of the installation (aclrtGetSocName), ""
// when unknown or after Close.
func (r *Runtime) SocName() string {
	if r == nil {
		return ""
	}
	h, err := acquire("Runtime.SocName", &r.res)
	if err != nil {
		return ""
	}
	defer h.release()
	return r.b.GetSocName()
}

// Version returns the runtime version (aclrtGetVersion).
func (r *Runtime) Version() (Version, error) {
	const op = "Runtime.Version"
	if r == nil {
		return Version{}, nilError(op)
	}
	h, err := acquire(op, &r.res)
	if err != nil {
		return Version{}, err
	}
	defer h.release()
	var v Version
	v.Major, v.Minor, v.Patch, err = r.b.GetVersion()
	return v, err
}

// OpenDevice opens device id for use from any goroutine: it sets the
// device (aclrtSetDevice, once per id however many Devices are open on it)
// and creates the Device's own context (aclrtCreateContext). A bad id
// fails with ACL_ERROR_RT_INVALID_DEVICEID.
func (r *Runtime) OpenDevice(id int32) (*Device, error) {
	const op = "Runtime.OpenDevice"
	if r == nil {
		return nil, nilError(op)
	}
	h, err := acquire(op, &r.res)
	if err != nil {
		return nil, err
	}
	defer h.release()

	// aclrtCreateContext makes the new context current on the calling
	// thread; the lock keeps that on one thread for the two calls.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.mu.Lock()
	if r.refs[id] == 0 {
		if err := r.b.SetDevice(id); err != nil {
			r.mu.Unlock()
			return nil, err
		}
	}
	r.refs[id]++
	r.mu.Unlock()

	ctx, err := r.b.CreateContext(id)
	if err != nil {
		return nil, errors.Join(err, r.unref(id))
	}
	d := &Device{res: newRes("device"), rt: r, id: id, ctx: ctx, kids: make(map[child]struct{})}
	r.mu.Lock()
	r.devices[d] = struct{}{}
	r.mu.Unlock()
	return d, nil
}

// unref drops one open Device of id and resets the device
// (aclrtResetDevice) when it was the last one.
func (r *Runtime) unref(id int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs[id]--
	if r.refs[id] > 0 {
		return nil
	}
	delete(r.refs, id)
	return r.b.ResetDevice(id)
}

// forget removes a closed Device from the Runtime and releases its device.
func (r *Runtime) forget(d *Device) error {
	r.mu.Lock()
	delete(r.devices, d)
	r.mu.Unlock()
	return r.unref(d.id)
}
