package acl

import (
	"errors"
	"fmt"
	"unsafe"
)

// stageSlack is GE's kDataMemAlignSizeCompare: a device IO buffer may be
// this many bytes shorter than its tensor (hicann/ge
// runtime/v1/graph/load/model_manager/davinci_model.cc:6588).
const stageSlack = 64

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

// stage holds the device copies of the host buffers a Model has run with,
// and per Dataset the backend dataset a staged execution passes instead of
// it, so that a steady staged run allocates nothing. Guarded by Model.mu.
type stage struct {
	shadow  map[*mem]unsafe.Pointer
	sets    map[*Dataset]*stagedSet
	in, out []stagedIO // scratch
}

// stagedSet is the backend dataset standing for a Dataset in staged runs:
// one data buffer per entry, pointed at what the entry's address was last.
type stagedSet struct {
	h     DatasetHandle
	bufs  []DataBufferHandle
	ptrs  []unsafe.Pointer
	sizes []uintptr
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

// free releases every device copy and backend dataset. The Device's
// context is current and no execution of the Model is queued.
func (st *stage) free(b Backend, mb ModelBackend) error {
	var errs []error
	for k, p := range st.shadow {
		errs = append(errs, b.Free(p))
		delete(st.shadow, k)
	}
	for k, set := range st.sets {
		errs = append(errs, set.destroy(mb))
		delete(st.sets, k)
	}
	return errors.Join(errs...)
}

// destroy destroys the backend dataset and its buffers.
func (set *stagedSet) destroy(mb ModelBackend) error {
	errs := []error{mb.DestroyDataset(set.h)}
	for _, h := range set.bufs {
		errs = append(errs, mb.DestroyDataBuffer(h))
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
		// The device copies are shared by the Model's executions: one
		// queued on another stream must be done with them first (runs on s
		// itself are ordered by s). A dynamic-batch model's gear is chosen
		// from the batch input when the execution is called, so its inputs
		// are copied in synchronously, after the runs queued before.
		// A model with unknown dims reports its outputs' shapes on the
		// output dataset when it has run, which the backend dataset
		// standing for it must hand back: such runs are synchronous too.
		dyn := m.desc.dynamic()
		sync := s == nil || len(m.desc.Batches) > 0 || dyn
		if m.last != nil && (sync || m.last != s) {
			if err := m.waitLast(); err != nil {
				return err
			}
		}
		st := &m.stage
		var err error
		if st.in, err = m.stageIO(s, in, st.in[:0], "input", m.desc.Inputs); err != nil {
			return err
		}
		if st.out, err = m.stageIO(s, out, st.out[:0], "output", m.desc.Outputs); err != nil {
			return err
		}
		inStream := s
		if sync {
			inStream = nil
		}
		if err := m.stageCopies(inStream, st.in, MemcpyHostToDevice); err != nil {
			return err
		}
		ih, err := m.stagedDataset(in, st.in)
		if err != nil {
			return err
		}
		oh, err := m.stagedDataset(out, st.out)
		if err != nil {
			return err
		}
		if dyn {
			if err := copyTensorDescs(m.mb, in.h, ih, len(st.in)); err != nil {
				return err
			}
		}
		if err := run(ih, oh); err != nil {
			return err
		}
		if dyn {
			if s != nil {
				if err := m.dev.rt.b.SynchronizeStream(s.h); err != nil {
					return err
				}
			}
			if err := copyTensorDescs(m.mb, oh, out.h, len(st.out)); err != nil {
				return err
			}
		}
		return m.stageCopies(s, st.out, MemcpyDeviceToHost)
	})
}

