package native

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Malloc calls aclrtMalloc.
func (b *Backend) Malloc(size uintptr, policy acl.MemMallocPolicy) (unsafe.Pointer, error) {
	s := getScratch()
	err := b.call(symMalloc, uintptr(unsafe.Pointer(&s.a)), size, uintptr(policy))
	p := s.a
	scratchPool.Put(s)
	if err != nil {
		return nil, err
	}
	return ptrOf(uintptr(p)), nil
}

// Free calls aclrtFree.
func (b *Backend) Free(devPtr unsafe.Pointer) error {
	return b.call(symFree, uintptr(devPtr))
}

// MallocHost calls aclrtMallocHost.
func (b *Backend) MallocHost(size uintptr) (unsafe.Pointer, error) {
	s := getScratch()
	err := b.call(symMallocHost, uintptr(unsafe.Pointer(&s.a)), size)
	p := s.a
	scratchPool.Put(s)
	if err != nil {
		return nil, err
	}
	return ptrOf(uintptr(p)), nil
}

// FreeHost calls aclrtFreeHost.
func (b *Backend) FreeHost(hostPtr unsafe.Pointer) error {
	return b.call(symFreeHost, uintptr(hostPtr))
}

// Memcpy calls aclrtMemcpy. Go memory may be passed for the host side: the
// copy is complete when the call returns.
func (b *Backend) Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind) error {
	return b.call(symMemcpy, uintptr(dst), destMax, uintptr(src), count, uintptr(kind))
}

// MemcpyAsync calls aclrtMemcpyAsync. Host memory must be pinned
// (MallocHost) or registered and stay valid until the stream reaches the
// copy.
func (b *Backend) MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind acl.MemcpyKind, st acl.StreamHandle) error {
	return b.call(symMemcpyAsync, uintptr(dst), destMax, uintptr(src), count, uintptr(kind), uintptr(st))
}

// Memset calls aclrtMemset.
func (b *Backend) Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error {
	return b.call(symMemset, uintptr(devPtr), maxCount, uintptr(value), count)
}

// MemsetAsync calls aclrtMemsetAsync.
func (b *Backend) MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, st acl.StreamHandle) error {
	return b.call(symMemsetAsync, uintptr(devPtr), maxCount, uintptr(value), count, uintptr(st))
}

// GetMemInfo calls aclrtGetMemInfo.
func (b *Backend) GetMemInfo(attr acl.MemAttr) (free, total uintptr, err error) {
	s := getScratch()
	err = b.call(symGetMemInfo, uintptr(attr), uintptr(unsafe.Pointer(&s.a)), uintptr(unsafe.Pointer(&s.b)))
	free, total = uintptr(s.a), uintptr(s.b)
	scratchPool.Put(s)
	if err != nil {
		return 0, 0, err
	}
	return free, total, nil
}

// HostRegister calls aclrtHostRegister and returns the device address of
// the range. The memory must not be Go heap memory: the device keeps using
// it after the call.
func (b *Backend) HostRegister(ptr unsafe.Pointer, size uint64, typ acl.HostRegisterType) (unsafe.Pointer, error) {
	s := getScratch()
	err := b.call(symHostRegister, uintptr(ptr), uintptr(size), uintptr(typ), uintptr(unsafe.Pointer(&s.a)))
	p := s.a
	scratchPool.Put(s)
	if err != nil {
		return nil, err
	}
	return ptrOf(uintptr(p)), nil
}

// HostUnregister calls aclrtHostUnregister.
func (b *Backend) HostUnregister(ptr unsafe.Pointer) error {
	return b.call(symHostUnregister, uintptr(ptr))
}

// HostRegisterV2 calls aclrtHostRegisterV2.
func (b *Backend) HostRegisterV2(ptr unsafe.Pointer, size uint64, flag acl.HostRegFlag) error {
	return b.call(symHostRegisterV2, uintptr(ptr), uintptr(size), uintptr(flag))
}

// HostGetDevicePointer calls aclrtHostGetDevicePointer.
func (b *Backend) HostGetDevicePointer(host unsafe.Pointer, flag uint32) (unsafe.Pointer, error) {
	s := getScratch()
	err := b.call(symHostGetDevicePointer, uintptr(host), uintptr(unsafe.Pointer(&s.a)), uintptr(flag))
	p := s.a
	scratchPool.Put(s)
	if err != nil {
		return nil, err
	}
	return ptrOf(uintptr(p)), nil
}
