package acl

import (
	"errors"
	"sync"
	"unsafe"
)

// Memory is memory allocated through the idiomatic layer that a model can
// read or write: a *DeviceBuffer or a *HostBuffer (pinned host memory). A
// DataBuffer made from a Memory keeps it in use for the duration of every
// execution that reads it, so closing the Memory waits for the queued runs.
// The interface is closed to other implementations; both are safe for
// concurrent use.
type Memory interface {
	// Ptr returns the address of the memory, nil after Close.
	Ptr() unsafe.Pointer
	// Size returns the size in bytes.
	Size() uintptr
	memory() *mem
}

func (m *mem) memory() *mem { return m }

// memoryBase returns what a Memory shares, nil for a nil Memory (typed or
// not).
func memoryBase(mm Memory) *mem {
	if mm == nil {
		return nil
	}
	switch v := mm.(type) {
	case *DeviceBuffer:
		if v == nil {
			return nil
		}
	case *HostBuffer:
		if v == nil {
			return nil
		}
	}
	return mm.memory()
}

// modelBackend returns the Device's backend as a ModelBackend, or an
// ACL_ERROR_API_NOT_SUPPORT error (matching ErrNotSupported) when the
// backend has no model API.
func (d *Device) modelBackend(op string) (ModelBackend, error) {
	if d == nil {
		return nil, nilError(op)
	}
	mb, ok := d.rt.b.(ModelBackend)
	if !ok {
		return nil, Errorf(op, CodeAPINotSupport, "backend %q does not implement the model API", d.rt.b.Name())
	}
	return mb, nil
}

// DataBuffer is an aclDataBuffer: the address and size of one model input
// or output. It is made from a Memory (NewDataBuffer) or from a raw address
// (NewDataBufferPtr), and can be pointed elsewhere with Update
// (aclUpdateDataBuffer) without being rebuilt.
//
// Added to a Dataset, the buffer belongs to it: Dataset.Close destroys it
// and the buffer's own Close does nothing.
//
// A DataBuffer is safe for concurrent use: an Update waits for executions
// in progress that read the buffer's Dataset, so every execution sees
// either the old or the new address.
type DataBuffer struct {
	res
	dev *Device
	mb  ModelBackend
	h   DataBufferHandle

	mu    sync.Mutex // guards the fields below; owner is set once
	owner *Dataset
	ptr   unsafe.Pointer
	size  uintptr
	mm    Memory // the Memory the buffer refers to; nil for a raw address
}

func (b *DataBuffer) rank() int { return 1 }

func (b *DataBuffer) r() *res {
	if b == nil {
		return nil
	}
	return &b.res
}

// NewDataBuffer creates a data buffer that covers all of m
// (aclCreateDataBuffer). m must belong to the Device.
func (d *Device) NewDataBuffer(m Memory) (*DataBuffer, error) {
	const op = "Device.NewDataBuffer"
	base := memoryBase(m)
	if base == nil {
		return nil, nilError(op)
	}
	if base.dev != d {
		return nil, Errorf(op, CodeInvalidParam, "the %s belongs to another Device", base.kind)
	}
	h, err := acquire(op, base.r())
	if err != nil {
		return nil, err
	}
	defer h.release()
	return d.newDataBuffer(op, base.ptr, base.size, m)
}

// NewDataBufferPtr creates a data buffer for size bytes at p
// (aclCreateDataBuffer). The backend keeps p, so it must be device memory
// or pinned or registered host memory, never Go-heap memory, and it must
// outlive every execution that uses the buffer. A nil p with size 0 asks
// the runtime to allocate an output at Model.Execute, as in ACL;
// Model.ExecuteAsync refuses it, as aclmdlExecuteAsync does.
func (d *Device) NewDataBufferPtr(p unsafe.Pointer, size uintptr) (*DataBuffer, error) {
	return d.newDataBuffer("Device.NewDataBufferPtr", p, size, nil)
}

