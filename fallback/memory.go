package fallback

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Malloc is aclrtMalloc: size bytes (the block is rounded up to 512) of the
// current context's device memory, 512-byte aligned. The policy does not
// change where memory comes from; an undefined one is accepted, as the ACL
// layer falls back to the default flags (hicann/runtime
// src/acl/aclrt_impl/memory.cpp:320-339).
func (n *NPU) Malloc(size uintptr, policy acl.MemMallocPolicy) (unsafe.Pointer, error) {
	c, err := n.begin("aclrtMalloc", true)
	if err != nil {
		return nil, err
	}
	defer n.exit()
	if size == 0 {
		return nil, c.fail(acl.CodeInvalidParam, "size is 0")
	}
	return c.allocate(c.ctx.dev.arena, size, callers())
}

// MallocHost is aclrtMallocHost: pinned host memory from the host arena
// (outside the Go heap), usable by asynchronous copies.
func (n *NPU) MallocHost(size uintptr) (unsafe.Pointer, error) {
	c, err := n.begin("aclrtMallocHost", true)
	if err != nil {
		return nil, err
	}
	defer n.exit()
	if size == 0 {
		return nil, c.fail(acl.CodeInvalidParam, "size is 0")
	}
	return c.allocate(c.n.host, size, callers())
}

func (c *call) allocate(a *arena, size uintptr, w where) (unsafe.Pointer, error) {
	n := c.n
	if code := n.faults.next(&n.faults.alloc, acl.CodeRTMemoryAllocation); code != 0 {
		return nil, c.fail(code, "injected fault: allocation of %d bytes on %s refused", size, arenaName(a.dev))
	}
	al := a.allocate(size, w)
	if al == nil {
		used, _, _, largest := a.stats()
		return nil, c.fail(acl.CodeRTMemoryAllocation, "%s cannot allocate %d bytes: %d of %d bytes free, largest free block %d bytes",
			arenaName(a.dev), size, a.size-used, a.size, largest)
	}
	if a.dev < 0 {
		n.ctr.hostAllocs.Add(1)
	} else {
		n.ctr.allocs.Add(1)
	}
	return a.ptr(al), nil
}

// Free is aclrtFree. The pointer must be the start of a live device
// allocation: unknown, freed (double free), interior and host pointers give
// ACL_ERROR_RT_PARAM_INVALID.
func (n *NPU) Free(devPtr unsafe.Pointer) error {
	c, err := n.begin("aclrtFree", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if devPtr == nil {
		return c.fail(acl.CodeInvalidParam, "null pointer")
	}
	addr := uintptr(devPtr)
	a := n.arenaOf(addr)
	if a == nil || a.dev < 0 {
		return c.fail(acl.CodeRTParamInvalid, "0x%x is not device memory (%s)", addr, n.describe(addr))
	}
	if a.releaseAt(addr) == nil {
		return c.fail(acl.CodeRTParamInvalid, "0x%x is not the start of a live allocation on device %d: %s", addr, a.dev, a.explain(addr))
	}
	n.ctr.frees.Add(1)
	return nil
}

// FreeHost is aclrtFreeHost for memory from MallocHost. Host registrations
// inside the freed block are dropped and recorded as leaked.
func (n *NPU) FreeHost(hostPtr unsafe.Pointer) error {
	c, err := n.begin("aclrtFreeHost", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if hostPtr == nil {
		return c.fail(acl.CodeInvalidParam, "null pointer")
	}
	addr := uintptr(hostPtr)
	if !n.host.contains(addr) {
		return c.fail(acl.CodeRTParamInvalid, "0x%x was not allocated by aclrtMallocHost (%s)", addr, n.describe(addr))
	}
	al := n.host.releaseAt(addr)
	if al == nil {
		return c.fail(acl.CodeRTParamInvalid, "0x%x is not the start of a live aclrtMallocHost block: %s", addr, n.host.explain(addr))
	}
	n.dropRegistrations(al.addr, al.size, "aclrtFreeHost")
	n.ctr.hostFrees.Add(1)
	return nil
}

// GetMemInfo is aclrtGetMemInfo for the current context's device. Every
// defined attribute reports the device's one memory pool.
func (n *NPU) GetMemInfo(attr acl.MemAttr) (free, total uintptr, err error) {
	c, err := n.begin("aclrtGetMemInfo", true)
	if err != nil {
		return 0, 0, err
	}
	defer n.exit()
	if !attr.Valid() {
		// hicann/runtime src/runtime/api/impl/api_error.cc:3184-3187
		return 0, 0, c.fail(acl.CodeRTInvalidMemoryType, "memory attribute %d is outside [%d, %d]", int32(attr), int32(acl.DDRMem), int32(acl.MemP2PHuge1G))
	}
	a := c.ctx.dev.arena
	used, _, _, _ := a.stats()
	return a.size - used, a.size, nil
}
