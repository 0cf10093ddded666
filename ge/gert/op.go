package gert

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// OpAttrs are a single op's attributes by name. Values are bool, int or
// int64, float32 or float64, string, or []int64.
type OpAttrs map[string]any

// Op is one single op ready to run (ACL's single-op API,
// aclopCompileAndExecuteV2): its tensor descriptions and attributes are
// created once, so a run with tensors whose addresses did not change is
// one backend call. Single-op execution is always zero copy with external
// memory: the op reads and writes the caller's device tensors, and an
// output without memory is an error. An Op is safe for concurrent use;
// runs are serialized. Close is idempotent.
type Op struct {
	dev     *acl.Device
	ob      acl.OpBackend
	mb      acl.ModelBackend
	opType  string
	inDesc  []acl.TensorDescHandle
	outDesc []acl.TensorDescHandle
	inBuf   []acl.DataBufferHandle
	outBuf  []acl.DataBufferHandle
	bound   []bufState // per buffer (inputs, then outputs): what it points at
	attr    acl.OpAttrHandle

	mu     sync.Mutex
	closed bool
}

type bufState struct {
	p    unsafe.Pointer
	size uint64
}

// IODesc describes one input or output of an Op.
type IODesc struct {
	DataType acl.DataType
	Shape    Shape
	Format   acl.Format
}

// NewOp prepares op opType on dev for inputs and outputs of the given
// descriptions. A backend without the single-op API gives an error matching
// acl.ErrNotSupported.
func NewOp(dev *acl.Device, opType string, in, out []IODesc, attrs OpAttrs) (*Op, error) {
	const op = "gert.NewOp"
	if dev == nil {
		return nil, acl.Errorf(op, acl.CodeInvalidParam, "device is nil")
	}
	be := dev.Runtime().Backend()
	ob, ok := be.(acl.OpBackend)
	mb, ok2 := be.(acl.ModelBackend)
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s: backend %s has no single-op API: %w", op, be.Name(), acl.ErrNotSupported)
	}
	o := &Op{dev: dev, ob: ob, mb: mb, opType: opType}
	err := dev.Do(func() error {
		var err error
		if o.inDesc, err = o.descs(in); err != nil {
			return err
		}
		if o.outDesc, err = o.descs(out); err != nil {
			return err
		}
		if o.attr, err = ob.CreateOpAttr(); err != nil {
			return err
		}
		if err := setAttrs(ob, o.attr, attrs); err != nil {
			return err
		}
		if o.inBuf, err = o.buffers(len(in)); err != nil {
			return err
		}
		o.outBuf, err = o.buffers(len(out))
		return err
	})
	if err != nil {
		_ = o.release()
		return nil, err
	}
	o.bound = make([]bufState, len(in)+len(out))
	return o, nil
}

