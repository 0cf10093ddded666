package acl

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// IODesc describes one model input or output, as the model description
// (aclmdlDesc) reports it. It is a plain value: safe to share once built,
// not to modify concurrently.
type IODesc struct {
	Name     string
	Size     uintptr // bytes the model reads or writes (aclmdlGet{Input,Output}SizeByIndex)
	Dims     []int64
	DataType DataType
	Format   Format
	// Range is the range of each input dim (aclmdlGetInputDimsRange):
	// [n, n] for a fixed dim, [lo, hi] for an unknown or ranged one, hi -1
	// for no upper bound; nil for a model with gears (Batches), for
	// outputs and on a backend without the query.
	Range [][2]int64
}

// ModelDesc is the description of a loaded model: its inputs and outputs
// in index order. Model.Desc returns a fresh copy, which its holder may
// modify; like any value it is not safe for concurrent modification.
type ModelDesc struct {
	Inputs  []IODesc
	Outputs []IODesc
	// Batches are the batch gears of a model built with dynamic batch
	// (aclmdlGetDynamicBatch), nil for a static model or a backend without
	// the query. Such a model has the extra input DynamicTensorName, and
	// -1 in the batch dim of its other inputs; choose the batch of a run
	// with Model.SetDynamicBatchSize.
	Batches []uint64
	// HW are the (height, width) gears of a model built with
	// --dynamic_image_size (aclmdlGetDynamicHW); choose one with
	// Model.SetDynamicHW.
	HW [][2]uint64
}

func (d ModelDesc) clone() ModelDesc {
	c := ModelDesc{Inputs: append([]IODesc(nil), d.Inputs...), Outputs: append([]IODesc(nil), d.Outputs...),
		Batches: append([]uint64(nil), d.Batches...), HW: append([][2]uint64(nil), d.HW...)}
	for _, ios := range [][]IODesc{c.Inputs, c.Outputs} {
		for i := range ios {
			ios[i].Dims = append([]int64(nil), ios[i].Dims...)
			ios[i].Range = append([][2]int64(nil), ios[i].Range...)
		}
	}
	return c
}

// ModelConfig selects how LoadModelWithConfig loads a model
// (aclmdlSetConfigOpt + aclmdlLoadWithConfig). It is a plain value, read
// during the load only.
type ModelConfig struct {
	// Work and Weight are caller-owned device memory for the model's work
	// memory (feature map and IO) and its weights. A nil buffer leaves that
	// memory to the backend. The buffers must stay open until the Model is
	// closed.
	Work, Weight *DeviceBuffer
	// WorkspaceMemOptimize sets ACL_MDL_WORKSPACE_MEM_OPTIMIZE to
	// INPUTOUTPUT: the work memory excludes the model's IO blocks, so
	// every input and output must then be a device buffer the caller
	// supplies at each execution.
	WorkspaceMemOptimize bool
}

// Model is a model loaded on a Device (aclmdlLoad*), with its description
// read once at load.
//
// ACL forbids executing one model id concurrently, and callers sharing it
// must hold a lock from the refresh of the IO addresses to the launch. A
// Model does this for its users: executions are serialized by a mutex held
// across the backend call, and an execution queued on a different stream
// than the previous one first waits until the previous one has completed
// (an event recorded after it on its stream), so the backend never refuses
// it for overlapping. A run queued on the same stream as the previous one
// costs exactly one backend call (aclmdlExecuteAsync): the calling thread
// normally has the Device's context current already (every idiomatic call
// leaves it so), and when it has not, the backend's context error is
// answered by binding the context and calling again. When it also repeats
// the stream and datasets of the previous successful run, the handles it
// uses were checked then and are not locked again: closing or changing any
// of them first waits for such runs in flight and sends the next run back
// through the checks (pin.go).
//
// The Device owns the Model: Device.Close unloads it if the program has
// not. A Model is safe for concurrent use. Close a stream used by the
// Model only after the executions queued on it have completed (Wait), so
// that the ordering above can rely on it.
type Model struct {
	res
	dev  *Device
	mb   ModelBackend
	id   ModelID
	desc ModelDesc
	mark *Event // recorded after the previous run on its stream, to wait for it

	mu     sync.Mutex // held from IO refresh to launch
	last   *Stream    // stream of the latest launch not known to have completed
	pinned modelPin   // the handles of the last checked ExecuteAsync (pin.go)
	// ranAsync and ranSync record which backend call ran the model first. GE
	// refuses aclmdlExecute after aclmdlExecuteAsync on one model id and
	// the reverse (hicann/ge runtime/v1/graph/load/model_manager/
	// davinci_model.cc:7636-7638), so the Model keeps to the first kind:
	// Execute after ExecuteAsync queues on the default stream and waits;
	// ExecuteAsync after Execute waits for the stream and runs
	// synchronously.
	ranAsync, ranSync bool
	stage             stage // device copies of host IO buffers; m.mu
}

