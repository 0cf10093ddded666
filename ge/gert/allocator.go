package gert

import (
	"fmt"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Allocator gives memory of one placement to an executor, for outputs the
// caller leaves empty. Data it returns is owned: it has a manager, and the
// tensor that receives it frees it.
type Allocator interface {
	// Placement is where the allocator's memory lives.
	Placement() TensorPlacement
	// Malloc returns size bytes of owned data at Placement.
	Malloc(size uint64) (*TensorData, error)
}

// DeviceAllocator allocates device memory (OnDeviceHbm) of one device with
// aclrtMalloc; freeing the data frees the memory.
type DeviceAllocator struct {
	Dev    *acl.Device
	Policy acl.MemMallocPolicy
}

// Placement returns OnDeviceHbm.
func (a *DeviceAllocator) Placement() TensorPlacement { return OnDeviceHbm }

// Malloc allocates size bytes of device memory.
func (a *DeviceAllocator) Malloc(size uint64) (*TensorData, error) {
	if a == nil || a.Dev == nil {
		return nil, fmt.Errorf("gert: device allocator without a device")
	}
	buf, err := a.Dev.Malloc(uintptr(size), a.Policy)
	if err != nil {
		return nil, err
	}
	m := NewRefCounted(func(unsafe.Pointer) error { return buf.Close() })
	return NewOwnedTensorData(buf.Ptr(), size, OnDeviceHbm, m)
}

// HostAllocator allocates page-locked host memory (OnHost) with
// aclrtMallocHost; freeing the data frees the memory.
type HostAllocator struct {
	Dev *acl.Device
}

// Placement returns OnHost.
func (a *HostAllocator) Placement() TensorPlacement { return OnHost }

// Malloc allocates size bytes of page-locked host memory.
func (a *HostAllocator) Malloc(size uint64) (*TensorData, error) {
	if a == nil || a.Dev == nil {
		return nil, fmt.Errorf("gert: host allocator without a device")
	}
	buf, err := a.Dev.MallocHost(uintptr(size))
	if err != nil {
		return nil, err
	}
	m := NewRefCounted(func(unsafe.Pointer) error { return buf.Close() })
	return NewOwnedTensorData(buf.Ptr(), size, OnHost, m)
}
