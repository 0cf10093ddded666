package zerocopy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ascend-go/cann/acl"
)

// Binding is the user-facing side of zero copy: one buffer per input and
// output of an acl.Model, bound once, so that each execution is a single
// backend call that points the model's task arguments at those buffers
// instead of copying data.
//
// Bind allocates a device buffer per IO, sized from the model description,
// unless the caller supplies its own (WithInputs, WithOutputs). The input
// and output datasets are built once; RunAsync then costs one
// aclmdlExecuteAsync and no allocation, and SwapInput / SwapOutput point
// one IO at another buffer with aclUpdateDataBuffer, without rebuilding
// anything.
//
// Device buffers are zero copy. A pinned host buffer (*acl.HostBuffer) is
// accepted too, but that IO is copied: model IO must be device memory (the
// ACL layer passes every buffer to GE as device memory), so acl.Model
// stages it through a device buffer of its own, copying the input to the
// device (H2D) before the execution and the output back (D2H) after, on
// the run's stream. WithHostBuffers binds host buffers everywhere, which is
// the copy mode a zero-copy run is compared against. With WithDeviceOnly
// the binding refuses host buffers and buffers smaller than the model
// needs, at bind and swap time and again before every launch, with an
// error naming the IO; without it the backend applies GE's rules (a buffer
// may be up to 64 bytes smaller than the model's size).
//
// Buffers the Binding allocated are freed by Close, also after they were
// swapped out; buffers the caller supplied stay the caller's and must stay
// open while bound.
//
// A Binding is safe for concurrent use: runs, swaps and Close are
// serialized, and the Model serializes executions across all its
// Bindings.
type Binding struct {
	m        *acl.Model
	dev      *acl.Device
	desc     acl.ModelDesc
	strict   bool
	alwaysZC bool

	mu      sync.Mutex
	closed  bool
	in, out *acl.Dataset
	inMem   []acl.Memory // bound now, per input
	outMem  []acl.Memory // bound now, per output
	owned   []acl.Memory // allocated by the Binding
}

// BindOption configures Bind. Options are applied once, during Bind.
type BindOption func(*bindConfig)

type bindConfig struct {
	strict       bool
	alwaysZC     bool
	host         bool
	in, out      []acl.Memory
	inSet        bool
	outSet       bool
	mallocPolicy acl.MemMallocPolicy
	maxBytes     uintptr // WithMaxBytes (dynamic.go)
}

// WithDeviceOnly makes the Binding check, at bind and swap time and before
// every launch, that each IO, input or output, is a device buffer at least
// as large as the model's IO, refusing anything else (a host buffer, a
// short or closed buffer) with an ACL_ERROR_GE_PARAM_INVALID error that
// names the IO: a binding that can never fall back to copies. IO the caller
// leaves out is allocated in device memory. This is stricter than GE's
// always_zero_copy (WithAlwaysZeroCopy), which checks only outputs and
// accepts host memory.
func WithDeviceOnly() BindOption { return func(c *bindConfig) { c.strict = true } }

// WithAlwaysZeroCopy is GE's always_zero_copy lowering option
// (runtime/v2/kernel/common_kernel_impl/build_tensor.cc
// SplitTensorForOutputData): the caller supplies every output (WithOutputs,
// no nil entry) at least as large as the model's output; a missing output
// is ACL_ERROR_GE_PARAM_INVALID (E13031) and a short one
// ACL_ERROR_GE_PARAM_INVALID, at bind and swap time, with no fallback to an
// allocation. Placement is not checked and inputs are used as given, as in
// GE.
func WithAlwaysZeroCopy() BindOption { return func(c *bindConfig) { c.alwaysZC = true } }

// WithInputs binds the caller's memory to the inputs, in order: one entry
// per model input, a nil entry letting the Binding allocate that one.
func WithInputs(mems ...acl.Memory) BindOption {
	return func(c *bindConfig) { c.in, c.inSet = mems, true }
}

