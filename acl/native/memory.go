package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Malloc calls aclrtMalloc.
func (b *Backend) Malloc(size uintptr, policy acl.MemMallocPolicy) (unsafe.Pointer, error) {
	f := getFrame()
	f.args[0], f.args[1], f.args[2] = f.outp(0), size, uintptr(policy)
	err := b.invoke(symMalloc, f, 3)
	p := uintptr(f.out[0])
	putFrame(f)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// Free calls aclrtFree.
func (b *Backend) Free(devPtr unsafe.Pointer) error {
	escape(devPtr)
	err := b.call1(symFree, uintptr(devPtr))
	runtime.KeepAlive(devPtr)
	return err
}

// MallocHost calls aclrtMallocHost.
func (b *Backend) MallocHost(size uintptr) (unsafe.Pointer, error) {
	f := getFrame()
	f.args[0], f.args[1] = f.outp(0), size
	err := b.invoke(symMallocHost, f, 2)
	p := uintptr(f.out[0])
	putFrame(f)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// FreeHost calls aclrtFreeHost.
func (b *Backend) FreeHost(hostPtr unsafe.Pointer) error {
	escape(hostPtr)
	err := b.call1(symFreeHost, uintptr(hostPtr))
	runtime.KeepAlive(hostPtr)
	return err
}

// Memcpy calls aclrtMemcpy. Go memory may be passed for the host side: the
// copy is complete when the call returns.
func (b *Backend) Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	escape(dst)
	escape(src)
	f := getFrame()
	f.args[0], f.args[1], f.args[2], f.args[3], f.args[4] = uintptr(dst), destMax, uintptr(src), count, uintptr(kind)
	err := b.invoke(symMemcpy, f, 5)
	putFrame(f)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	return err
}

// MemcpyAsync calls aclrtMemcpyAsync. Host memory must be pinned
// (MallocHost) or registered and stay valid until the stream reaches the
// copy.
func (b *Backend) MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind, st acl.StreamHandle) error {
	escape(dst)
	escape(src)
	f := getFrame()
	f.args[0], f.args[1], f.args[2], f.args[3], f.args[4], f.args[5] =
		uintptr(dst), destMax, uintptr(src), count, uintptr(kind), uintptr(st)
	err := b.invoke(symMemcpyAsync, f, 6)
	putFrame(f)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	return err
}

// Memset calls aclrtMemset.
func (b *Backend) Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error {
	escape(devPtr)
	f := getFrame()
	f.args[0], f.args[1], f.args[2], f.args[3] = uintptr(devPtr), maxCount, uintptr(value), count
	err := b.invoke(symMemset, f, 4)
	putFrame(f)
	runtime.KeepAlive(devPtr)
	return err
}

// MemsetAsync calls aclrtMemsetAsync.
func (b *Backend) MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, st acl.StreamHandle) error {
	escape(devPtr)
	f := getFrame()
	f.args[0], f.args[1], f.args[2], f.args[3], f.args[4] = uintptr(devPtr), maxCount, uintptr(value), count, uintptr(st)
	err := b.invoke(symMemsetAsync, f, 5)
	putFrame(f)
	runtime.KeepAlive(devPtr)
	return err
}

// GetMemInfo calls aclrtGetMemInfo.
func (b *Backend) GetMemInfo(attr acl.MemAttr) (free, total uintptr, err error) {
	f := getFrame()
	f.args[0], f.args[1], f.args[2] = uintptr(attr), f.outp(0), f.outp(1)
	err = b.invoke(symGetMemInfo, f, 3)
	free, total = uintptr(f.out[0]), uintptr(f.out[1])
	putFrame(f)
	if err != nil {
		return 0, 0, err
	}
	return free, total, nil
}

// HostRegister calls aclrtHostRegister and returns the device address of
// the range. The memory must not be Go heap memory: the device keeps using
// it after the call.
func (b *Backend) HostRegister(ptr unsafe.Pointer, size uint64, typ acl.HostRegisterType) (unsafe.Pointer, error) {
	escape(ptr)
	f := getFrame()
	f.args[0], f.args[1], f.args[2], f.args[3] = uintptr(ptr), uintptr(size), uintptr(typ), f.outp(0)
	err := b.invoke(symHostRegister, f, 4)
	p := uintptr(f.out[0])
	putFrame(f)
	runtime.KeepAlive(ptr)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// HostUnregister calls aclrtHostUnregister.
func (b *Backend) HostUnregister(ptr unsafe.Pointer) error {
	escape(ptr)
	err := b.call1(symHostUnregister, uintptr(ptr))
	runtime.KeepAlive(ptr)
	return err
}

// HostRegisterV2 calls aclrtHostRegisterV2.
func (b *Backend) HostRegisterV2(ptr unsafe.Pointer, size uint64, flag acl.HostRegFlag) error {
	escape(ptr)
	f := getFrame()
	f.args[0], f.args[1], f.args[2] = uintptr(ptr), uintptr(size), uintptr(flag)
	err := b.invoke(symHostRegisterV2, f, 3)
	putFrame(f)
	runtime.KeepAlive(ptr)
	return err
}

// HostGetDevicePointer calls aclrtHostGetDevicePointer.
func (b *Backend) HostGetDevicePointer(host unsafe.Pointer, flag uint32) (unsafe.Pointer, error) {
	escape(host)
	f := getFrame()
	f.args[0], f.args[1], f.args[2] = uintptr(host), f.outp(0), uintptr(flag)
	err := b.invoke(symHostGetDevicePointer, f, 3)
	p := uintptr(f.out[0])
	putFrame(f)
	runtime.KeepAlive(host)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}