func (m *Model) rank() int { return 1 }

func (m *Model) retire() { m.markClosed() }

// destroy runs with the Device's context current, after the Device has
// synchronized and destroyed its streams (or Close has waited for the
// model's runs): it unloads the model and frees its staging copies.
func (m *Model) destroy() error {
	return errors.Join(m.mb.Unload(m.id), m.stage.free(m.dev.rt.b, m.mb))
}

// modelBytes checks a serialized model and returns its address and size.
func modelBytes(op string, model []byte) (unsafe.Pointer, uintptr, error) {
	if len(model) == 0 {
		return nil, 0, Errorf(op, CodeInvalidParam, "empty model")
	}
	return unsafe.Pointer(unsafe.SliceData(model)), uintptr(len(model)), nil
}

// QueryModelSize returns the work memory (feature map and IO) and the
// weight memory a serialized model needs (aclmdlQuerySizeFromMem): the
// sizes of the buffers LoadModelWithMem takes.
func (d *Device) QueryModelSize(model []byte) (work, weight uintptr, err error) {
	const op = "Device.QueryModelSize"
	mb, err := d.modelBackend(op)
	if err != nil {
		return 0, 0, err
	}
	p, n, err := modelBytes(op, model)
	if err != nil {
		return 0, 0, err
	}
	err = d.call(op, func() error {
		var err error
		work, weight, err = mb.QuerySizeFromMem(p, n)
		return err
	})
	runtime.KeepAlive(model)
	return work, weight, err
}

// LoadModel loads a serialized model with memory the backend allocates and
// frees (aclmdlLoadFromMem).
func (d *Device) LoadModel(model []byte) (*Model, error) {
	const op = "Device.LoadModel"
	mb, err := d.modelBackend(op)
	if err != nil {
		return nil, err
	}
	p, n, err := modelBytes(op, model)
	if err != nil {
		return nil, err
	}
	m, err := d.loadModel(op, mb, func() (ModelID, error) { return mb.LoadFromMem(p, n) })
	runtime.KeepAlive(model)
	return m, err
}

// LoadModelFile reads the model file at path and loads it as LoadModel
// does: an .om on the device; on the fallback the model's source (its ge
// model format or ONNX) with the same IO. A file that cannot be read is
// ACL_ERROR_READ_MODEL_FAILURE, as aclmdlLoadFromFile reports it.
func (d *Device) LoadModelFile(path string) (*Model, error) {
	const op = "Device.LoadModelFile"
	if d == nil {
		return nil, nilError(op)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Op: op, Code: CodeReadModelFailure, Msg: err.Error()}
	}
	return d.LoadModel(data)
}

// LoadModelWithMem loads a serialized model into work and weight memory the
// caller owns (aclmdlLoadFromMemWithMem); QueryModelSize tells how large
// they may be. GE needs only the feature map in the work memory
// (memory_size - zero_copy_size); work memory shorter than QueryModelSize's
// work size holds no IO blocks, so every input and output must then be a
// device buffer. A nil buffer passes NULL, leaving that memory to the
// backend. The buffers must stay open until the Model is closed; the Model
// never frees them.
func (d *Device) LoadModelWithMem(model []byte, work, weight *DeviceBuffer) (*Model, error) {
	const op = "Device.LoadModelWithMem"
	mb, err := d.modelBackend(op)
	if err != nil {
		return nil, err
	}
	p, n, err := modelBytes(op, model)
	if err != nil {
		return nil, err
	}
	wk, wt, err := d.modelMem(op, work, weight)
	if err != nil {
		return nil, err
	}
	defer wk.release()
	defer wt.release()
	m, err := d.loadModel(op, mb, func() (ModelID, error) {
		return mb.LoadFromMemWithMem(p, n, wk.ptr, wk.size, wt.ptr, wt.size)
	})
	runtime.KeepAlive(model)
	return m, err
}