func (d *Device) newDataBuffer(op string, p unsafe.Pointer, size uintptr, m Memory) (*DataBuffer, error) {
	mb, err := d.modelBackend(op)
	if err != nil {
		return nil, err
	}
	c, err := d.adopt(op, func() (child, error) {
		h, err := mb.CreateDataBuffer(p, size)
		if err != nil {
			return nil, err
		}
		return &DataBuffer{res: newRes("data buffer"), dev: d, mb: mb, h: h, ptr: p, size: size, mm: m}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*DataBuffer), nil
}

// Handle returns the backend's data buffer handle, for raw calls; 0 after
// Close.
func (b *DataBuffer) Handle() DataBufferHandle {
	if b == nil || b.isClosed() {
		return 0
	}
	return b.h
}

// Addr returns the address the buffer points at now. For an output made
// with (nil, 0), which the runtime allocates at execution (aclmdlExecute),
// it is the runtime's allocation once an execution has run; the caller owns
// that memory and frees it with Device.Free.
func (b *DataBuffer) Addr() unsafe.Pointer {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refreshLocked()
	return b.ptr
}

// Size returns the size in bytes the buffer declares now (see Addr for
// outputs the runtime allocates).
func (b *DataBuffer) Size() uintptr {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refreshLocked()
	return b.size
}

// refreshLocked reads back a (nil, 0) buffer from the backend, where an
// execution may have put the runtime's allocation. b.mu is held.
func (b *DataBuffer) refreshLocked() {
	if b.ptr != nil || b.size != 0 || b.h == 0 || b.isClosed() {
		return
	}
	if p := b.mb.GetDataBufferAddr(b.h); p != nil {
		b.ptr, b.size = p, b.mb.GetDataBufferSizeV2(b.h)
	}
}

// Memory returns the Memory the buffer refers to, nil when it was made
// from (or updated to) a raw address.
func (b *DataBuffer) Memory() Memory {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mm
}

// Update points the buffer at all of m (aclUpdateDataBuffer). m must
// belong to the buffer's Device.
func (b *DataBuffer) Update(m Memory) error {
	const op = "DataBuffer.Update"
	if memoryBase(m) == nil {
		return nilError(op)
	}
	return b.update(op, nil, 0, m)
}

// UpdatePtr points the buffer at size bytes at p (aclUpdateDataBuffer),
// with the rules of NewDataBufferPtr.
func (b *DataBuffer) UpdatePtr(p unsafe.Pointer, size uintptr) error {
	return b.update("DataBuffer.UpdatePtr", p, size, nil)
}

// update points the buffer at m when m is not nil, at (p, size) otherwise.
func (b *DataBuffer) update(op string, p unsafe.Pointer, size uintptr, m Memory) error {
	if b == nil {
		return nilError(op)
	}
	// Executions read the address under the owning Dataset's content lock;
	// taking it exclusively, before any handle, makes the update atomic for
	// them and keeps the lock order of an execution (content, then handles).
	owner := b.lockOwner()
	if owner != nil {
		defer owner.cmu.Unlock()
	}
	base := memoryBase(m)
	if base != nil && base.dev != b.dev {
		return Errorf(op, CodeInvalidParam, "the %s belongs to another Device", base.kind)
	}
	rs := []*res{b.r()}
	if base != nil {
		rs = append(rs, base.r())
	}
	h, err := acquire(op, rs...)
	if err != nil {
		return err
	}
	defer h.release()
	if base != nil {
		p, size = base.ptr, base.size
	}
	if owner != nil && owner.pinned.Load() {
		// A pinned execution reads the dataset without its content
		// lock: invalidate the pins before the address changes.
		b.dev.pins.bump()
	}
	return b.dev.call(op, func() error {
		if err := b.mb.UpdateDataBuffer(b.h, p, size); err != nil {
			return err
		}
		b.mu.Lock()
		b.ptr, b.size, b.mm = p, size, m
		adopted := owner == nil && b.owner != nil
		b.mu.Unlock()
		if adopted {
			// Added to a dataset during the update, without its
			// content lock: a pin taken meanwhile may name the old
			// memory.
			b.dev.pins.bump()
		}
		return nil
	})
}

// lockOwner takes the content lock of the Dataset that owns b, and returns
// that Dataset (nil, locking nothing, when b belongs to none). The owner is
// read again under the lock: an Add may have given b one meanwhile (it is
// set once, so this repeats at most once).
func (b *DataBuffer) lockOwner() *Dataset {
	for {
		b.mu.Lock()
		owner := b.owner
		b.mu.Unlock()
		if owner != nil {
			owner.cmu.Lock()
		}
		b.mu.Lock()
		same := b.owner == owner
		b.mu.Unlock()
		if same {
			return owner
		}
		if owner != nil {
			owner.cmu.Unlock()
		}
	}
}

// Close destroys the buffer (aclDestroyDataBuffer) unless a Dataset owns
// it. Close is idempotent: later calls return nil.
func (b *DataBuffer) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	owned := b.owner != nil
	b.mu.Unlock()
	if owned || !b.markClosed() {
		return nil
	}
	return b.dev.releaseChild(b, b.destroy)
}

