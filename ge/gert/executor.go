package gert

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// LoweringOptions are GE's runtime-V2 lowering options
// (inc/graph_metadef/external/exe_graph/lowering/lowering_opt.h), fixed at
// Load.
type LoweringOptions struct {
	// TrustShapeOnOutTensor trusts the shapes of the caller's output
	// tensors: Execute does not write the model's output shapes, formats and
	// data types into them.
	TrustShapeOnOutTensor bool
	// AlwaysZeroCopy is the caller's promise that every output tensor has
	// memory of the right placement and size. A missing or short output is
	// PARAM_INVALID on every run; there is no copy path, and inputs are used
	// as given, unchecked.
	AlwaysZeroCopy bool
	// AlwaysExternalAllocator requires the caller's allocator on every
	// Execute; a missing one is an error instead of the executor's own.
	AlwaysExternalAllocator bool
	// OutputReuseInputs lists (input, output) pairs whose output must be
	// written in place of the input (ge.exec.outputReuseInputMemIndexes):
	// the two tensors must have the same address.
	OutputReuseInputs [][2]int
}

// Executor runs one loaded model with GE's V2 output policy over the public
// acl model API, so it behaves the same on every backend. One Execute runs
// at a time; an Execute while another runs is an error, as GE's executor
// allows no concurrent runs. Close is idempotent.
type Executor struct {
	dev   *acl.Device
	model *acl.Model
	desc  acl.ModelDesc
	opts  LoweringOptions
	own   DeviceAllocator // the executor's allocator, for misplaced IO

	mu      sync.Mutex
	closed  bool
	in, out *acl.Dataset
	inBuf   []*acl.DataBuffer
	outBuf  []*acl.DataBuffer
	inAt    []bufAt       // where each input buffer points, as the executor last set it
	outAt   []bufAt       // likewise for the outputs
	outNeed []outSize     // each output's size by the model's description
	staging []*TensorData // per IO (inputs, then outputs): device memory of misplaced IO
	pending []int         // outputs to copy back after the run
	copies  uint64
}

// Stats are an executor's counters.
type Stats struct {
	// Copies counts the IO copies Execute made (misplaced inputs and
	// outputs).
	Copies uint64
}

// Load loads a model (acl's model format of the backend) onto dev.
func Load(dev *acl.Device, model []byte, opts LoweringOptions) (*Executor, error) {
	m, err := dev.LoadModel(model)
	if err != nil {
		return nil, err
	}
	e, err := newExecutor(dev, m, opts)
	if err != nil {
		_ = m.Close()
		return nil, err
	}
	return e, nil
}

func newExecutor(dev *acl.Device, m *acl.Model, opts LoweringOptions) (*Executor, error) {
	const op = "gert.Load"
	e := &Executor{dev: dev, model: m, desc: m.Desc(), opts: opts, own: DeviceAllocator{Dev: dev}}
	for _, p := range opts.OutputReuseInputs {
		if p[0] < 0 || p[0] >= len(e.desc.Inputs) || p[1] < 0 || p[1] >= len(e.desc.Outputs) {
			return nil, paramInvalid(op, "output reuse pair %d,%d names no input and output of the model (%d inputs, %d outputs)",
				p[0], p[1], len(e.desc.Inputs), len(e.desc.Outputs))
		}
	}
	var err error
	if e.in, e.inBuf, err = e.dataset(len(e.desc.Inputs)); err != nil {
		e.release()
		return nil, err
	}
	if e.out, e.outBuf, err = e.dataset(len(e.desc.Outputs)); err != nil {
		e.release()
		return nil, err
	}
	e.staging = make([]*TensorData, len(e.desc.Inputs)+len(e.desc.Outputs))
	e.inAt, e.outAt = make([]bufAt, len(e.inBuf)), make([]bufAt, len(e.outBuf))
	e.outNeed = make([]outSize, len(e.desc.Outputs))
	for i, d := range e.desc.Outputs {
		n, err := sizeInBytes(Shape(d.Dims), d.DataType)
		e.outNeed[i] = outSize{n, err == nil}
	}
	return e, nil
}