// stageCopies copies every host buffer of ios between the host and its
// device copy: on s when there is one, else synchronously.
func (m *Model) stageCopies(s *Stream, ios []stagedIO, kind MemcpyKind) error {
	b := m.dev.rt.b
	for _, io := range ios {
		if io.host == nil || io.size == 0 {
			continue
		}
		dst, src := io.ptr, io.host
		if kind == MemcpyDeviceToHost {
			dst, src = io.host, io.ptr
		}
		var err error
		if s != nil {
			err = b.MemcpyAsync(dst, io.size, src, io.size, kind, s.h)
		} else {
			err = b.Memcpy(dst, io.size, src, io.size, kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stageIO appends to ios ds's buffers with the device copy of each host
// buffer. A host buffer shorter than its tensor (descs, of a model whose
// sizes are fixed) is refused: GE lets a device buffer up to
// kDataMemAlignSizeCompare (64) bytes short through (hicann/ge
// runtime/v1/graph/load/model_manager/davinci_model.cc:6588-6601) because
// the device pads its allocations and the model reads or writes the whole
// tensor there; the device copy is padded too, but the copy between it and
// the host buffer moves the host buffer's bytes only, so an output's last
// bytes would be lost without a word and an input's read from stale
// memory. Up to 64 bytes short is ACL_ERROR_GE_PARAM_INVALID, as the
// fallback's row for a short buffer whose allocation ends with it
// (docs/misuse.md); more short is left to GE's own rule (500002).
func (m *Model) stageIO(s *Stream, ds *Dataset, ios []stagedIO, what string, descs []IODesc) ([]stagedIO, error) {
	fixed := len(m.desc.Batches) == 0 && len(m.desc.HW) == 0 && !m.desc.dynamic()
	for i, db := range ds.bufs {
		db.mu.Lock()
		p, size, mm := db.ptr, db.size, db.mm
		db.mu.Unlock()
		io := stagedIO{ptr: p, size: size}
		if h, ok := mm.(*HostBuffer); ok && h != nil {
			if fixed && i < len(descs) && size < descs[i].Size && descs[i].Size-size <= stageSlack {
				op := "Model.ExecuteAsync"
				if s == nil {
					op = "Model.Execute"
				}
				return ios, &Error{Op: op, Code: CodeGEParamInvalid, Msg: fmt.Sprintf(
					"%s %d is a pinned host buffer of %d bytes, %d bytes short of its tensor (%d bytes): "+
						"the model %s the whole tensor, the bytes past the buffer's end would be lost",
					what, i, size, descs[i].Size-size, descs[i].Size, map[bool]string{true: "reads", false: "writes"}[what == "input"])}
			}
			d, err := m.stage.device(m.dev.rt.b, &h.mem)
			if err != nil {
				return ios, err
			}
			io = stagedIO{ptr: d, size: size, host: p}
		}
		ios = append(ios, io)
	}
	return ios, nil
}

// stagedDataset returns the backend dataset standing for ds, its buffers
// pointed at ios (aclUpdateDataBuffer for those that changed). It is built
// on first use, and again when ds has gained buffers; backend datasets of
// Datasets closed since are destroyed.
func (m *Model) stagedDataset(ds *Dataset, ios []stagedIO) (DatasetHandle, error) {
	st := &m.stage
	set := st.sets[ds]
	if set == nil || len(set.bufs) != len(ios) {
		if st.sets == nil {
			st.sets = make(map[*Dataset]*stagedSet)
		}
		for k, old := range st.sets {
			if k == ds || k.isClosed() {
				delete(st.sets, k)
				if err := old.destroy(m.mb); err != nil {
					return 0, err
				}
			}
		}
		var err error
		if set, err = m.newStagedSet(ios); err != nil {
			return 0, err
		}
		st.sets[ds] = set
		return set.h, nil
	}
	for i, io := range ios {
		if set.ptrs[i] != io.ptr || set.sizes[i] != io.size {
			if err := m.mb.UpdateDataBuffer(set.bufs[i], io.ptr, io.size); err != nil {
				return 0, err
			}
			set.ptrs[i], set.sizes[i] = io.ptr, io.size
		}
	}
	return set.h, nil
}

// newStagedSet builds a backend dataset over ios.
func (m *Model) newStagedSet(ios []stagedIO) (*stagedSet, error) {
	h, err := m.mb.CreateDataset()
	if err != nil {
		return nil, err
	}
	set := &stagedSet{h: h}
	for _, io := range ios {
		buf, err := m.mb.CreateDataBuffer(io.ptr, io.size)
		if err == nil {
			if err = m.mb.AddDatasetBuffer(h, buf); err != nil {
				err = errors.Join(err, m.mb.DestroyDataBuffer(buf))
			}
		}
		if err != nil {
			return nil, errors.Join(err, set.destroy(m.mb))
		}
		set.bufs = append(set.bufs, buf)
		set.ptrs = append(set.ptrs, io.ptr)
		set.sizes = append(set.sizes, io.size)
	}
	return set, nil
}