func (b *DataBuffer) retire() { b.markClosed() }

func (b *DataBuffer) destroy() error { return b.mb.DestroyDataBuffer(b.h) }

// Dataset is an aclmdlDataset: the ordered data buffers of a model's inputs
// or of its outputs. It owns the buffers added to it.
//
// A Dataset is safe for concurrent use. Several executions may read one
// Dataset at once (one model's input dataset shared by several models);
// Add and the Update of a member buffer wait for them. Close the Dataset
// only after the executions queued with it have completed (Model.Wait).
type Dataset struct {
	res
	dev *Device
	mb  ModelBackend
	h   DatasetHandle

	cmu  sync.RWMutex // content: held shared by executions, exclusively by Add and Update
	bufs []*DataBuffer
}

// hasHost reports whether a buffer of the dataset refers to a *HostBuffer,
// which a Model stages through device memory (model_stage.go). The caller
// holds ds.cmu.
func (ds *Dataset) hasHost() bool {
	for _, b := range ds.bufs {
		b.mu.Lock()
		_, host := b.mm.(*HostBuffer)
		b.mu.Unlock()
		if host {
			return true
		}
	}
	return false
}

func (ds *Dataset) rank() int { return 1 }

func (ds *Dataset) r() *res {
	if ds == nil {
		return nil
	}
	return &ds.res
}