// WithOutputs binds the caller's memory to the outputs, as WithInputs.
func WithOutputs(mems ...acl.Memory) BindOption {
	return func(c *bindConfig) { c.out, c.outSet = mems, true }
}

// WithHostBuffers makes the Binding allocate pinned host buffers instead
// of device buffers: every IO it allocates is then copy-only.
func WithHostBuffers() BindOption { return func(c *bindConfig) { c.host = true } }

// WithMallocPolicy sets the aclrtMalloc policy of the device buffers the
// Binding allocates (default MemMallocHugeFirst).
func WithMallocPolicy(p acl.MemMallocPolicy) BindOption {
	return func(c *bindConfig) { c.mallocPolicy = p }
}

// ioName labels IO i of a direction for errors: `input 0 ("x")`.
func ioName(dir string, i int, d acl.IODesc) string {
	return fmt.Sprintf("%s %d (%q)", dir, i, d.Name)
}

// Bind creates a Binding for m: it takes or allocates one buffer per IO
// and builds the input and output datasets.
func Bind(m *acl.Model, opts ...BindOption) (*Binding, error) {
	const op = "zerocopy.Bind"
	if m == nil || m.Device() == nil {
		return nil, &acl.Error{Op: op, Code: acl.CodeRTInvalidHandle, Msg: "nil model"}
	}
	cfg := bindConfig{mallocPolicy: acl.MemMallocHugeFirst}
	for _, o := range opts {
		o(&cfg)
	}
	b := &Binding{m: m, dev: m.Device(), desc: m.Desc(), strict: cfg.strict, alwaysZC: cfg.alwaysZC}
	var err error
	if b.inMem, err = b.take(op, "input", b.desc.Inputs, cfg.in, cfg.inSet, &cfg); err == nil {
		b.outMem, err = b.take(op, "output", b.desc.Outputs, cfg.out, cfg.outSet, &cfg)
	}
	if err == nil {
		if b.in, err = b.dataset(op, "input", b.desc.Inputs, b.inMem); err == nil {
			b.out, err = b.dataset(op, "output", b.desc.Outputs, b.outMem)
		}
	}
	if err != nil {
		return nil, errors.Join(err, b.release())
	}
	return b, nil
}

// take returns the memory of each IO of one direction: the caller's entry
// when there is one, else a new buffer the Binding owns.
func (b *Binding) take(op, dir string, ios []acl.IODesc, given []acl.Memory, set bool, cfg *bindConfig) ([]acl.Memory, error) {
	if set && len(given) != len(ios) {
		return nil, acl.Errorf(op, acl.CodeGEParamInvalid, "%d %s buffers given, the model has %d %ss", len(given), dir, len(ios), dir)
	}
	mems := make([]acl.Memory, len(ios))
	for i, io := range ios {
		if b.alwaysZC && dir == "output" && (!set || isNil(given[i])) {
			return nil, acl.Errorf(op, acl.CodeGEParamInvalid, "E13031: %s: the output tensor and its address must be allocated and passed by the caller (always zero copy)", ioName(dir, i, io))
		}
		if set && !isNil(given[i]) {
			if err := b.check(op, dir, i, io, given[i]); err != nil {
				return nil, err
			}
			mems[i] = given[i]
			continue
		}
		// An IO of zero bytes still gets a (minimal) allocation: the
		// backend refuses a zero-size Malloc. One of unknown dims gets
		// what its range or WithMaxBytes bounds it to (dynamic.go).
		n := max(io.Size, 1)
		if io.Dynamic() {
			var err error
			if n, err = dynamicSize(op, dir, i, io, cfg.maxBytes); err != nil {
				return nil, err
			}
		}
		var mm acl.Memory
		var err error
		if cfg.host {
			mm, err = b.dev.MallocHost(n)
		} else {
			mm, err = b.dev.Malloc(n, cfg.mallocPolicy)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: allocating %s: %w", op, ioName(dir, i, io), err)
		}
		b.owned = append(b.owned, mm)
		mems[i] = mm
	}
	return mems, nil
}