// outSize is the bytes an output needs, when its description fixes them.
type outSize struct {
	n  uint64
	ok bool
}

// dataset builds a dataset of n buffers once; Execute only re-points them.
func (e *Executor) dataset(n int) (*acl.Dataset, []*acl.DataBuffer, error) {
	ds, err := e.dev.NewDataset()
	if err != nil {
		return nil, nil, err
	}
	bufs := make([]*acl.DataBuffer, n)
	for i := range bufs {
		b, err := e.dev.NewDataBufferPtr(nil, 0)
		if err == nil {
			err = ds.Add(b)
			if err != nil {
				_ = b.Close()
			}
		}
		if err != nil {
			_ = ds.Close()
			return nil, nil, err
		}
		bufs[i] = b
	}
	return ds, bufs, nil
}

// Model returns the loaded model.
func (e *Executor) Model() *acl.Model {
	if e == nil {
		return nil
	}
	return e.model
}

// Stats returns the executor's counters.
func (e *Executor) Stats() Stats {
	if e == nil {
		return Stats{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{Copies: e.copies}
}

func paramInvalid(op, format string, args ...any) error {
	return acl.Errorf(op, acl.CodeGEParamInvalid, format, args...)
}

// Execute runs the model on s with the given inputs and outputs and GE's V2
// output policy (runtime/v2/kernel/outputs/model_outputs.cc
// AllocModelOutTensor, memory_copy.cc EnsureTensorAtOutMemory/TensorToOut,
// build_tensor.cc SplitTensorForOutputData):
//
//   - an output with an address at the model's placement (device) is written
//     in place: zero copy;
//   - an output without data gets memory from alloc (the executor's own
//     device allocator when alloc is nil and AlwaysExternalAllocator is off),
//     moved into the caller's tensor: zero copy, the caller frees it;
//   - an output with an address at another placement gets a separate device
//     buffer and one copy after the run, chosen by the placement pair; this
//     waits for the stream;
//   - with AlwaysZeroCopy, a missing output or one smaller than its shape
//     needs is PARAM_INVALID (E13031), with no fallback.
//
// Inputs on the host are copied to device memory first (H2D), except with
// AlwaysZeroCopy, which passes every input as given. Without a misplaced
// output, Execute only enqueues work on s.
func (e *Executor) Execute(s *acl.Stream, inputs, outputs []*Tensor, alloc Allocator) error {
	const op = "gert.Executor.Execute"
	if e == nil {
		return paramInvalid(op, "the executor is nil (not loaded)")
	}
	if !e.mu.TryLock() {
		return paramInvalid(op, "the executor is running; GE allows one execution per executor at a time")
	}
	defer e.mu.Unlock()
	if e.closed {
		return paramInvalid(op, "the executor is closed (model not loaded)")
	}
	if s == nil {
		return paramInvalid(op, "the stream is nil")
	}
	if len(inputs) != len(e.desc.Inputs) || len(outputs) != len(e.desc.Outputs) {
		// E13025, davinci_model.cc UpdateAllNodeArgs.
		return paramInvalid(op, "E13025: the number of inputs or outputs provided by the user (%d, %d) is inconsistent with that required by the model (%d, %d)",
			len(inputs), len(outputs), len(e.desc.Inputs), len(e.desc.Outputs))
	}
	if alloc == nil && e.opts.AlwaysExternalAllocator {
		return paramInvalid(op, "the lowering option always_external_allocator needs an allocator on every execution")
	}
	if alloc != nil && !alloc.Placement().OnDevice() {
		return paramInvalid(op, "the output allocator gives %v memory; the model writes device memory", alloc.Placement())
	}
	if alloc == nil {
		alloc = &e.own
	}
	e.pending = e.pending[:0]
	for i, t := range inputs {
		if err := e.bindInput(op, s, i, t); err != nil {
			return err
		}
	}
	for i, t := range outputs {
		if err := e.bindOutput(op, i, t, alloc); err != nil {
			return err
		}
	}
	for _, p := range e.opts.OutputReuseInputs {
		if e.inAt[p[0]].p != e.outAt[p[1]].p {
			return paramInvalid(op, "E13025: output %d must reuse the memory of input %d (outputReuseInputMemIndexes), but their addresses differ",
				p[1], p[0])
		}
	}
	if err := e.model.ExecuteAsync(s, e.in, e.out); err != nil {
		return err
	}
	if len(e.pending) == 0 {
		return nil
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	for _, i := range e.pending {
		if err := e.copyOut(op, i, outputs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (e *Executor) bindInput(op string, s *acl.Stream, i int, t *Tensor) error {
	if t == nil {
		return paramInvalid(op, "input %d (%s) is nil", i, e.desc.Inputs[i].Name)
	}
	addr, err := t.Addr()
	if err != nil {
		return fmt.Errorf("%s: input %d (%s): %w", op, i, e.desc.Inputs[i].Name, err)
	}
	size := t.Size()
	if e.opts.AlwaysZeroCopy || size == 0 || t.Placement().OnDevice() {
		return point(e.inBuf[i], &e.inAt[i], addr, uintptr(size))
	}
	if !t.Placement().OnHostSide() {
		return paramInvalid(op, "input %d (%s) has placement %v", i, e.desc.Inputs[i].Name, t.Placement())
	}
	// A host input is copied to device memory the executor keeps for it
	// (GE lowers a host input with an H2D copy).
	dst, err := e.stage(i, size)
	if err != nil {
		return err
	}
	daddr, _ := dst.Addr()
	if err := e.dev.Do(func() error {
		return e.dev.Runtime().Backend().Memcpy(daddr, uintptr(size), addr, uintptr(size), acl.MemcpyHostToDevice)
	}); err != nil {
		return err
	}
	e.copies++
	return point(e.inBuf[i], &e.inAt[i], daddr, uintptr(size))
}

// bufAt is an address and size a data buffer points at.
type bufAt struct {
	p    unsafe.Pointer
	size uintptr
}

// point re-points a data buffer only when its address or size changed, so
// a steady state of the same tensors costs no backend call. at is where the
// executor last pointed b: the buffers are the executor's own, so nothing
// else moves them, and a hit costs no lock of the buffer. A nil address is
// always read back from the buffer, where an execution may have put the
// runtime's allocation for a (nil, 0) output.
func point(b *acl.DataBuffer, at *bufAt, p unsafe.Pointer, size uintptr) error {
	if p != nil && at.p == p && at.size == size {
		return nil
	}
	if b.Addr() != p || b.Size() != size {
		*at = bufAt{}
		if err := b.UpdatePtr(p, size); err != nil {
			return err
		}
	}
	*at = bufAt{p, size}
	return nil
}

// stage returns device memory of at least size bytes for IO slot k, kept
// across executions.
func (e *Executor) stage(k int, size uint64) (*TensorData, error) {
	if td := e.staging[k]; td != nil && td.Size() >= size {
		return td, nil
	}
	if td := e.staging[k]; td != nil {
		if err := td.Free(); err != nil {
			return nil, err
		}
	}
	td, err := e.own.Malloc(size)
	if err != nil {
		return nil, err
	}
	e.staging[k] = td
	return td, nil
}

func (e *Executor) bindOutput(op string, i int, t *Tensor, alloc Allocator) error {
	d := &e.desc.Outputs[i]
	if t == nil {
		if e.opts.AlwaysZeroCopy {
			return paramInvalid(op, "E13031: output %d (%s): the output tensor and its address must be allocated and passed by the caller", i, d.Name)
		}
		return paramInvalid(op, "output %d (%s) is nil", i, d.Name)
	}
	var need uint64
	if !e.opts.TrustShapeOnOutTensor {
		setOutputMeta(t, d)
		need = e.outNeed[i].n
	}
	if e.opts.TrustShapeOnOutTensor || !e.outNeed[i].ok {
		var err error
		if need, err = t.SizeInBytes(); err != nil {
			return fmt.Errorf("%s: output %d (%s): %w", op, i, d.Name, err)
		}
	}
	addr, err := t.Addr()
	if err != nil {
		return fmt.Errorf("%s: output %d (%s): %w", op, i, d.Name, err)
	}
	if e.opts.AlwaysZeroCopy {
		// build_tensor.cc SplitTensorForOutputData: placement unchecked.
		if addr == nil {
			return paramInvalid(op, "E13031: output %d (%s): the output tensor and its address must be allocated and passed by the caller", i, d.Name)
		}
		if t.Size() < need {
			return paramInvalid(op, "output %d (%s): the output tensor memory size[%d] is smaller than the actual size[%d] required by tensor", i, d.Name, t.Size(), need)
		}
		return point(e.outBuf[i], &e.outAt[i], addr, uintptr(t.Size()))
	}
	switch {
	case addr == nil: // AllocModelOutTensor: allocate into the caller's tensor
		if need == 0 {
			return point(e.outBuf[i], &e.outAt[i], nil, 0)
		}
		td, err := alloc.Malloc(need)
		if err != nil {
			return err
		}
		if !td.Owned() {
			_ = td.Free()
			return fmt.Errorf("%s: output %d (%s): %w", op, i, d.Name, ErrNilManager)
		}
		if err := t.SetData(td); err != nil {
			return err
		}
		addr, _ = t.Addr()
		return point(e.outBuf[i], &e.outAt[i], addr, uintptr(need))
	case t.Size() < need: // TensorToOut: "given buffer size is less than output tensor size"
		return paramInvalid(op, "output %d (%s): given buffer size %d is less than output tensor size %d", i, d.Name, t.Size(), need)
	case t.Placement() == OnDeviceHbm || t.Placement() == alloc.Placement():
		return point(e.outBuf[i], &e.outAt[i], addr, uintptr(t.Size()))
	}
	if !t.Placement().Valid() {
		return paramInvalid(op, "output %d (%s) has placement %v", i, d.Name, t.Placement())
	}
	st, err := e.stage(len(e.desc.Inputs)+i, need)
	if err != nil {
		return err
	}
	saddr, _ := st.Addr()
	e.pending = append(e.pending, i)
	return point(e.outBuf[i], &e.outAt[i], saddr, uintptr(need))
}

// setOutputMeta writes output d's shapes, formats and data type into t, as
// GE does unless TrustShapeOnOutTensor. The shape is the tensor's own copy,
// never the executor's description, which a caller changing its tensor
// must not reach; an unchanged shape is left as it is, so the steady state
// neither allocates nor writes pointers.
func setOutputMeta(t *Tensor, d *acl.IODesc) {
	if !slices.Equal(t.Shape.Origin, d.Dims) || !slices.Equal(t.Shape.Storage, d.Dims) {
		s := Shape(slices.Clone(d.Dims))
		t.Shape = StorageShape{Origin: s, Storage: s}
	}
	t.Format = StorageFormat{Origin: d.Format, Storage: d.Format}
	t.DataType = d.DataType
}

// copyOut copies a misplaced output from its staging buffer by the
// placement pair (memory_copy.cc TensorToOut): device to host is D2H,
// device to peer device memory D2D.
func (e *Executor) copyOut(op string, i int, t *Tensor) error {
	st := e.staging[len(e.desc.Inputs)+i]
	need, _ := t.SizeInBytes()
	src, _ := st.Addr()
	dst, err := t.Addr()
	if err != nil {
		return err
	}
	kind := acl.MemcpyDeviceToHost
	if t.Placement().OnDevice() {
		kind = acl.MemcpyDeviceToDevice
	}
	if err := e.dev.Do(func() error {
		return e.dev.Runtime().Backend().Memcpy(dst, uintptr(t.Size()), src, uintptr(need), kind)
	}); err != nil {
		return fmt.Errorf("%s: output %d (%s): %w", op, i, e.desc.Outputs[i].Name, err)
	}
	e.copies++
	return nil
}

// Close unloads the model and frees what the executor allocated. Output
// memory moved into the caller's tensors stays theirs.
func (e *Executor) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.release()
}

func (e *Executor) release() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if e.in != nil {
		keep(e.in.Close())
	}
	if e.out != nil {
		keep(e.out.Close())
	}
	for _, td := range e.staging {
		if td != nil && td.Held() {
			keep(td.Free())
		}
	}
	keep(e.model.Close())
	return first
}