// NewDataset creates an empty dataset (aclmdlCreateDataset).
func (d *Device) NewDataset() (*Dataset, error) {
	const op = "Device.NewDataset"
	mb, err := d.modelBackend(op)
	if err != nil {
		return nil, err
	}
	c, err := d.adopt(op, func() (child, error) {
		h, err := mb.CreateDataset()
		if err != nil {
			return nil, err
		}
		return &Dataset{res: d.pinnable("dataset"), dev: d, mb: mb, h: h}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*Dataset), nil
}

// NewDatasetOf creates a dataset with one data buffer per Memory, in
// order: the usual way to describe a model's inputs or outputs.
func (d *Device) NewDatasetOf(mems ...Memory) (*Dataset, error) {
	ds, err := d.NewDataset()
	if err != nil {
		return nil, err
	}
	for _, m := range mems {
		b, err := d.NewDataBuffer(m)
		if err == nil {
			if err = ds.Add(b); err != nil {
				err = errors.Join(err, b.Close())
			}
		}
		if err != nil {
			return nil, errors.Join(err, ds.Close())
		}
	}
	return ds, nil
}

// Handle returns the backend's dataset handle, for raw calls; 0 after
// Close.
func (ds *Dataset) Handle() DatasetHandle {
	if ds == nil || ds.isClosed() {
		return 0
	}
	return ds.h
}

// Add appends b to the dataset (aclmdlAddDatasetBuffer); the dataset then
// owns b. b must come from the same Device and belong to no dataset yet.
func (ds *Dataset) Add(b *DataBuffer) error {
	const op = "Dataset.Add"
	if ds == nil || b == nil {
		return nilError(op)
	}
	if b.dev != ds.dev {
		return Errorf(op, CodeInvalidParam, "the data buffer belongs to another Device")
	}
	ds.cmu.Lock()
	defer ds.cmu.Unlock()
	h, err := acquire(op, ds.r(), b.r())
	if err != nil {
		return err
	}
	defer h.release()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owner != nil {
		return Errorf(op, CodeInvalidParam, "the data buffer already belongs to a dataset")
	}
	// A pinned execution reads the dataset without its content lock.
	if ds.pinned.Load() {
		ds.dev.pins.bump()
	}
	if err := ds.dev.call(op, func() error { return ds.mb.AddDatasetBuffer(ds.h, b.h) }); err != nil {
		return err
	}
	b.owner = ds
	ds.bufs = append(ds.bufs, b)
	// The dataset now releases b; the Device no longer needs to.
	ds.dev.kmu.Lock()
	delete(ds.dev.kids, b)
	ds.dev.kmu.Unlock()
	return nil
}

// Len returns the number of buffers in the dataset.
func (ds *Dataset) Len() int {
	if ds == nil {
		return 0
	}
	ds.cmu.RLock()
	defer ds.cmu.RUnlock()
	return len(ds.bufs)
}

// Buffer returns buffer i, nil when i is out of range.
func (ds *Dataset) Buffer(i int) *DataBuffer {
	if ds == nil {
		return nil
	}
	ds.cmu.RLock()
	defer ds.cmu.RUnlock()
	if i < 0 || i >= len(ds.bufs) {
		return nil
	}
	return ds.bufs[i]
}

// Close destroys the dataset (aclmdlDestroyDataset) and the data buffers it
// owns (aclDestroyDataBuffer). Close is idempotent: later calls return nil.
func (ds *Dataset) Close() error {
	if ds == nil || !ds.markClosed() {
		return nil
	}
	return ds.dev.releaseChild(ds, ds.destroy)
}

func (ds *Dataset) retire() { ds.markClosed() }

func (ds *Dataset) destroy() error {
	ds.cmu.Lock()
	bufs := ds.bufs
	ds.bufs = nil
	ds.cmu.Unlock()
	errs := []error{ds.mb.DestroyDataset(ds.h)}
	for _, b := range bufs {
		b.markClosed()
		errs = append(errs, b.destroy())
	}
	return errors.Join(errs...)
}

// lockAll takes a variable set of handles shared in creation order, like
// acquire, for an execution: the model, the stream, both datasets and the
// memories their buffers refer to. It sorts rs in place, drops duplicates
// and returns the set it locked; it fails, holding nothing, if any handle
// is closed. rs is normally backed by an array on the caller's stack, so
// taking the set does not allocate.
func lockAll(op string, rs []*res) ([]*res, error) {
	// Insertion sort: the set is small, and sort.Slice would allocate.
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].seq < rs[j-1].seq; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	k := 0
	for i, r := range rs {
		if i == 0 || r != rs[k-1] {
			rs[k] = r
			k++
		}
	}
	rs = rs[:k]
	for i, r := range rs {
		r.mu.RLock()
		if r.closed {
			r.mu.RUnlock()
			unlockAll(rs[:i])
			return nil, closedError(op, r.kind)
		}
	}
	return rs, nil
}

func unlockAll(rs []*res) {
	for _, r := range rs {
		r.mu.RUnlock()
	}
}

// memories appends the memories the dataset's buffers refer to. The caller
// holds ds.cmu.
func (ds *Dataset) memories(ms []*mem) []*mem {
	for _, b := range ds.bufs {
		b.mu.Lock()
		if m := memoryBase(b.mm); m != nil {
			ms = append(ms, m)
		}
		b.mu.Unlock()
	}
	return ms
}
