package fallback

import (
	"sync/atomic"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// registration is a host range made device-accessible by HostRegister or
// HostRegisterV2. In this model the device address equals the host
// address.
type registration struct {
	addr, size uintptr
	flags      uint32
	mapped     bool // has a device address (not aclrtHostRegisterV2 PINNED alone)
	where      where
	gone       atomic.Bool
}

// findReg returns the registration containing addr, or nil.
func (n *NPU) findReg(addr uintptr) *registration {
	if n.nregs.Load() == 0 {
		return nil
	}
	n.regMu.RLock()
	_, r, ok := n.regs.floor(uint64(addr))
	n.regMu.RUnlock()
	if !ok || addr-r.addr >= r.size {
		return nil
	}
	return r
}

const registerAlign = 4096

// HostRegister is aclrtHostRegister: ptr must be 4 KiB aligned; the range
// must not overlap a registered one nor device memory. The returned device
// pointer equals ptr.
func (n *NPU) HostRegister(ptr unsafe.Pointer, size uint64, typ acl.HostRegisterType) (unsafe.Pointer, error) {
	c, err := n.begin("aclrtHostRegister", true)
	if err != nil {
		return nil, err
	}
	defer n.exit()
	if ptr == nil {
		return nil, c.fail(acl.CodeInvalidParam, "null pointer") // memory.cpp:492
	}
	if size == 0 {
		return nil, c.fail(acl.CodeInvalidParam, "size is 0") // memory.cpp:495
	}
	if typ&^(acl.HostRegisterIOMemory|acl.HostRegisterReadOnly) != 0 {
		// hicann/runtime src/runtime/api/impl/api_error.cc:1997-2002
		return nil, c.fail(acl.CodeRTFeatureNotSupport, "registration type 0x%x is not supported: valid types combine IOMEMORY (0x4) and READONLY (0x8), or 0", uint32(typ))
	}
	if uintptr(ptr)%registerAlign != 0 {
		// The documentation requires 4 KiB alignment; the check is the
		// driver's (not in the public source), whose invalid value the
		// runtime maps to 107000 (errcode_manage.cc:38).
		return nil, c.fail(acl.CodeRTParamInvalid, "pointer 0x%x is not 4 KiB aligned", uintptr(ptr))
	}
	if err := c.register(ptr, size, uint32(typ), true, callers()); err != nil {
		return nil, err
	}
	return ptr, nil
}

// HostRegisterV2 is aclrtHostRegisterV2: flag is a non-empty combination
// of the ACL_HOST_REG_* bits; the range must not overlap a registered one
// nor device memory.
func (n *NPU) HostRegisterV2(ptr unsafe.Pointer, size uint64, flag acl.HostRegFlag) error {
	c, err := n.begin("aclrtHostRegisterV2", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if ptr == nil {
		return c.fail(acl.CodeInvalidParam, "null pointer") // memory.cpp:504
	}
	if size == 0 {
		return c.fail(acl.CodeInvalidParam, "size is 0") // memory.cpp:505
	}
	const known = acl.HostRegMapped | acl.HostRegIOMemory | acl.HostRegReadOnly | acl.HostRegPinned
	if flag&known == 0 || flag&^known != 0 {
		// hicann/runtime src/runtime/api/impl/api_error.cc:2015-2021
		return c.fail(acl.CodeRTParamInvalid, "flag 0x%x is not an OR combination of MAPPED (0x2), IOMEMORY (0x4), READONLY (0x8) and PINNED (0x10000000)", uint32(flag))
	}
	// MAPPED, IOMEMORY or READONLY map the memory for the device; PINNED
	// alone only pins it (hicann/runtime src/runtime/api/impl/
	// api_impl.cc:2593-2609), so it has no device address.
	mapped := flag&(acl.HostRegMapped|acl.HostRegIOMemory|acl.HostRegReadOnly) != 0
	return c.register(ptr, size, uint32(flag), mapped, callers())
}

func (c *call) register(ptr unsafe.Pointer, size uint64, flags uint32, mapped bool, w where) error {
	n := c.n
	addr := uintptr(ptr)
	switch {
	case ptr == nil:
		return c.fail(acl.CodeInvalidParam, "null pointer")
	case size == 0:
		return c.fail(acl.CodeInvalidParam, "size is 0")
	case uint64(uintptr(size)) != size || addr+uintptr(size) < addr:
		return c.fail(acl.CodeInvalidParam, "range 0x%x+%d wraps the address space", addr, size)
	}
	end := addr + uintptr(size)
	for _, a := range n.arenas {
		if a.dev >= 0 && addr < a.base+a.size && a.base < end {
			return c.fail(acl.CodeRTInvalidMemoryType, "range 0x%x+%d overlaps device %d memory; only host memory can be registered", addr, size, a.dev)
		}
	}
	n.regMu.Lock()
	defer n.regMu.Unlock()
	if _, r, ok := n.regs.floor(uint64(end - 1)); ok && r.addr+r.size > addr {
		return c.fail(acl.CodeHostMemoryAlreadyRegistered, "range 0x%x+%d overlaps registered range 0x%x+%d", addr, size, r.addr, r.size)
	}
	n.regs.insert(uint64(addr), &registration{addr: addr, size: uintptr(size), flags: flags, mapped: mapped, where: w})
	n.nregs.Add(1)
	return nil
}

// HostUnregister is aclrtHostUnregister: ptr must be the start of a
// registered range.
func (n *NPU) HostUnregister(ptr unsafe.Pointer) error {
	c, err := n.begin("aclrtHostUnregister", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if ptr == nil {
		return c.fail(acl.CodeInvalidParam, "null pointer")
	}
	addr := uintptr(ptr)
	n.regMu.Lock()
	defer n.regMu.Unlock()
	r, ok := n.regs.get(uint64(addr))
	if !ok {
		if _, in, ok := n.regs.floor(uint64(addr)); ok && addr-in.addr < in.size {
			return c.fail(acl.CodeHostMemoryNotRegistered, "0x%x points %d bytes into registered range 0x%x+%d; unregister its start", addr, addr-in.addr, in.addr, in.size)
		}
		return c.fail(acl.CodeHostMemoryNotRegistered, "0x%x is not registered", addr)
	}
	r.gone.Store(true)
	n.regs.delete(uint64(addr))
	n.nregs.Add(-1)
	return nil
}

// HostGetDevicePointer is aclrtHostGetDevicePointer: the device address of
// registered host memory (the same address here); flag must be 0.
func (n *NPU) HostGetDevicePointer(host unsafe.Pointer, flag uint32) (unsafe.Pointer, error) {
	c, err := n.begin("aclrtHostGetDevicePointer", true)
	if err != nil {
		return nil, err
	}
	defer n.exit()
	switch {
	case host == nil:
		return nil, c.fail(acl.CodeInvalidParam, "null pointer")
	case flag != 0:
		return nil, c.fail(acl.CodeInvalidParam, "flag must be 0, got %d", flag)
	}
	r := n.findReg(uintptr(host))
	if r == nil {
		// hicann/runtime src/runtime/api/impl/api_impl.cc:2653-2666:
		// RT_ERROR_INVALID_VALUE, 107000.
		return nil, c.fail(acl.CodeRTParamInvalid, "the host pointer 0x%x has not been registered for device address mapping", uintptr(host))
	}
	if !r.mapped {
		// Pinned only: no mapped device pointer (api_impl.cc:2652-2660).
		return nil, c.fail(acl.CodeRTParamInvalid, "the host pointer 0x%x was registered PINNED only, without a device mapping", uintptr(host))
	}
	return host, nil
}

// dropRegistrations removes registrations inside [addr, addr+size) (memory
// being freed), recording them as leaked.
func (n *NPU) dropRegistrations(addr, size uintptr, at string) {
	if n.nregs.Load() == 0 {
		return
	}
	n.regMu.Lock()
	defer n.regMu.Unlock()
	var drop []*registration
	n.regs.each(func(_ uint64, r *registration) bool {
		if r.addr >= addr+size {
			return false
		}
		if r.addr+r.size > addr {
			drop = append(drop, r)
		}
		return true
	})
	for _, r := range drop {
		r.gone.Store(true)
		n.regs.delete(uint64(r.addr))
		n.nregs.Add(-1)
		n.recordLeak(Leak{Kind: LeakRegistration, Device: -1, Addr: r.addr, Size: r.size, Where: r.where.String(), At: at})
	}
}