// modelArea is caller memory handed to a load, held open during the load.
type modelArea struct {
	ptr  unsafe.Pointer
	size uintptr
	h    held
}

func (a *modelArea) release() { a.h.release() }

// modelMem checks and takes the caller's work and weight buffers.
func (d *Device) modelMem(op string, work, weight *DeviceBuffer) (wk, wt modelArea, err error) {
	take := func(b *DeviceBuffer, what string) (modelArea, error) {
		if b == nil {
			return modelArea{}, nil
		}
		if b.dev != d {
			return modelArea{}, Errorf(op, CodeInvalidParam, "the %s buffer belongs to another Device", what)
		}
		h, err := acquire(op, b.dr())
		if err != nil {
			return modelArea{}, err
		}
		return modelArea{ptr: b.ptr, size: b.size, h: h}, nil
	}
	if wk, err = take(work, "work"); err != nil {
		return wk, wt, err
	}
	if wt, err = take(weight, "weight"); err != nil {
		wk.release()
	}
	return wk, wt, err
}

// LoadModelWithConfig loads a serialized model as cfg says, through a
// model config handle (aclmdlCreateConfigHandle, aclmdlSetConfigOpt,
// aclmdlLoadWithConfig).
func (d *Device) LoadModelWithConfig(model []byte, cfg ModelConfig) (*Model, error) {
	const op = "Device.LoadModelWithConfig"
	mb, err := d.modelBackend(op)
	if err != nil {
		return nil, err
	}
	p, n, err := modelBytes(op, model)
	if err != nil {
		return nil, err
	}
	wk, wt, err := d.modelMem(op, cfg.Work, cfg.Weight)
	if err != nil {
		return nil, err
	}
	defer wk.release()
	defer wt.release()
	// The config handle keeps the model's address until the load, so the
	// bytes are pinned for that long.
	var pin runtime.Pinner
	pin.Pin(unsafe.SliceData(model))
	defer pin.Unpin()
	return d.loadModel(op, mb, func() (id ModelID, err error) {
		h, err := mb.CreateConfigHandle()
		if err != nil {
			return 0, err
		}
		defer func() {
			if derr := mb.DestroyConfigHandle(h); derr != nil && err == nil {
				err = derr
			}
		}()
		set := func(attr ModelConfigAttr, v uintptr) error {
			// v holds the size_t, or the pointer a pointer-valued attr points at.
			return mb.SetConfigOpt(h, attr, unsafe.Pointer(&v), unsafe.Sizeof(v))
		}
		typ := MdlLoadFromMem
		if wk.ptr != nil || wt.ptr != nil {
			typ = MdlLoadFromMemWithMem
		}
		opts := []struct {
			attr ModelConfigAttr
			v    uintptr
			on   bool
		}{
			{MdlLoadTypeSizet, typ, true},
			{MdlMemAddrPtr, uintptr(p), true},
			{MdlMemSizet, n, true},
			{MdlWorkspaceAddrPtr, uintptr(wk.ptr), wk.ptr != nil},
			{MdlWorkspaceSizet, wk.size, wk.ptr != nil},
			{MdlWeightAddrPtr, uintptr(wt.ptr), wt.ptr != nil},
			{MdlWeightSizet, wt.size, wt.ptr != nil},
			{MdlWorkspaceMemOptimize, WorkspaceMemOptimizeInputOutput, cfg.WorkspaceMemOptimize},
		}
		for _, o := range opts {
			if !o.on {
				continue
			}
			if err := set(o.attr, o.v); err != nil {
				return 0, err
			}
		}
		return mb.LoadWithConfig(h)
	})
}

// loadModel runs load under the Device's context, reads the description of
// the loaded model and returns the Model, which the Device then owns. A
// failure after the load unloads the model again.
func (d *Device) loadModel(op string, mb ModelBackend, load func() (ModelID, error)) (*Model, error) {
	mark, err := d.NewEvent(0)
	if err != nil {
		return nil, err
	}
	c, err := d.adopt(op, func() (child, error) {
		id, err := load()
		if err != nil {
			return nil, err
		}
		desc, err := readDesc(op, mb, id)
		if err != nil {
			return nil, errors.Join(err, mb.Unload(id))
		}
		return &Model{res: d.pinnable("model"), dev: d, mb: mb, id: id, desc: desc, mark: mark}, nil
	})
	if err != nil {
		return nil, errors.Join(err, mark.Close())
	}
	return c.(*Model), nil
}

