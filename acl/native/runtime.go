package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

// Init calls aclInit; "" passes NULL.
func (b *Backend) Init(configPath string) error {
	f := dl.GetFrame()
	defer dl.PutFrame(f)
	if configPath == "" {
		return b.invoke(symInit, f, 1)
	}
	p, err := cString("aclInit", configPath)
	if err != nil {
		return err
	}
	f.Args[0] = uintptr(unsafe.Pointer(&p[0]))
	err = b.invoke(symInit, f, 1)
	runtime.KeepAlive(p)
	return err
}

// Finalize calls aclFinalize.
func (b *Backend) Finalize() error { return b.call0(symFinalize) }

// SetDevice calls aclrtSetDevice.
func (b *Backend) SetDevice(deviceID int32) error { return b.call1(symSetDevice, uintptr(deviceID)) }

// ResetDevice calls aclrtResetDevice.
func (b *Backend) ResetDevice(deviceID int32) error {
	return b.call1(symResetDevice, uintptr(deviceID))
}

// ResetDeviceForce calls aclrtResetDeviceForce (optional symbol).
func (b *Backend) ResetDeviceForce(deviceID int32) error {
	return b.call1(symResetDeviceForce, uintptr(deviceID))
}

// DeviceCanAccessPeer calls aclrtDeviceCanAccessPeer (optional symbol).
func (b *Backend) DeviceCanAccessPeer(deviceID, peerDeviceID int32) (int32, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = f.Outp(0), uintptr(deviceID), uintptr(peerDeviceID)
	err := b.invoke(symDeviceCanAccessPeer, f, 3)
	v := int32(f.Out[0])
	dl.PutFrame(f)
	return v, err
}

// DeviceEnablePeerAccess calls aclrtDeviceEnablePeerAccess (optional symbol).
func (b *Backend) DeviceEnablePeerAccess(peerDeviceID int32, flags uint32) error {
	return b.call2(symDeviceEnablePeerAccess, uintptr(peerDeviceID), uintptr(flags))
}

// DeviceDisablePeerAccess calls aclrtDeviceDisablePeerAccess (optional symbol).
func (b *Backend) DeviceDisablePeerAccess(peerDeviceID int32) error {
	return b.call1(symDeviceDisablePeerAccess, uintptr(peerDeviceID))
}

// GetDevice calls aclrtGetDevice.
func (b *Backend) GetDevice() (int32, error) {
	f := dl.GetFrame()
	f.Args[0] = f.Outp(0)
	err := b.invoke(symGetDevice, f, 1)
	v := int32(f.Out[0])
	dl.PutFrame(f)
	return v, err
}

// GetDeviceCount calls aclrtGetDeviceCount.
func (b *Backend) GetDeviceCount() (uint32, error) {
	f := dl.GetFrame()
	f.Args[0] = f.Outp(0)
	err := b.invoke(symGetDeviceCount, f, 1)
	v := uint32(f.Out[0])
	dl.PutFrame(f)
	return v, err
}

// GetRunMode calls aclrtGetRunMode.
func (b *Backend) GetRunMode() (acl.RunMode, error) {
	f := dl.GetFrame()
	f.Args[0] = f.Outp(0)
	err := b.invoke(symGetRunMode, f, 1)
	v := acl.RunMode(int32(f.Out[0]))
	dl.PutFrame(f)
	return v, err
}

// CreateContext calls aclrtCreateContext; the new context becomes the
// calling thread's current context.
func (b *Backend) CreateContext(deviceID int32) (acl.ContextHandle, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = f.Outp(0), uintptr(deviceID)
	err := b.invoke(symCreateContext, f, 2)
	v := acl.ContextHandle(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// DestroyContext calls aclrtDestroyContext.
func (b *Backend) DestroyContext(ctx acl.ContextHandle) error {
	return b.call1(symDestroyContext, uintptr(ctx))
}

// SetCurrentContext calls aclrtSetCurrentContext.
func (b *Backend) SetCurrentContext(ctx acl.ContextHandle) error {
	return b.call1(symSetCurrentContext, uintptr(ctx))
}

// GetCurrentContext calls aclrtGetCurrentContext.
func (b *Backend) GetCurrentContext() (acl.ContextHandle, error) {
	h, err := b.handleOut(symGetCurrentContext)
	return acl.ContextHandle(h), err
}

// GetRecentErrMsg calls aclGetRecentErrMsg on the calling thread and copies
// the text ("" for NULL). The binding already reads it after every failed
// call (into acl.Error.Msg), and ACL reports each message once, so this
// returns "" after such a failure.
func (b *Backend) GetRecentErrMsg() string {
	if b == nil {
		return ""
	}
	fn := b.fns[symGetRecentErrMsg]
	if !b.ready(fn) {
		return ""
	}
	return dl.Message(fn)
}

// GetSocName calls aclrtGetSocName ("" when it returns NULL or the library
// lacks it).
func (b *Backend) GetSocName() string {
	if b == nil {
		return ""
	}
	fn := b.fns[symGetSocName]
	if !b.ready(fn) {
		return ""
	}
	f := dl.GetFrame()
	p := dl.CallRaw(fn, f, 0)
	dl.PutFrame(f)
	return goString(p)
}

// GetVersion calls aclrtGetVersion.
func (b *Backend) GetVersion() (major, minor, patch int32, err error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = f.Outp(0), f.Outp(1), f.Outp(2)
	err = b.invoke(symGetVersion, f, 3)
	major, minor, patch = int32(f.Out[0]), int32(f.Out[1]), int32(f.Out[2])
	dl.PutFrame(f)
	if err != nil {
		return 0, 0, 0, err
	}
	return major, minor, patch, nil
}

// call0 and call1 run C functions whose arguments are plain values.
func (b *Backend) call0(id sym) error {
	f := dl.GetFrame()
	err := b.invoke(id, f, 0)
	dl.PutFrame(f)
	return err
}

func (b *Backend) call1(id sym, a uintptr) error {
	f := dl.GetFrame()
	f.Args[0] = a
	err := b.invoke(id, f, 1)
	dl.PutFrame(f)
	return err
}

func (b *Backend) call2(id sym, a0, a1 uintptr) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = a0, a1
	err := b.invoke(id, f, 2)
	dl.PutFrame(f)
	return err
}

// handleOut runs a C function whose only argument receives a handle.
func (b *Backend) handleOut(id sym) (uintptr, error) {
	f := dl.GetFrame()
	f.Args[0] = f.Outp(0)
	err := b.invoke(id, f, 1)
	v := uintptr(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}