// dataset builds the dataset of one direction, naming the IO whose buffer
// is refused.
func (b *Binding) dataset(op, dir string, ios []acl.IODesc, mems []acl.Memory) (*acl.Dataset, error) {
	ds, err := b.dev.NewDataset()
	if err != nil {
		return nil, err
	}
	for i, mm := range mems {
		db, err := b.dev.NewDataBuffer(mm)
		if err == nil {
			if err = ds.Add(db); err != nil {
				err = errors.Join(err, db.Close())
			}
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %s: %w", op, ioName(dir, i, ios[i]), err), ds.Close())
		}
	}
	return ds, nil
}

// isNil reports whether mm is nil, typed or not.
func isNil(mm acl.Memory) bool {
	switch v := mm.(type) {
	case nil:
		return true
	case *acl.DeviceBuffer:
		return v == nil
	case *acl.HostBuffer:
		return v == nil
	}
	return false
}

// check applies the device-only or always-zero-copy rules to one IO's
// memory (nothing otherwise).
func (b *Binding) check(op, dir string, i int, io acl.IODesc, mm acl.Memory) error {
	if b.alwaysZC && dir == "output" && !b.strict {
		if mm.Size() < io.Size {
			return acl.Errorf(op, acl.CodeGEParamInvalid, "%s: the output tensor memory size[%d] is smaller than the actual size[%d] required by tensor", ioName(dir, i, io), mm.Size(), io.Size)
		}
		return nil
	}
	if !b.strict {
		return nil
	}
	switch v := mm.(type) {
	case *acl.DeviceBuffer:
		if v.Ptr() == nil {
			return acl.Errorf(op, acl.CodeRTInvalidHandle, "%s: the device buffer is closed", ioName(dir, i, io))
		}
		if v.Size() < io.Size {
			return acl.Errorf(op, acl.CodeGEParamInvalid, "%s: the %s tensor memory size[%d] is smaller than the actual size[%d] required by tensor", ioName(dir, i, io), dir, v.Size(), io.Size)
		}
		return nil
	case *acl.HostBuffer:
		return acl.Errorf(op, acl.CodeGEParamInvalid, "%s: a host buffer is not zero copy; strict mode requires every IO in device memory", ioName(dir, i, io))
	}
	return acl.Errorf(op, acl.CodeGEParamInvalid, "%s: unsupported memory %T", ioName(dir, i, io), mm)
}

// explain turns an execution refused for a closed handle into an error
// naming the IO whose buffer was closed, when that is the cause.
func (b *Binding) explain(op string, err error) error {
	if !errors.Is(err, acl.ErrInvalidHandle) {
		return err
	}
	for i, mm := range b.inMem {
		if mm.Ptr() == nil {
			return acl.Errorf(op, acl.CodeRTInvalidHandle, "%s: its buffer is closed", ioName("input", i, b.desc.Inputs[i]))
		}
	}
	for i, mm := range b.outMem {
		if mm.Ptr() == nil {
			return acl.Errorf(op, acl.CodeRTInvalidHandle, "%s: its buffer is closed", ioName("output", i, b.desc.Outputs[i]))
		}
	}
	return err
}

// Model returns the bound model.
func (b *Binding) Model() *acl.Model {
	if b == nil {
		return nil
	}
	return b.m
}

// NumInputs returns the number of inputs.
func (b *Binding) NumInputs() int {
	if b == nil {
		return 0
	}
	return len(b.desc.Inputs)
}

// NumOutputs returns the number of outputs.
func (b *Binding) NumOutputs() int {
	if b == nil {
		return 0
	}
	return len(b.desc.Outputs)
}

// Input returns the memory bound to input i now, nil when i is out of
// range.
func (b *Binding) Input(i int) acl.Memory {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i < 0 || i >= len(b.inMem) {
		return nil
	}
	return b.inMem[i]
}

// Output returns the memory bound to output i now, nil when i is out of
// range.
func (b *Binding) Output(i int) acl.Memory {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i < 0 || i >= len(b.outMem) {
		return nil
	}
	return b.outMem[i]
}