// maxModelIO bounds the IO counts a backend may report, so that a broken
// library cannot make the description reader loop for ever.
const maxModelIO = 1 << 16

// readDesc reads the description of model id (aclmdlCreateDesc,
// aclmdlGetDesc and the per-IO queries). The context is current.
func readDesc(op string, mb ModelBackend, id ModelID) (desc ModelDesc, err error) {
	h, err := mb.CreateDesc()
	if err != nil {
		return desc, err
	}
	defer func() { err = errors.Join(err, mb.DestroyDesc(h)) }()
	if err := mb.GetDesc(h, id); err != nil {
		return desc, err
	}
	nin, nout := mb.GetNumInputs(h), mb.GetNumOutputs(h)
	if nin > maxModelIO || nout > maxModelIO {
		return desc, Errorf(op, CodeInvalidParam, "model reports %d inputs and %d outputs", nin, nout)
	}
	var dims IODims
	for i := range nin {
		if err := mb.GetInputDims(h, i, &dims); err != nil {
			return desc, err
		}
		desc.Inputs = append(desc.Inputs, IODesc{
			Name:     mb.GetInputNameByIndex(h, i),
			Size:     mb.GetInputSizeByIndex(h, i),
			Dims:     dims.Shape(),
			DataType: mb.GetInputDataType(h, i),
			Format:   mb.GetInputFormat(h, i),
		})
	}
	if err := readDynamic(mb, h, &desc); err != nil {
		return desc, err
	}
	var batch Batch
	switch err := mb.GetDynamicBatch(h, &batch); {
	case errors.Is(err, ErrNotSupported):
	case err != nil:
		return desc, err
	case batch.BatchCount > 0:
		desc.Batches = batch.Gears()
	}
	for i := range nout {
		if err := mb.GetOutputDims(h, i, &dims); err != nil {
			return desc, err
		}
		desc.Outputs = append(desc.Outputs, IODesc{
			Name:     mb.GetOutputNameByIndex(h, i),
			Size:     mb.GetOutputSizeByIndex(h, i),
			Dims:     dims.Shape(),
			DataType: mb.GetOutputDataType(h, i),
			Format:   mb.GetOutputFormat(h, i),
		})
	}
	return desc, nil
}

// ID returns the model id; 0 for a nil Model.
func (m *Model) ID() ModelID {
	if m == nil {
		return 0
	}
	return m.id
}

// Device returns the Device the model is loaded on.
func (m *Model) Device() *Device {
	if m == nil {
		return nil
	}
	return m.dev
}

// Desc returns the model's description (a copy the caller may modify).
func (m *Model) Desc() ModelDesc {
	if m == nil {
		return ModelDesc{}
	}
	return m.desc.clone()
}

// NumInputs returns the number of model inputs.
func (m *Model) NumInputs() int {
	if m == nil {
		return 0
	}
	return len(m.desc.Inputs)
}

// NumOutputs returns the number of model outputs.
func (m *Model) NumOutputs() int {
	if m == nil {
		return 0
	}
	return len(m.desc.Outputs)
}

// InputIndex returns the index of the input called name, or an
// ACL_ERROR_INVALID_PARAM error.
func (m *Model) InputIndex(name string) (int, error) {
	return m.indexOf("Model.InputIndex", "input", name, func(d ModelDesc) []IODesc { return d.Inputs })
}

// OutputIndex returns the index of the output called name, or an
// ACL_ERROR_INVALID_PARAM error.
func (m *Model) OutputIndex(name string) (int, error) {
	return m.indexOf("Model.OutputIndex", "output", name, func(d ModelDesc) []IODesc { return d.Outputs })
}

func (m *Model) indexOf(op, what, name string, list func(ModelDesc) []IODesc) (int, error) {
	if m == nil {
		return -1, nilError(op)
	}
	for i, io := range list(m.desc) {
		if io.Name == name {
			return i, nil
		}
	}
	return -1, Errorf(op, CodeInvalidParam, "the model has no %s named %q", what, name)
}

