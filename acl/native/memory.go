package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

// Malloc calls aclrtMalloc.
func (b *Backend) Malloc(size uintptr, policy acl.MemMallocPolicy) (unsafe.Pointer, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = f.Outp(0), size, uintptr(policy)
	err := b.invoke(symMalloc, f, 3)
	p := uintptr(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// Free calls aclrtFree.
func (b *Backend) Free(devPtr unsafe.Pointer) error {
	dl.Escape(devPtr)
	err := b.call1(symFree, uintptr(devPtr))
	runtime.KeepAlive(devPtr)
	return err
}

// MallocHost calls aclrtMallocHost.
func (b *Backend) MallocHost(size uintptr) (unsafe.Pointer, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = f.Outp(0), size
	err := b.invoke(symMallocHost, f, 2)
	p := uintptr(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// FreeHost calls aclrtFreeHost.
func (b *Backend) FreeHost(hostPtr unsafe.Pointer) error {
	dl.Escape(hostPtr)
	err := b.call1(symFreeHost, uintptr(hostPtr))
	runtime.KeepAlive(hostPtr)
	return err
}

// Memcpy calls aclrtMemcpy. Go memory may be passed for the host side: the
// copy is complete when the call returns.
func (b *Backend) Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	dl.Escape(dst)
	dl.Escape(src)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3], f.Args[4] = uintptr(dst), destMax, uintptr(src), count, uintptr(kind)
	err := b.invoke(symMemcpy, f, 5)
	dl.PutFrame(f)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	return err
}

// MemcpyAsync calls aclrtMemcpyAsync. Host memory must be pinned
// (MallocHost) or registered and stay valid until the stream reaches the
// copy.
func (b *Backend) MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind, st acl.StreamHandle) error {
	dl.Escape(dst)
	dl.Escape(src)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3], f.Args[4], f.Args[5] =
		uintptr(dst), destMax, uintptr(src), count, uintptr(kind), uintptr(st)
	err := b.invoke(symMemcpyAsync, f, 6)
	dl.PutFrame(f)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	return err
}

// Memset calls aclrtMemset.
func (b *Backend) Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error {
	dl.Escape(devPtr)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(devPtr), maxCount, uintptr(value), count
	err := b.invoke(symMemset, f, 4)
	dl.PutFrame(f)
	runtime.KeepAlive(devPtr)
	return err
}

// MemsetAsync calls aclrtMemsetAsync.
func (b *Backend) MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, st acl.StreamHandle) error {
	dl.Escape(devPtr)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3], f.Args[4] = uintptr(devPtr), maxCount, uintptr(value), count, uintptr(st)
	err := b.invoke(symMemsetAsync, f, 5)
	dl.PutFrame(f)
	runtime.KeepAlive(devPtr)
	return err
}

// GetMemInfo calls aclrtGetMemInfo.
func (b *Backend) GetMemInfo(attr acl.MemAttr) (free, total uintptr, err error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(attr), f.Outp(0), f.Outp(1)
	err = b.invoke(symGetMemInfo, f, 3)
	free, total = uintptr(f.Out[0]), uintptr(f.Out[1])
	dl.PutFrame(f)
	if err != nil {
		return 0, 0, err
	}
	return free, total, nil
}

// HostRegister calls aclrtHostRegister and returns the device address of
// the range. The memory must not be Go heap memory: the device keeps using
// it after the call.
func (b *Backend) HostRegister(ptr unsafe.Pointer, size uint64, typ acl.HostRegisterType) (unsafe.Pointer, error) {
	dl.Escape(ptr)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(ptr), uintptr(size), uintptr(typ), f.Outp(0)
	err := b.invoke(symHostRegister, f, 4)
	p := uintptr(f.Out[0])
	dl.PutFrame(f)
	runtime.KeepAlive(ptr)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}

// HostUnregister calls aclrtHostUnregister.
func (b *Backend) HostUnregister(ptr unsafe.Pointer) error {
	dl.Escape(ptr)
	err := b.call1(symHostUnregister, uintptr(ptr))
	runtime.KeepAlive(ptr)
	return err
}

// HostRegisterV2 calls aclrtHostRegisterV2.
func (b *Backend) HostRegisterV2(ptr unsafe.Pointer, size uint64, flag acl.HostRegFlag) error {
	dl.Escape(ptr)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(ptr), uintptr(size), uintptr(flag)
	err := b.invoke(symHostRegisterV2, f, 3)
	dl.PutFrame(f)
	runtime.KeepAlive(ptr)
	return err
}

// HostGetDevicePointer calls aclrtHostGetDevicePointer.
func (b *Backend) HostGetDevicePointer(host unsafe.Pointer, flag uint32) (unsafe.Pointer, error) {
	dl.Escape(host)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(host), f.Outp(0), uintptr(flag)
	err := b.invoke(symHostGetDevicePointer, f, 3)
	p := uintptr(f.Out[0])
	dl.PutFrame(f)
	runtime.KeepAlive(host)
	if err != nil {
		return nil, err
	}
	return ptrOf(p), nil
}
