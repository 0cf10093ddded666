package acl

import (
	"errors"
	"unsafe"
)

// Model IO must be device memory. The ACL layer hands every data buffer to
// GE as device memory (hicann/ge api/acl/acl_model/model/model.cpp:750,
// 777), so on the device a host buffer is never copied for the caller: the
// model's tasks address it as device memory and fault (docs/misuse.md). A
// Model therefore stages the IO a Dataset gives in pinned host memory
// (*HostBuffer): each such buffer gets a device copy, owned by the Model,
// that the execution uses instead; inputs are copied in before it and
// outputs copied back after it, on the execution's stream for
// ExecuteAsync. Programs that bind host buffers keep working, paying the
// copies the device would otherwise have needed anyway. Raw addresses
// (NewDataBufferPtr) are passed as given.

// stage holds the device copies of the host buffers a Model has run with.
// Guarded by Model.mu.
type stage struct {
	shadow map[*mem]unsafe.Pointer
}

// device returns the device copy of host memory h, allocating it on first
// use. Copies of host buffers closed since are freed first: closing a host
// buffer waited for the streams that used it, so no queued execution still
// needs their copies. The Device's context is current.
func (st *stage) device(b Backend, h *mem) (unsafe.Pointer, error) {
	if p, ok := st.shadow[h]; ok {
		return p, nil
	}
	if st.shadow == nil {
		st.shadow = make(map[*mem]unsafe.Pointer)
	}
	for k, p := range st.shadow {
		if k.isClosed() {
			if err := b.Free(p); err != nil {
				return nil, err
			}
			delete(st.shadow, k)
		}
	}
	p, err := b.Malloc(max(h.size, 1), MemMallocHugeFirst)
	if err != nil {
		return nil, err
	}
	st.shadow[h] = p
	return p, nil
}

// free releases every device copy. The Device's context is current and no
// execution of the Model is queued.
func (st *stage) free(b Backend) error {
	var errs []error
	for k, p := range st.shadow {
		errs = append(errs, b.Free(p))
		delete(st.shadow, k)
	}
	return errors.Join(errs...)
}

// stagedIO is one buffer of a staged execution: the address the backend
// dataset gets and, for a host buffer, the host side of its copy.
type stagedIO struct {
	ptr  unsafe.Pointer
	size uintptr
	host unsafe.Pointer // nil: passed as given
}

// staged runs one execution whose datasets refer to host buffers: run gets
// backend datasets in which those buffers are replaced by their device
// copies. s is the stream of an ExecuteAsync, nil for Execute. The
// datasets' contents are held (exec) and m.mu is held.
func (m *Model) staged(s *Stream, in, out *Dataset, run func(in, out DatasetHandle) error) error {
	return m.dev.bound(func() error {
		b := m.dev.rt.b
		// The device copies are shared by the Model's executions: one
		// queued on another stream must be done with them first (runs on s
		// itself are ordered by s).
		if m.last != nil && (s == nil || m.last != s) {
			if err := m.waitLast(); err != nil {
				return err
			}
		}
		ins, err := m.stageIO(in)
		if err != nil {
			return err
		}
		outs, err := m.stageIO(out)
		if err != nil {
			return err
		}
		copyIO := func(dst, src unsafe.Pointer, n uintptr, kind MemcpyKind) error {
			if n == 0 {
				return nil
			}
			if s != nil {
				return b.MemcpyAsync(dst, n, src, n, kind, s.h)
			}
			return b.Memcpy(dst, n, src, n, kind)
		}
		for _, io := range ins {
			if io.host != nil {
				if err := copyIO(io.ptr, io.host, io.size, MemcpyHostToDevice); err != nil {
					return err
				}
			}
		}
		ih, err := m.backendDataset(ins)
		if err != nil {
			return err
		}
		defer func() { _ = m.destroyDataset(ih) }()
		oh, err := m.backendDataset(outs)
		if err != nil {
			return err
		}
		defer func() { _ = m.destroyDataset(oh) }()
		if err := run(ih, oh); err != nil {
			return err
		}
		for _, io := range outs {
			if io.host != nil {
				if err := copyIO(io.host, io.ptr, io.size, MemcpyDeviceToHost); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// stageIO lists ds's buffers with the device copy of each host buffer.
func (m *Model) stageIO(ds *Dataset) ([]stagedIO, error) {
	ios := make([]stagedIO, len(ds.bufs))
	for i, db := range ds.bufs {
		db.mu.Lock()
		p, size, mm := db.ptr, db.size, db.mm
		db.mu.Unlock()
		ios[i] = stagedIO{ptr: p, size: size}
		if h, ok := mm.(*HostBuffer); ok && h != nil {
			d, err := m.stage.device(m.dev.rt.b, &h.mem)
			if err != nil {
				return nil, err
			}
			ios[i] = stagedIO{ptr: d, size: size, host: p}
		}
	}
	return ios, nil
}

// backendDataset builds a backend dataset over ios, for one execution.
func (m *Model) backendDataset(ios []stagedIO) (DatasetHandle, error) {
	ds, err := m.mb.CreateDataset()
	if err != nil {
		return 0, err
	}
	for _, io := range ios {
		buf, err := m.mb.CreateDataBuffer(io.ptr, io.size)
		if err == nil {
			if err = m.mb.AddDatasetBuffer(ds, buf); err != nil {
				err = errors.Join(err, m.mb.DestroyDataBuffer(buf))
			}
		}
		if err != nil {
			return 0, errors.Join(err, m.destroyDataset(ds))
		}
	}
	return ds, nil
}

// destroyDataset destroys a dataset backendDataset built, with its
// buffers.
func (m *Model) destroyDataset(ds DatasetHandle) error {
	errs := make([]error, 0, 4)
	for i := range m.mb.GetDatasetNumBuffers(ds) {
		errs = append(errs, m.mb.DestroyDataBuffer(m.mb.GetDatasetBuffer(ds, i)))
	}
	return errors.Join(append(errs, m.mb.DestroyDataset(ds))...)
}