// exec checks the handles (checkExec; stream says s is required), holds
// what the execution uses (execLocks) and runs f. When f has queued work
// on s, the memories the datasets refer to are marked as used by s. The
// lock set lives in exec's frame, so an execution allocates nothing for it.
//
// With pin set (ExecuteAsync), a successful execution becomes the Model's
// pin, which later runs with the same handles take without locking them
// (pin.go).
func (m *Model) exec(op string, s *Stream, in, out *Dataset, stream, pin bool, f func() error) error {
	if err := m.checkExec(op, s, in, out, stream); err != nil {
		return err
	}
	var rbuf [24]*res
	var mbuf [16]*mem
	rs, ms, hd, err := m.execLocks(op, s, in, out, rbuf[:0], mbuf[:0])
	if err != nil {
		return err
	}
	defer execUnlock(rs, &hd, in, out)
	if err := f(); err != nil {
		return err
	}
	if s != nil {
		for _, x := range ms {
			x.usedBy(s)
		}
	}
	// A staged run (host IO) is not pinned: its copies need the checked
	// path every time. The contents are still held.
	if pin && !in.hasHost() && !out.hasHost() {
		m.pin(s, in, out, ms)
	}
	return nil
}

// execLocks takes, in lock order, what an execution uses: the datasets'
// contents, then (in creation order) the model, the stream when there is
// one, the datasets and the memories their buffers refer to, then the
// Device. rs and ms are empty slices backed by the caller's arrays; the
// locked set and the memories are returned in them. On success the caller
// runs execUnlock when done.
func (m *Model) execLocks(op string, s *Stream, in, out *Dataset, rs []*res, ms []*mem) ([]*res, []*mem, held, error) {
	in.cmu.RLock()
	if out != in {
		out.cmu.RLock()
	}
	ms = in.memories(ms)
	if out != in {
		ms = out.memories(ms)
	}
	rs = append(rs, &m.res, &in.res, &out.res)
	if s != nil {
		rs = append(rs, &s.res)
	}
	for _, x := range ms {
		rs = append(rs, &x.res)
	}
	rs, err := lockAll(op, rs)
	if err == nil {
		var hd held
		if hd, err = acquire(op, &m.dev.res); err == nil {
			return rs, ms, hd, nil
		}
		unlockAll(rs)
	}
	if out != in {
		out.cmu.RUnlock()
	}
	in.cmu.RUnlock()
	return nil, nil, held{}, err
}

func execUnlock(rs []*res, hd *held, in, out *Dataset) {
	hd.release()
	unlockAll(rs)
	if out != in {
		out.cmu.RUnlock()
	}
	in.cmu.RUnlock()
}

// checkExec refuses nil handles and handles of another Device.
func (m *Model) checkExec(op string, s *Stream, in, out *Dataset, stream bool) error {
	if m == nil || in == nil || out == nil || (stream && s == nil) {
		return nilError(op)
	}
	if stream && s.dev != m.dev {
		return Errorf(op, CodeRTStreamContext, "the stream belongs to another Device")
	}
	if in.dev != m.dev || out.dev != m.dev {
		return Errorf(op, CodeInvalidParam, "a dataset belongs to another Device")
	}
	return nil
}

// ExecuteAsync queues one execution of the model on s, reading in and
// writing out (aclmdlExecuteAsync). The results are in the output memory
// once s has passed the execution (Stream.Synchronize, Wait, an event).
// The memories the datasets refer to are kept in use: closing one waits for
// s. See Model for how executions are serialized. IO in pinned host
// memory (*HostBuffer) is staged through device memory (model_stage.go):
// model IO must be device memory.
//
// An output buffer made with NewDataBufferPtr(nil, 0) is refused here as
// by aclmdlExecuteAsync, whose code it returns: only aclmdlExecute (and so
// Execute) allocates an empty output (hicann/ge api/acl/acl_model/model/
// model.cpp:781, !basync); asynchronously the empty buffer fails GE's size
// check before the launch (ACL_ERROR_GE_FAILURE 500002, or for a tensor
// of 64 bytes or less the null address, 145007), stays empty, and nothing
// is queued. Allocate the output, or use Execute.
//
// A run with the stream and datasets of the previous successful one, on
// the same stream, takes the pinned path (pin.go): the handles were
// checked then, and any change to them since sends the run back through
// the checks. A staged run is never pinned.
func (m *Model) ExecuteAsync(s *Stream, in, out *Dataset) error {
	if m != nil && s != nil && in != nil && out != nil {
		if done, err := m.executePinned(s, in, out); done {
			return err
		}
	}
	return m.exec("Model.ExecuteAsync", s, in, out, true, true, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if in.hasHost() || out.hasHost() {
			return m.staged(s, in, out, func(ih, oh DatasetHandle) error { return m.executeAsync(s, ih, oh) })
		}
		return m.executeAsync(s, in.h, out.h)
	})
}

