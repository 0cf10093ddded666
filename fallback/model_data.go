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
	bufs []acl.DataBufferHandle
}

// hostCall admits a call on host-side model objects (data buffers, datasets,
// descriptions, config handles): like the C library, these need neither
// aclInit nor a context, only an open NPU. On success the caller must
// defer n.exit().
func (n *NPU) hostCall(op string) (call, error) {
	c := call{n: n, op: op, tid: -1}
	if !n.enter() {
		return c, c.closedErr()
	}
	return c, nil
}

// newHandle returns a fresh handle from the NPU's shared handle sequence,
// so a handle of one kind is never valid as another.
func (n *NPU) newHandle() uintptr {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.handle()
}

// CreateDataBuffer is aclCreateDataBuffer. A null address is allowed (with
// size 0 it asks Execute to allocate an output).
func (n *NPU) CreateDataBuffer(data unsafe.Pointer, size uintptr) (acl.DataBufferHandle, error) {
	_, err := n.hostCall("aclCreateDataBuffer")
	if err != nil {
		return 0, err
	}
	defer n.exit()
	h := acl.DataBufferHandle(n.newHandle())
	t := &n.models
	t.mu.Lock()
	t.initLocked()
	t.bufs[h] = &dataBuffer{data: data, size: size}
	t.mu.Unlock()
	return h, nil
}

// DestroyDataBuffer is aclDestroyDataBuffer; the memory it points at is
// the caller's and is not freed.
func (n *NPU) DestroyDataBuffer(buf acl.DataBufferHandle) error {
	c, err := n.hostCall("aclDestroyDataBuffer")
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bufs[buf] == nil {
		return c.badHandle("data buffer", uintptr(buf))
	}
	delete(t.bufs, buf)
	return nil
}

// UpdateDataBuffer is aclUpdateDataBuffer: it points the buffer at new
// memory, the cheap way to swap IO buffers between executions.
func (n *NPU) UpdateDataBuffer(buf acl.DataBufferHandle, data unsafe.Pointer, size uintptr) error {
	c, err := n.hostCall("aclUpdateDataBuffer")
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bufs[buf]
	if b == nil {
		return c.badHandle("data buffer", uintptr(buf))
	}
	b.data, b.size = data, size
	return nil
}

// GetDataBufferAddr is aclGetDataBufferAddr; nil for a bad handle.
func (n *NPU) GetDataBufferAddr(buf acl.DataBufferHandle) unsafe.Pointer {
	if !n.enter() {
		return nil
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	if b := t.bufs[buf]; b != nil {
		return b.data
	}
	return nil
}

// GetDataBufferSizeV2 is aclGetDataBufferSizeV2; 0 for a bad handle.
func (n *NPU) GetDataBufferSizeV2(buf acl.DataBufferHandle) uintptr {
	if !n.enter() {
		return 0
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	if b := t.bufs[buf]; b != nil {
		return b.size
	}
	return 0
}

// CreateDataset is aclmdlCreateDataset.
func (n *NPU) CreateDataset() (acl.DatasetHandle, error) {
	_, err := n.hostCall("aclmdlCreateDataset")
	if err != nil {
		return 0, err
	}
	defer n.exit()
	h := acl.DatasetHandle(n.newHandle())
	t := &n.models
	t.mu.Lock()
	t.initLocked()
	t.sets[h] = &dataset{}
	t.mu.Unlock()
	return h, nil
}

// DestroyDataset is aclmdlDestroyDataset; its data buffers stay alive (the
// caller destroys them).
func (n *NPU) DestroyDataset(ds acl.DatasetHandle) error {
	c, err := n.hostCall("aclmdlDestroyDataset")
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sets[ds] == nil {
		return c.badHandle("dataset", uintptr(ds))
	}
	delete(t.sets, ds)
	return nil
}

// AddDatasetBuffer is aclmdlAddDatasetBuffer.
func (n *NPU) AddDatasetBuffer(ds acl.DatasetHandle, buf acl.DataBufferHandle) error {
	c, err := n.hostCall("aclmdlAddDatasetBuffer")
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sets[ds]
	if s == nil {
		return c.badHandle("dataset", uintptr(ds))
	}
	if t.bufs[buf] == nil {
		return c.badHandle("data buffer", uintptr(buf))
	}
	s.bufs = append(s.bufs, buf)
	return nil
}

// GetDatasetNumBuffers is aclmdlGetDatasetNumBuffers; 0 for a bad handle.
func (n *NPU) GetDatasetNumBuffers(ds acl.DatasetHandle) uintptr {
	if !n.enter() {
		return 0
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	if s := t.sets[ds]; s != nil {
		return uintptr(len(s.bufs))
	}
	return 0
}

// GetDatasetBuffer is aclmdlGetDatasetBuffer; 0 (NULL) for a bad handle or
// index.
func (n *NPU) GetDatasetBuffer(ds acl.DatasetHandle, i uintptr) acl.DataBufferHandle {
	if !n.enter() {
		return 0
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	if s := t.sets[ds]; s != nil && i < uintptr(len(s.bufs)) {
		return s.bufs[i]
	}
	return 0
}

// badHandle reports a null or unknown model-API handle: the ACL layer
// checks its arguments, so ACL_ERROR_INVALID_PARAM.
func (c *call) badHandle(kind string, h uintptr) error {
	if h == 0 {
		return c.fail(acl.CodeInvalidParam, "null %s", kind)
	}
	return c.fail(acl.CodeInvalidParam, "%s 0x%x is unknown or destroyed", kind, h)
}
