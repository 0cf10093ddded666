package fallback

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// dataBuffer is an aclDataBuffer: an address and a size. The fields are
// guarded by modelTable.mu.
type dataBuffer struct {
	data unsafe.Pointer
	size uintptr
}

// dataset is an aclmdlDataset: an ordered list of data buffers, held by
// handle as in C (destroying a buffer does not remove it from a dataset;
// executing with it then fails). Guarded by modelTable.mu.
type dataset struct {
	bufs  []acl.DataBufferHandle
	descs []*dsDesc // per entry: its tensor description (model_dynamic.go), nil for none
}

// CreateDataBuffer is aclCreateDataBuffer. A null address is allowed (with
// size 0 it asks Execute to allocate an output).
func (n *NPU) CreateDataBuffer(data unsafe.Pointer, size uintptr) (acl.DataBufferHandle, error) {
	if n == nil {
		return 0, acl.NilHandle("aclCreateDataBuffer", "fallback NPU")
	}
	return createHostObject(n, "aclCreateDataBuffer", &n.models.bufs, &dataBuffer{data: data, size: size})
}

// DestroyDataBuffer is aclDestroyDataBuffer; the memory it points at is
// the caller's and is not freed.
func (n *NPU) DestroyDataBuffer(buf acl.DataBufferHandle) error {
	if n == nil {
		return acl.NilHandle("aclDestroyDataBuffer", "fallback NPU")
	}
	return destroyHostObject(n, "aclDestroyDataBuffer", "data buffer", &n.models.bufs, buf)
}

// UpdateDataBuffer is aclUpdateDataBuffer: it points the buffer at new
// memory, the cheap way to swap IO buffers between executions.
func (n *NPU) UpdateDataBuffer(buf acl.DataBufferHandle, data unsafe.Pointer, size uintptr) error {
	if n == nil {
		return acl.NilHandle("aclUpdateDataBuffer", "fallback NPU")
	}
	return changeHostObject(n, "aclUpdateDataBuffer", "data buffer", &n.models.bufs, buf, func(_ *call, b *dataBuffer) error {
		b.data, b.size = data, size
		return nil
	})
}

// GetDataBufferAddr is aclGetDataBufferAddr; nil for a bad handle.
func (n *NPU) GetDataBufferAddr(buf acl.DataBufferHandle) unsafe.Pointer {
	if n == nil {
		return nil
	}
	return readHostObject(n, &n.models.bufs, buf, func(b *dataBuffer) unsafe.Pointer { return b.data })
}

// GetDataBufferSizeV2 is aclGetDataBufferSizeV2; 0 for a bad handle.
func (n *NPU) GetDataBufferSizeV2(buf acl.DataBufferHandle) uintptr {
	if n == nil {
		return 0
	}
	return readHostObject(n, &n.models.bufs, buf, func(b *dataBuffer) uintptr { return b.size })
}

// CreateDataset is aclmdlCreateDataset.
func (n *NPU) CreateDataset() (acl.DatasetHandle, error) {
	if n == nil {
		return 0, acl.NilHandle("aclmdlCreateDataset", "fallback NPU")
	}
	return createHostObject(n, "aclmdlCreateDataset", &n.models.sets, &dataset{})
}

// DestroyDataset is aclmdlDestroyDataset; its data buffers stay alive (the
// caller destroys them).
func (n *NPU) DestroyDataset(ds acl.DatasetHandle) error {
	if n == nil {
		return acl.NilHandle("aclmdlDestroyDataset", "fallback NPU")
	}
	return changeHostObject(n, "aclmdlDestroyDataset", "dataset", &n.models.sets, ds, func(_ *call, s *dataset) error {
		n.dropDescsLocked(s) // the descriptions are the dataset's
		delete(n.models.sets, ds)
		return nil
	})
}

// AddDatasetBuffer is aclmdlAddDatasetBuffer.
func (n *NPU) AddDatasetBuffer(ds acl.DatasetHandle, buf acl.DataBufferHandle) error {
	if n == nil {
		return acl.NilHandle("aclmdlAddDatasetBuffer", "fallback NPU")
	}
	return changeHostObject(n, "aclmdlAddDatasetBuffer", "dataset", &n.models.sets, ds, func(c *call, s *dataset) error {
		if n.models.bufs[buf] == nil {
			return c.badHandle("data buffer", uintptr(buf))
		}
		s.bufs = append(s.bufs, buf)
		return nil
	})
}

// GetDatasetNumBuffers is aclmdlGetDatasetNumBuffers; 0 for a bad handle.
func (n *NPU) GetDatasetNumBuffers(ds acl.DatasetHandle) uintptr {
	if n == nil {
		return 0
	}
	return readHostObject(n, &n.models.sets, ds, func(s *dataset) uintptr { return uintptr(len(s.bufs)) })
}

// GetDatasetBuffer is aclmdlGetDatasetBuffer; 0 (NULL) for a bad handle or
// index.
func (n *NPU) GetDatasetBuffer(ds acl.DatasetHandle, i uintptr) acl.DataBufferHandle {
	if n == nil {
		return 0
	}
	return readHostObject(n, &n.models.sets, ds, func(s *dataset) acl.DataBufferHandle {
		if i < uintptr(len(s.bufs)) {
			return s.bufs[i]
		}
		return 0
	})
}