// executeAsync is ExecuteAsync's launch with backend datasets. m.mu is
// held.
func (m *Model) executeAsync(s *Stream, in, out DatasetHandle) error {
	if m.ranSync {
		return m.dev.bound(func() error {
			if err := m.dev.rt.b.SynchronizeStream(s.h); err != nil {
				return err
			}
			return m.mb.Execute(m.id, in, out)
		})
	}
	var err error
	if m.last != nil && m.last != s {
		err = m.launchAfter(s, in, out)
	} else {
		err = m.launch(s, in, out)
	}
	if err == nil {
		m.last, m.ranAsync = s, true
	}
	return err
}

// launch is the steady-state path: one aclmdlExecuteAsync on the calling
// thread, whose current context is the Device's unless something else
// bound another one there; the backend then refuses the call with a
// context error before doing anything, and the call is repeated after
// binding. m.mu is held.
func (m *Model) launch(s *Stream, in, out DatasetHandle) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := m.mb.ExecuteAsync(m.id, in, out, s.h)
	if err != nil && errors.Is(err, ErrContext) {
		if err = m.dev.rt.b.SetCurrentContext(m.dev.ctx); err == nil {
			err = m.mb.ExecuteAsync(m.id, in, out, s.h)
		}
	}
	return err
}

// launchAfter queues an execution on s once the previous one, queued on
// another stream, has completed: backends refuse an execution of a model
// while another one is queued elsewhere (the fallback does, as ACL
// requires). m.mu is held.
func (m *Model) launchAfter(s *Stream, in, out DatasetHandle) error {
	return m.dev.bound(func() error {
		if err := m.waitLast(); err != nil {
			return err
		}
		return m.mb.ExecuteAsync(m.id, in, out, s.h)
	})
}

// markOn records the model's marker event on st, after the executions
// queued there, and reports whether it did. A stream that is closed or
// being closed is not touched: its Close waits for its queued work (a run
// launched meanwhile on another stream may then be refused by the backend
// as overlapping, never run concurrently). The
// Device's context is current and m.mu is held.
func (m *Model) markOn(st *Stream) (bool, error) {
	// TryRLock, not RLock: the execution already holds other handles, and
	// waiting here for a pending Close could close a lock cycle.
	if !st.res.mu.TryRLock() {
		return false, nil
	}
	defer st.res.mu.RUnlock()
	if st.res.closed {
		return false, nil
	}
	return true, m.dev.rt.b.RecordEvent(m.mark.h, st.h)
}

// waitLast blocks until the latest queued execution has completed. The
// Device's context is current and m.mu is held.
func (m *Model) waitLast() error {
	last := m.last
	if last == nil {
		return nil
	}
	m.last = nil
	marked, err := m.markOn(last)
	if err != nil || !marked {
		return err
	}
	return m.dev.rt.b.SynchronizeEvent(m.mark.h)
}

// Execute runs the model synchronously, reading in and writing out
// (aclmdlExecute), after any execution still queued has completed. IO in
// pinned host memory is staged through device memory, as for ExecuteAsync.
func (m *Model) Execute(in, out *Dataset) error {
	return m.exec("Model.Execute", nil, in, out, false, false, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if in.hasHost() || out.hasHost() {
			return m.staged(nil, in, out, m.execute)
		}
		return m.execute(in.h, out.h)
	})
}

// execute is Execute's run with backend datasets. m.mu is held.
func (m *Model) execute(in, out DatasetHandle) error {
	if m.last == nil && !m.ranAsync {
		return m.runSync(in, out)
	}
	return m.dev.bound(func() error {
		if err := m.waitLast(); err != nil {
			return err
		}
		if m.ranAsync {
			if err := m.mb.ExecuteAsync(m.id, in, out, 0); err != nil {
				return err
			}
			return m.dev.rt.b.SynchronizeStream(0)
		}
		err := m.mb.Execute(m.id, in, out)
		if err == nil {
			m.ranSync = true
		}
		return err
	})
}