func (o *Op) descs(ds []IODesc) ([]acl.TensorDescHandle, error) {
	hs := make([]acl.TensorDescHandle, 0, len(ds))
	for _, d := range ds {
		h, err := o.ob.CreateTensorDesc(d.DataType, d.Shape, d.Format)
		if err != nil {
			return hs, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

func (o *Op) buffers(n int) ([]acl.DataBufferHandle, error) {
	hs := make([]acl.DataBufferHandle, 0, n)
	for range n {
		h, err := o.mb.CreateDataBuffer(nil, 0)
		if err != nil {
			return hs, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// setAttrs sets attributes in name order, so the calls are deterministic.
func setAttrs(ob acl.OpBackend, h acl.OpAttrHandle, attrs OpAttrs) error {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var err error
		switch v := attrs[k].(type) {
		case bool:
			err = ob.SetOpAttrBool(h, k, v)
		case int:
			err = ob.SetOpAttrInt(h, k, int64(v))
		case int64:
			err = ob.SetOpAttrInt(h, k, v)
		case float32:
			err = ob.SetOpAttrFloat(h, k, v)
		case float64:
			err = ob.SetOpAttrFloat(h, k, float32(v))
		case string:
			err = ob.SetOpAttrString(h, k, v)
		case []int64:
			err = ob.SetOpAttrListInt(h, k, v)
		default:
			err = acl.Errorf("gert.NewOp", acl.CodeOpAttrNotMatch, "attribute %q has Go type %T; want bool, int64, float32, string or []int64", k, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Run launches the op on s over the tensors' data (device memory, used in
// place). The launch is queued: synchronize s before reading outputs.
func (o *Op) Run(s *acl.Stream, inputs, outputs []*Tensor) error {
	const op = "gert.Op.Run"
	if o == nil {
		return acl.Errorf(op, acl.CodeInvalidParam, "op is nil")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return acl.Errorf(op, acl.CodeInvalidParam, "op %s is closed", o.opType)
	}
	if s == nil {
		return acl.Errorf(op, acl.CodeInvalidParam, "stream is nil")
	}
	if len(inputs) != len(o.inBuf) || len(outputs) != len(o.outBuf) {
		return acl.Errorf(op, acl.CodeInvalidParam, "%s was prepared for %d inputs and %d outputs, got %d and %d",
			o.opType, len(o.inBuf), len(o.outBuf), len(inputs), len(outputs))
	}
	// The steady state needs no bind: the thread's current context is the
	// device's unless something else bound another; the backend then
	// refuses the launch with a context error before doing anything, and
	// it is repeated after binding (as acl.Model's launch does).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for k := range len(inputs) + len(outputs) {
		h, what, i := o.slot(k)
		var t *Tensor // an op may have no inputs (RandomUniform)
		if k < len(inputs) {
			t = inputs[k]
		} else {
			t = outputs[k-len(inputs)]
		}
		if t == nil {
			return acl.Errorf(op, acl.CodeInvalidParam, "%s %d of %s is nil", what, i, o.opType)
		}
		p, err := t.Addr()
		if err != nil {
			return fmt.Errorf("%s: %s %d of %s: %w", op, what, i, o.opType, err)
		}
		if p == nil && t.Size() == 0 {
			// always_zero_copy (build_tensor.cc SplitTensorForOutputData):
			// the caller allocates every tensor.
			return acl.Errorf(op, acl.CodeInvalidParam, "E13031: %s %d of %s: the tensor and its address must be allocated and passed by the caller", what, i, o.opType)
		}
		if b := o.bound[k]; b.p != p || b.size != t.Size() {
			if err := o.mb.UpdateDataBuffer(h, p, uintptr(t.Size())); err != nil {
				return err
			}
			o.bound[k] = bufState{p, t.Size()}
		}
	}
	launch := func() error {
		return o.ob.CompileAndExecuteV2(o.opType, o.inDesc, o.inBuf, o.outDesc, o.outBuf, o.attr,
			acl.OpEngineSys, acl.OpCompileSys, "", s.Handle())
	}
	err := launch()
	if errors.Is(err, acl.ErrContext) {
		if err = o.dev.Runtime().Backend().SetCurrentContext(o.dev.Context()); err == nil {
			err = launch()
		}
	}
	return err
}

func (o *Op) slot(k int) (acl.DataBufferHandle, string, int) {
	if k < len(o.inBuf) {
		return o.inBuf[k], "input", k
	}
	return o.outBuf[k-len(o.inBuf)], "output", k - len(o.inBuf)
}

// Close destroys the op's descriptions, attributes and data buffers.
func (o *Op) Close() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	return o.dev.Do(o.release)
}

func (o *Op) release() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, h := range slices.Concat(o.inDesc, o.outDesc) {
		keep(o.ob.DestroyTensorDesc(h))
	}
	for _, h := range slices.Concat(o.inBuf, o.outBuf) {
		keep(o.mb.DestroyDataBuffer(h))
	}
	if o.attr != 0 {
		keep(o.ob.DestroyOpAttr(o.attr))
	}
	o.inDesc, o.outDesc, o.inBuf, o.outBuf, o.attr = nil, nil, nil, nil, 0
	return first
}

// RunOp prepares op opType for the tensors' descriptions, runs it on s once
// and releases it: NewOp, Run and Close.
func RunOp(s *acl.Stream, opType string, inputs, outputs []*Tensor, attrs OpAttrs) error {
	if s == nil {
		return acl.Errorf("gert.RunOp", acl.CodeInvalidParam, "stream is nil")
	}
	desc := func(ts []*Tensor) []IODesc {
		ds := make([]IODesc, len(ts))
		for i, t := range ts {
			if t != nil {
				ds[i] = IODesc{DataType: t.DataType, Shape: t.Shape.Storage, Format: t.Format.Storage}
			}
		}
		return ds
	}
	o, err := NewOp(s.Device(), opType, desc(inputs), desc(outputs), attrs)
	if err != nil {
		return err
	}
	err = o.Run(s, inputs, outputs)
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	return err
}