// RunAsync queues one execution of the model on s with the bound buffers
// (one aclmdlExecuteAsync in the steady state, no allocation). The outputs
// hold the results once s has passed it (Stream.Synchronize, Wait).
func (b *Binding) RunAsync(s *acl.Stream) error {
	const op = "Binding.RunAsync"
	if b == nil {
		return nilBinding(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ready(op); err != nil {
		return err
	}
	if err := b.m.ExecuteAsync(s, b.in, b.out); err != nil {
		return b.explain(op, err)
	}
	return nil
}

// Run executes the model synchronously with the bound buffers
// (aclmdlExecute, after any run of the model still queued).
func (b *Binding) Run() error {
	const op = "Binding.Run"
	if b == nil {
		return nilBinding(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ready(op); err != nil {
		return err
	}
	if err := b.m.Execute(b.in, b.out); err != nil {
		return b.explain(op, err)
	}
	return nil
}

// ready checks the Binding is open. b.mu is held. The strict rules were
// checked when each buffer was bound; a buffer closed since is refused by
// the execution itself, and explain names it.
func (b *Binding) ready(op string) error {
	if b.closed {
		return &acl.Error{Op: op, Code: acl.CodeRTInvalidHandle, Msg: "binding is closed"}
	}
	return nil
}

// SwapInput binds input i to mm (aclUpdateDataBuffer): later runs read it.
// A buffer the Binding allocated and swaps out stays allocated until
// Close.
func (b *Binding) SwapInput(i int, mm acl.Memory) error {
	return b.swap("Binding.SwapInput", "input", i, mm)
}

// SwapOutput binds output i to mm (aclUpdateDataBuffer): later runs write
// it.
func (b *Binding) SwapOutput(i int, mm acl.Memory) error {
	return b.swap("Binding.SwapOutput", "output", i, mm)
}

func (b *Binding) swap(op, dir string, i int, mm acl.Memory) error {
	if b == nil {
		return nilBinding(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return &acl.Error{Op: op, Code: acl.CodeRTInvalidHandle, Msg: "binding is closed"}
	}
	ios, mems, ds := b.desc.Inputs, b.inMem, b.in
	if dir == "output" {
		ios, mems, ds = b.desc.Outputs, b.outMem, b.out
	}
	if i < 0 || i >= len(ios) {
		return acl.Errorf(op, acl.CodeInvalidParam, "%s index %d out of range [0, %d)", dir, i, len(ios))
	}
	if isNil(mm) {
		return acl.Errorf(op, acl.CodeInvalidParam, "%s: nil memory", ioName(dir, i, ios[i]))
	}
	if err := b.check(op, dir, i, ios[i], mm); err != nil {
		return err
	}
	if err := ds.Buffer(i).Update(mm); err != nil {
		return fmt.Errorf("%s: %w", ioName(dir, i, ios[i]), err)
	}
	mems[i] = mm
	return nil
}

// Wait blocks until the model's queued executions have completed, or ctx
// is done (see acl.Model.Wait).
func (b *Binding) Wait(ctx context.Context) error {
	if b == nil {
		return nilBinding("Binding.Wait")
	}
	return b.m.Wait(ctx)
}

// nilBinding is the error of a method called on a nil *Binding.
func nilBinding(op string) error {
	return acl.NilHandle(op, "binding")
}

// Close waits for the model's queued executions, destroys the datasets and
// frees the buffers the Binding allocated. The model stays loaded. Close
// is idempotent: later calls return nil.
func (b *Binding) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	// Datasets must not be destroyed under a queued run that reads them.
	return errors.Join(b.m.Wait(context.Background()), b.release())
}

// release destroys what Bind created.
func (b *Binding) release() error {
	errs := []error{b.in.Close(), b.out.Close()}
	for _, mm := range b.owned {
		switch v := mm.(type) {
		case *acl.DeviceBuffer:
			errs = append(errs, v.Close())
		case *acl.HostBuffer:
			errs = append(errs, v.Close())
		}
	}
	b.owned = nil
	return errors.Join(errs...)
}