// SetDynamicBatchSize chooses the batch of the next executions with in, a
// model built with dynamic batch (aclmdlSetDynamicBatchSize): it writes
// batch into in's buffer for the DynamicTensorName input. The other inputs
// hold batch rows at their start (their buffers are sized for the largest
// gear); the outputs get that many rows. A batch that is not one of
// Desc().Batches is ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID; a model
// without the input is ACL_ERROR_INVALID_PARAM.
func (m *Model) SetDynamicBatchSize(in *Dataset, batch uint64) error {
	const op = "Model.SetDynamicBatchSize"
	if m == nil || in == nil {
		return nilError(op)
	}
	idx, err := m.InputIndex(DynamicTensorName)
	if err != nil {
		return Errorf(op, CodeInvalidParam, "the model has no input %q: it was not built with dynamic batch", DynamicTensorName)
	}
	return m.exec(op, nil, in, in, false, false, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.dev.bound(func() error {
			// The batch input is written by a copy on the caller's
			// thread: executions queued before must not see it early.
			if err := m.waitLast(); err != nil {
				return err
			}
			return m.mb.SetDynamicBatchSize(m.id, in.h, uintptr(idx), batch)
		})
	})
}

// CurOutputDims returns output i's dims for the batch last chosen with
// SetDynamicBatchSize (aclmdlGetCurOutputDims): the gear's rows, where
// Desc reports the largest gear's; Desc's dims for a static model or
// before a batch is chosen. A model with unknown dims has no current
// output dims (ACL_ERROR_API_NOT_SUPPORT, matching ErrNotSupported): read
// the output Dataset's TensorDesc after the run.
func (m *Model) CurOutputDims(i int) ([]int64, error) {
	const op = "Model.CurOutputDims"
	if m == nil {
		return nil, nilError(op)
	}
	if i < 0 || i >= len(m.desc.Outputs) {
		return nil, Errorf(op, CodeInvalidParam, "output %d: the model has %d outputs", i, len(m.desc.Outputs))
	}
	var shape []int64
	err := m.dev.call(op, func() (err error) {
		h, err := m.mb.CreateDesc()
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, m.mb.DestroyDesc(h)) }()
		if err := m.mb.GetDesc(h, m.id); err != nil {
			return err
		}
		var dims IODims
		if err := m.mb.GetCurOutputDims(h, uintptr(i), &dims); err != nil {
			return err
		}
		shape = dims.Shape()
		return nil
	})
	return shape, err
}

// runSync is Execute's steady state, as launch is ExecuteAsync's: one
// aclmdlExecute on the calling thread, bound to the Device's context only
// when the backend refuses the call for want of it (which it does before
// doing anything), so a run costs no aclrtSetCurrentContext. m.mu is held.
func (m *Model) runSync(in, out DatasetHandle) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := m.mb.Execute(m.id, in, out)
	if err != nil && errors.Is(err, ErrContext) {
		if err = m.dev.rt.b.SetCurrentContext(m.dev.ctx); err == nil {
			err = m.mb.Execute(m.id, in, out)
		}
	}
	if err == nil {
		m.ranSync = true
	}
	return err
}

// Wait blocks until the executions queued so far have completed, or ctx
// is done (returning ctx.Err()). It does not report the executions'
// errors: their streams do (Stream.Synchronize). A closed Model has nothing
// queued.
func (m *Model) Wait(ctx context.Context) error {
	const op = "Model.Wait"
	if m == nil {
		return nilError(op)
	}
	h, err := acquire(op, &m.res)
	if err != nil {
		return nil
	}
	hd, err := acquire(op, &m.dev.res)
	if err != nil {
		h.release()
		return nil
	}
	m.mu.Lock()
	last := m.last
	marked := false
	if last != nil {
		err = m.dev.bound(func() error {
			var err error
			marked, err = m.markOn(last)
			return err
		})
	}
	m.mu.Unlock()
	// The marker is waited for with nothing held: Event.Wait takes the
	// event and the Device again.
	hd.release()
	h.release()
	if err != nil || !marked {
		return err
	}
	if err := m.mark.Wait(ctx); err != nil && !m.isClosed() {
		return err
	}
	return nil
}

// Close waits for the executions still queued, unloads the model
// (aclmdlUnload; the backend frees the memory it allocated for it) and
// releases what the Model created. Caller-owned work and weight buffers
// are left to the caller. Close is idempotent: later calls return nil.
func (m *Model) Close() error {
	if m == nil || !m.markClosed() {
		return nil
	}
	err := m.dev.releaseChild(m, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.unpin()
		// A failed wait must not keep the model loaded.
		return errors.Join(m.waitLast(), m.destroy())
	})
	return errors.Join(err, m.mark.Close())
}
