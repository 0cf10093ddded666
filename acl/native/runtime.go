package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Init calls aclInit; "" passes NULL.
func (b *Backend) Init(configPath string) error {
	if configPath == "" {
		return b.call(symInit, 0)
	}
	p, err := cString("aclInit", configPath)
	if err != nil {
		return err
	}
	err = b.call(symInit, uintptr(unsafe.Pointer(&p[0])))
	runtime.KeepAlive(p)
	return err
}

// Finalize calls aclFinalize.
func (b *Backend) Finalize() error { return b.call(symFinalize) }

// SetDevice calls aclrtSetDevice.
func (b *Backend) SetDevice(deviceID int32) error {
	return b.call(symSetDevice, uintptr(deviceID))
}

// ResetDevice calls aclrtResetDevice.
func (b *Backend) ResetDevice(deviceID int32) error {
	return b.call(symResetDevice, uintptr(deviceID))
}

// GetDevice calls aclrtGetDevice.
func (b *Backend) GetDevice() (int32, error) {
	s := getScratch()
	err := b.call(symGetDevice, uintptr(unsafe.Pointer(&s.a)))
	v := *(*int32)(unsafe.Pointer(&s.a))
	scratchPool.Put(s)
	return v, err
}

// GetDeviceCount calls aclrtGetDeviceCount.
func (b *Backend) GetDeviceCount() (uint32, error) {
	s := getScratch()
	err := b.call(symGetDeviceCount, uintptr(unsafe.Pointer(&s.a)))
	v := *(*uint32)(unsafe.Pointer(&s.a))
	scratchPool.Put(s)
	return v, err
}

// GetRunMode calls aclrtGetRunMode.
func (b *Backend) GetRunMode() (acl.RunMode, error) {
	s := getScratch()
	err := b.call(symGetRunMode, uintptr(unsafe.Pointer(&s.a)))
	v := *(*int32)(unsafe.Pointer(&s.a))
	scratchPool.Put(s)
	return acl.RunMode(v), err
}

// CreateContext calls aclrtCreateContext; the new context becomes the
// calling thread's current context.
func (b *Backend) CreateContext(deviceID int32) (acl.ContextHandle, error) {
	s := getScratch()
	err := b.call(symCreateContext, uintptr(unsafe.Pointer(&s.a)), uintptr(deviceID))
	v := s.a
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return acl.ContextHandle(v), nil
}

// DestroyContext calls aclrtDestroyContext.
func (b *Backend) DestroyContext(ctx acl.ContextHandle) error {
	return b.call(symDestroyContext, uintptr(ctx))
}

// SetCurrentContext calls aclrtSetCurrentContext.
func (b *Backend) SetCurrentContext(ctx acl.ContextHandle) error {
	return b.call(symSetCurrentContext, uintptr(ctx))
}

// GetCurrentContext calls aclrtGetCurrentContext.
func (b *Backend) GetCurrentContext() (acl.ContextHandle, error) {
	s := getScratch()
	err := b.call(symGetCurrentContext, uintptr(unsafe.Pointer(&s.a)))
	v := s.a
	scratchPool.Put(s)
	if err != nil {
		return 0, err
	}
	return acl.ContextHandle(v), nil
}

// GetRecentErrMsg calls aclGetRecentErrMsg on the calling thread and copies
// the text ("" for NULL). The binding already reads it after every failed
// call (into acl.Error.Msg), and ACL reports each message once, so this
// returns "" after such a failure.
func (b *Backend) GetRecentErrMsg() string {
	fn := b.fns[symGetRecentErrMsg]
	if !b.ready(fn) {
		return ""
	}
	return b.recentMsg()
}

// GetSocName calls aclrtGetSocName ("" when it returns NULL or the library
// lacks it).
func (b *Backend) GetSocName() string {
	fn := b.fns[symGetSocName]
	if !b.ready(fn) {
		return ""
	}
	return goString(syscall0(fn))
}

// GetVersion calls aclrtGetVersion.
func (b *Backend) GetVersion() (major, minor, patch int32, err error) {
	s := getScratch()
	err = b.call(symGetVersion, uintptr(unsafe.Pointer(&s.a)), uintptr(unsafe.Pointer(&s.b)),
		uintptr(unsafe.Pointer(&s.c)))
	major, minor, patch = *(*int32)(unsafe.Pointer(&s.a)), *(*int32)(unsafe.Pointer(&s.b)),
		*(*int32)(unsafe.Pointer(&s.c))
	scratchPool.Put(s)
	if err != nil {
		return 0, 0, 0, err
	}
	return major, minor, patch, nil
}
