package fallback

import (
	"context"
	"errors"
	"slices"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
	"github.com/ascend-go/cann/internal/npuhook"
)

// Models with unknown dims, as the device runs them. ATC keeps -1 dims
// when asked; the fallback does the same for an ONNX model whose shapes
// only a run can fix (symbolic input dims, data-dependent shapes, loops):
// onnx.Compile refuses it with onnx.ErrDynamicShape, and the model is
// loaded with onnx.Load instead, which plans each run's input-shape tuple
// on first use. Its description reports -1 for the unknown dims ([-2] for
// an unknown rank) and size 0 for such IO; each execution reads the real
// input shapes from the tensor descriptions set on the input dataset
// (aclmdlSetDatasetTensorDesc), runs, writes the outputs into the caller's
// buffers and sets each output's real shape on the output dataset
// (aclmdlGetDatasetTensorDesc), as GE's runtime v2 execute does
// (hicann/ge api/acl/acl_model/model/model.cpp:567-709). Such a model has
// no work or weight memory of its own (aclmdlQuerySizeFromMem reports 0
// and 0): each run plans its memory, bounded by the device memory free
// at load (onnx.WithMemoryLimit).

// DefaultModelExecuteTimeout is how long one execution of a model with
// unknown dims may run unless WithModelExecuteTimeout says otherwise: long
// enough for any model the fallback runs, short enough that a Loop that
// never ends does not hang a program or a CI job.
const DefaultModelExecuteTimeout = 5 * time.Minute

// WithModelExecuteTimeout bounds each execution of a model with unknown
// dims: one that runs longer (a Loop that never ends) stops with
// ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT, synchronously or as its stream's
// error. d <= 0 leaves it unbounded; closing the NPU always stops it.
func WithModelExecuteTimeout(d time.Duration) Option {
	return func(c *config) {
		c.execTimeout = d
		if d <= 0 {
			c.execTimeout = -1
		}
	}
}

// modelExecTimeout is the bound of one dynamic execution; 0 for none.
func (c *config) modelExecTimeout() time.Duration {
	switch {
	case c.execTimeout < 0:
		return 0
	case c.execTimeout == 0:
		return DefaultModelExecuteTimeout
	}
	return c.execTimeout
}

// dynModel is the part of a loaded model with unknown dims that executes.
type dynModel struct {
	m *onnx.Model
	// ranges is each input's dim ranges: [n, n] for a fixed dim, [1, -1]
	// for a symbolic one (ATC's -1 without --input_shape_range).
	ranges [][][2]int64
}

// loadONNX imports an ONNX model: compiled when its shapes are fixed,
// loaded for per-run planning when onnx.Compile needs run-time shapes.
// A refusal keeps the *onnx.Error (acl.Error.Cause) with its code.
func (c *call) loadONNX(blob []byte) (*ge.CompiledModel, *dynModel, error) {
	m, err := onnx.Compile(blob)
	if err == nil {
		return m, nil, nil
	}
	if !errors.Is(err, onnx.ErrDynamicShape) {
		return nil, nil, c.failCause(acl.CodeOf(err), err, "cannot import the ONNX model: %v", err)
	}
	var limit int64
	if c.ctx != nil {
		a := c.ctx.dev.arena
		used, _, _, _ := a.stats()
		limit = int64(a.size - used)
	}
	opts := []onnx.Option{}
	if limit > 0 {
		opts = append(opts, onnx.WithMemoryLimit(limit))
	}
	om, lerr := onnx.Load(blob, opts...)
	if lerr != nil {
		return nil, nil, c.failCause(acl.CodeOf(lerr), lerr, "cannot import the ONNX model: %v", lerr)
	}
	dm := &dynModel{m: om}
	cm := &ge.CompiledModel{Name: "onnx"}
	for _, in := range om.Inputs() {
		io := ge.IODesc{Name: in.Name, DataType: in.DataType, Format: acl.FormatND, Dims: in.Dims}
		r := make([][2]int64, len(in.Dims))
		for k, d := range in.Dims {
			r[k] = [2]int64{d, d}
			if d < 0 {
				r[k] = [2]int64{1, -1}
			}
		}
		io.Size = ioSize(io.Dims, io.DataType)
		cm.Inputs = append(cm.Inputs, io)
		dm.ranges = append(dm.ranges, r)
	}
	for _, o := range om.Outputs() {
		o.Size = ioSize(o.Dims, o.DataType)
		cm.Outputs = append(cm.Outputs, o)
	}
	return cm, dm, nil
}

// ioSize is the bytes of an IO of these dims, 0 when one is unknown (GE
// reports no size for an unbounded dim).
func ioSize(dims []int64, dt acl.DataType) int64 {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0
		}
		n *= d
	}
	return (n*int64(dt.Bits()) + 7) / 8
}

// failCause is fail keeping the error of the layer below as the
// *acl.Error's Cause.
func (c *call) failCause(code acl.Code, cause error, format string, args ...any) error {
	err := c.fail(code, format, args...)
	if e, ok := err.(*acl.Error); ok {
		e.Cause = cause
	}
	return err
}

// looksLikeTruncatedONNX reports whether bytes that parse as neither
// format start as an ONNX ModelProto does (field 1, ir_version, a varint:
// the tag 0x08 every exporter writes first), so that the refusal says the
// ONNX model is invalid rather than that a ge model is.
func looksLikeTruncatedONNX(blob []byte) bool {
	return len(blob) > 1 && blob[0] == 0x08
}

// ---- tensor descriptions on datasets ----

// dsDesc is a tensor description a dataset owns (a copy of the caller's,
// or an output's real shape), readable by handle like aclCreateTensorDesc's.
type dsDesc struct {
	h acl.TensorDescHandle
	d ge.TensorDesc
}

// tensorDesc returns the content of a description: one of
// aclCreateTensorDesc's (the single-op table) or one a dataset owns.
func (n *NPU) tensorDesc(h acl.TensorDescHandle) (ge.TensorDesc, bool) {
	if h == 0 {
		return ge.TensorDesc{}, false
	}
	t := &n.ops
	t.mu.Lock()
	d := t.descs[h]
	var out ge.TensorDesc
	if d != nil {
		out = ge.TensorDesc{DataType: d.DataType, Format: d.Format, Dims: slices.Clone(d.Dims)}
	}
	t.mu.Unlock()
	if d != nil {
		return out, true
	}
	mt := &n.models
	mt.mu.RLock()
	defer mt.mu.RUnlock()
	if x := mt.dsDescs[h]; x != nil {
		return ge.TensorDesc{DataType: x.d.DataType, Format: x.d.Format, Dims: slices.Clone(x.d.Dims)}, true
	}
	return ge.TensorDesc{}, false
}

// setDescLocked makes d entry i's description of s under handle h (from
// n.newHandle, taken before models.mu as every handle is), replacing and
// unregistering the one it had; a nil d removes it. models.mu held for
// writing.
func (n *NPU) setDescLocked(s *dataset, i int, d *ge.TensorDesc, h acl.TensorDescHandle) {
	t := &n.models
	for len(s.descs) < len(s.bufs) {
		s.descs = append(s.descs, nil)
	}
	if old := s.descs[i]; old != nil {
		delete(t.dsDescs, old.h)
		s.descs[i] = nil
	}
	if d == nil {
		return
	}
	x := &dsDesc{h: h, d: ge.TensorDesc{DataType: d.DataType, Format: d.Format, Dims: slices.Clone(d.Dims)}}
	t.dsDescs[x.h] = x
	s.descs[i] = x
}

// dropDescsLocked unregisters the descriptions a dataset owns;
// models.mu held for writing.
func (n *NPU) dropDescsLocked(s *dataset) {
	for _, x := range s.descs {
		if x != nil {
			delete(n.models.dsDescs, x.h)
		}
	}
	s.descs = nil
}

// SetDatasetTensorDesc is aclmdlSetDatasetTensorDesc: the dataset keeps a
// copy of desc for entry index (hicann/ge api/acl/acl_model/model/
// model_om2.cpp:965-990); a NULL desc removes the entry's. A NULL dataset
// or an index past its buffers is ACL_ERROR_INVALID_PARAM.
func (n *NPU) SetDatasetTensorDesc(ds acl.DatasetHandle, desc acl.TensorDescHandle, index uintptr) error {
	c, err := n.hostCall("aclmdlSetDatasetTensorDesc")
	if err != nil {
		return err
	}
	defer n.exit()
	var d *ge.TensorDesc
	var h acl.TensorDescHandle
	if desc != 0 {
		v, ok := n.tensorDesc(desc)
		if !ok {
			return c.fail(acl.CodeInvalidParam, "tensor description 0x%x is unknown or destroyed", uintptr(desc))
		}
		d, h = &v, acl.TensorDescHandle(n.newHandle())
	}
	t := &n.models
	t.mu.Lock()
	defer t.mu.Unlock()
	t.initLocked()
	s := t.sets[ds]
	if s == nil {
		return c.badHandle("dataset", uintptr(ds))
	}
	if index >= uintptr(len(s.bufs)) {
		return c.fail(acl.CodeInvalidParam, "input param index[%d] must be smaller than input databuf size[%d]", index, len(s.bufs))
	}
	n.setDescLocked(s, int(index), d, h)
	return nil
}

// GetDatasetTensorDesc is aclmdlGetDatasetTensorDesc: the description the
// dataset owns for entry index, 0 (NULL) for none or a bad argument
// (model_om2.cpp:951-963).
func (n *NPU) GetDatasetTensorDesc(ds acl.DatasetHandle, index uintptr) acl.TensorDescHandle {
	if n == nil {
		return 0
	}
	return readHostObject(n, &n.models.sets, ds, func(s *dataset) acl.TensorDescHandle {
		if index < uintptr(len(s.descs)) && s.descs[index] != nil {
			return s.descs[index].h
		}
		return 0
	})
}

// GetTensorDescType is aclGetTensorDescType; ACL_DT_UNDEFINED for a NULL
// or unknown description.
func (n *NPU) GetTensorDescType(d acl.TensorDescHandle) acl.DataType {
	if !n.enter() {
		return acl.DTUndefined
	}
	defer n.exit()
	if v, ok := n.tensorDesc(d); ok {
		return v.DataType
	}
	return acl.DTUndefined
}

// GetTensorDescFormat is aclGetTensorDescFormat; ACL_FORMAT_UNDEFINED for
// a NULL or unknown description.
func (n *NPU) GetTensorDescFormat(d acl.TensorDescHandle) acl.Format {
	if !n.enter() {
		return acl.FormatUndefined
	}
	defer n.exit()
	if v, ok := n.tensorDesc(d); ok {
		return v.Format
	}
	return acl.FormatUndefined
}

// GetTensorDescNumDims is aclGetTensorDescNumDims; 0 for a NULL or unknown
// description, ACL_UNKNOWN_RANK for dims [-2] (hicann/ge api/acl/acl_model/
// types/tensor_desc_internal_om2.cpp:316-327).
func (n *NPU) GetTensorDescNumDims(d acl.TensorDescHandle) uintptr {
	if !n.enter() {
		return 0
	}
	defer n.exit()
	v, _ := n.tensorDesc(d)
	if len(v.Dims) > 0 && v.Dims[0] == -2 {
		return acl.UnknownRank
	}
	return uintptr(len(v.Dims))
}

// GetTensorDescDimV2 is aclGetTensorDescDimV2.
func (n *NPU) GetTensorDescDimV2(d acl.TensorDescHandle, i uintptr) (int64, error) {
	c, err := n.hostCall("aclGetTensorDescDimV2")
	if err != nil {
		return 0, err
	}
	defer n.exit()
	v, ok := n.tensorDesc(d)
	if !ok {
		return 0, c.fail(acl.CodeInvalidParam, "tensor description 0x%x is null, unknown or destroyed", uintptr(d))
	}
	if i >= uintptr(len(v.Dims)) {
		return 0, c.fail(acl.CodeInvalidParam, "index %d is not below the description's %d dims", i, len(v.Dims))
	}
	return v.Dims[i], nil
}

// ---- descriptions of dynamic models ----

// GetInputDimsV2 is aclmdlGetInputDimsV2: the fallback has no AIPP, so
// the dims of aclmdlGetInputDims.
func (n *NPU) GetInputDimsV2(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return n.dims("aclmdlGetInputDimsV2", d, true, i, dims)
}

// GetInputDimsRange is aclmdlGetInputDimsRange, as GE's GetDimsRange
// (model_om2.cpp:471-541, 1595-1606): none (RangeCount 0) for a model
// with gears (dynamic batch); each dim's range for an input of unknown
// dims ([1, -1] for a symbolic dim, [n, n] for a fixed one); [n, n] for
// every dim of a static input.
func (n *NPU) GetInputDimsRange(d acl.ModelDescHandle, i uintptr, r *acl.IODimsRange) error {
	c, err := n.hostCall("aclmdlGetInputDimsRange")
	if err != nil {
		return err
	}
	defer n.exit()
	if r == nil {
		return c.fail(acl.CodeInvalidParam, "null dimsRange")
	}
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	desc := t.descs[d]
	if desc == nil || i >= uintptr(len(desc.inputs)) {
		return c.fail(acl.CodeInvalidParam, "model description 0x%x has no input %d (unknown handle, not filled by aclmdlGetDesc, or index out of range)", uintptr(d), i)
	}
	*r = acl.IODimsRange{}
	switch {
	case len(desc.batches) > 0: // a gear model: model_om2.cpp:474-480
	case desc.ranges != nil:
		rs := desc.ranges[i]
		r.RangeCount = uintptr(copy(r.Range[:], rs))
	default: // a static input: model_om2.cpp:510-523
		dims := desc.inputs[i].Dims
		r.RangeCount = uintptr(min(len(dims), acl.MaxDimCount))
		for k := range r.RangeCount {
			r.Range[k] = [2]int64{dims[k], dims[k]}
		}
	}
	return nil
}

// GetDynamicHW is aclmdlGetDynamicHW: the fallback builds no image-size
// gears, so HWCount 0 (model_om2.cpp:1817-1843).
func (n *NPU) GetDynamicHW(d acl.ModelDescHandle, index uintptr, hw *acl.HW) error {
	c, err := n.hostCall("aclmdlGetDynamicHW")
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	desc := t.descs[d]
	t.mu.RUnlock()
	if desc == nil || hw == nil {
		return c.fail(acl.CodeInvalidParam, "null or unknown argument (model description 0x%x)", uintptr(d))
	}
	hw.HWCount = 0
	return nil
}

// gearBuffer is the checks aclmdlSetDynamicHWSize and
// aclmdlSetInputDynamicDims make on the dataset entry: a buffer at index
// with an address (hicann/ge model.cpp:1890-1901, 1936-1945).
func (c *call) gearBuffer(ds acl.DatasetHandle, index uintptr) (*dataBuffer, error) {
	t := &c.n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := t.sets[ds]
	if s == nil {
		return nil, c.badHandle("dataset", uintptr(ds))
	}
	var b *dataBuffer
	if index < uintptr(len(s.bufs)) {
		b = t.bufs[s.bufs[index]]
	}
	if b == nil {
		return nil, c.fail(acl.CodeInvalidParam, "get data buffer by index[%d] failed, dataset buffer cannot be null", index)
	}
	if b.data == nil {
		return nil, c.fail(acl.CodeInvalidParam, "get addr by index[%d] failed, data buffer addr cannot be nullptr", index)
	}
	return &dataBuffer{data: b.data, size: b.size}, nil
}

// SetDynamicHWSize is aclmdlSetDynamicHWSize. The fallback builds no
// image-size gears: after GE's argument checks (model.cpp:1884-1901) and
// its length check (GeExecutor::SetDynamicImageSize, hicann/ge
// runtime/v1/executor/ge_executor.cc:443-454: under 8 bytes is
// ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID), no gear matches:
// ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID (ge_executor.cc:470-475).
func (n *NPU) SetDynamicHWSize(id acl.ModelID, ds acl.DatasetHandle, index uintptr, height, width uint64) error {
	c, err := n.begin("aclmdlSetDynamicHWSize", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if height == 0 || width == 0 {
		return c.fail(acl.CodeInvalidParam, "height[%d] or width[%d] is invalid, can't be zero.", height, width)
	}
	b, err := c.gearBuffer(ds, index)
	if err != nil {
		return err
	}
	if b.size < 8 {
		return c.fail(acl.CodeGEDynamicInputLengthInvalid, "Dynamic input size [%d] is less than [8]", b.size)
	}
	if _, err := c.lookupModel(id); err != nil {
		return err
	}
	return c.fail(acl.CodeGEDynamicBatchSizeInvalid, "the dynamic image size %dx%d cannot match a gear of model %d: the fallback builds no image-size gears", height, width, id)
}

// SetInputDynamicDims is aclmdlSetInputDynamicDims. The fallback builds
// no dynamic-dims gears, so after GE's argument checks (model.cpp:
// 1920-1945) the dims given cannot number the gear dims, which are none:
// ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID (GeExecutor::GetCurDynamicDims,
// ge_executor.cc:613-620).
func (n *NPU) SetInputDynamicDims(id acl.ModelID, ds acl.DatasetHandle, index uintptr, dims *acl.IODims) error {
	c, err := n.begin("aclmdlSetInputDynamicDims", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if dims == nil {
		return c.fail(acl.CodeInvalidParam, "null dims")
	}
	if dims.DimCount == 0 {
		return c.fail(acl.CodeInvalidParam, "dimCount[0] is invalid, can't be zero.")
	}
	if _, err := c.gearBuffer(ds, index); err != nil {
		return err
	}
	if _, err := c.lookupModel(id); err != nil {
		return err
	}
	return c.fail(acl.CodeGEDynamicInputLengthInvalid, "Dynamic input size [%d] is not equal with all data dims size [0]: model %d has no dynamic-dims gears", dims.DimCount, id)
}

// ---- execution ----

// dynRun is one execution of a model with unknown dims: the buffers and
// shapes read when it was called, run when its stream reaches it (or at
// once for aclmdlExecute).
type dynRun struct {
	in      []ge.HostTensor // Data views of the caller's input memory
	inLoc   []loc
	out     []ioMem
	outSize []uintptr
	outSet  acl.DatasetHandle
	sync    bool
}

// executeDynamic is aclmdlExecute (s nil) and aclmdlExecuteAsync of a
// model with unknown dims.
func (c *call) executeDynamic(md *model, in, out acl.DatasetHandle, s *stream) error {
	md.mu.Lock()
	defer md.mu.Unlock()
	if md.unloaded {
		return c.fail(acl.CodeGEExecModelIDInvalid, "model id %d was unloaded", md.id)
	}
	want := execSync
	if s != nil {
		want = execAsync
	}
	if err := c.checkMode(md, want); err != nil {
		return err
	}
	if md.syncRunning {
		return c.fail(acl.CodeRTModelExecute, "model %d is executing (aclmdlExecute on another thread); one model id must not run concurrently", md.id)
	}
	var rec *execRec
	for _, r := range md.recs {
		if r.inUse() {
			if s == nil || r.s != s {
				return c.fail(acl.CodeRTModelExecute, "model %d is still executing on stream 0x%x; one model id must not run concurrently", md.id, uintptr(r.s.h))
			}
		} else if rec == nil {
			rec = r
		}
	}
	run, err := c.gatherDynamic(md, in, out, s == nil)
	if err != nil {
		return err
	}
	if err := c.sameContext(md); err != nil {
		return err
	}
	md.execMode = want
	if s == nil {
		md.syncRunning = true
		md.mu.Unlock()
		err := md.runDynamic(run)
		md.mu.Lock()
		md.syncRunning = false
		if e, ok := err.(*acl.Error); ok {
			return c.failCause(e.Code, e.Cause, "%s", e.Msg)
		}
		return err
	}
	if rec == nil {
		rec = &execRec{md: md}
		md.recs = append(md.recs, rec)
	}
	rec.s, rec.queued = s, true
	rec.done.Store(false)
	r := rec
	if err := c.enqueue(s, true, false, func(*stream) error {
		defer r.done.Store(true)
		return md.runDynamic(run)
	}); err != nil {
		rec.queued = false
		return err
	}
	s.mu.Lock()
	rec.seq = s.submitted
	s.mu.Unlock()
	return nil
}

// gatherDynamic reads the datasets of one execution: each input's buffer
// and real shape, each output's buffer. Its refusals are GE's runtime v2
// checks (hicann/ge api/acl/acl_model/model/model.cpp:567-709):
//   - fewer input buffers than inputs: ACL_ERROR_INVALID_PARAM
//     (model.cpp:582-585); output buffers other than the outputs:
//     ACL_ERROR_GE_FAILURE, as a static model's E13025 (the runtime v2
//     executor's own count check is not in the source read: modelled);
//   - an input of unknown dims without a tensor description keeps the
//     model's -1 dims (model.cpp:605-606, 555-562), which the range check
//     lets through (graph_metadef/graph/utils/tensor_utils.cc:375-378) and
//     the execution cannot size: a GE status outside the ACL ranges,
//     returned as ACL_ERROR_GE_FAILURE (model.cpp:668-671,
//     api/acl/common/error_codes_inner.h:24-28);
//   - dims outside the input's range or another rank: "Input [i] shape out
//     of shape range", ACL_ERROR_INVALID_PARAM (model.cpp:619-621;
//     tensor_utils.cc:362-371, 391-420);
//   - an input buffer shorter than its shape: ACL_ERROR_GE_FAILURE (the
//     tensor's data size is the buffer's, model.cpp:604; the source shows
//     no ACL-layer check, the execution fails: modelled as GE's status);
//   - a buffer address outside every live allocation or on another
//     device: ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID, as for static models.
//
// An output buffer with a NULL address and size 0 is given device memory
// of the output's real size when a synchronous run ends (model.cpp:
// 695-709), which the caller frees.
func (c *call) gatherDynamic(md *model, in, out acl.DatasetHandle, sync bool) (*dynRun, error) {
	t := &c.n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	ins, outs := t.sets[in], t.sets[out]
	switch {
	case ins == nil:
		return nil, c.badHandle("input dataset", uintptr(in))
	case outs == nil:
		return nil, c.badHandle("output dataset", uintptr(out))
	}
	model := md.m
	if len(ins.bufs) < len(model.Inputs) {
		return nil, c.fail(acl.CodeInvalidParam, "input blobs %d cannot be smaller than input desc size %d", len(ins.bufs), len(model.Inputs))
	}
	run := &dynRun{outSet: out, sync: sync}
	for i, io := range model.Inputs {
		b := t.bufs[ins.bufs[i]]
		if b == nil {
			return nil, c.fail(acl.CodeInvalidParam, "input data buffer 0x%x (dataset entry %d) is unknown or destroyed", uintptr(ins.bufs[i]), i)
		}
		d := ge.TensorDesc{DataType: io.DataType, Format: io.Format, Dims: io.Dims}
		if i < len(ins.descs) && ins.descs[i] != nil {
			d.Dims = slices.Clone(ins.descs[i].d.Dims)
		}
		if err := c.checkRunShape(md, i, d.Dims); err != nil {
			return nil, err
		}
		need := uintptr(d.Size())
		if b.data == nil {
			return nil, c.fail(acl.CodeGEExecModelAddrInvalid, "input %d (%s): NULL address", i, io.Name)
		}
		if b.size < need {
			return nil, c.fail(acl.CodeGEFailure, "input %d (%s): the buffer of %d bytes is smaller than the %d bytes of its shape %v", i, io.Name, b.size, need, d.Dims)
		}
		l, err := c.dynIO(md, "input", i, b.data, max(need, 1))
		if err != nil {
			return nil, err
		}
		run.in = append(run.in, ge.HostTensor{Desc: d, Data: unsafe.Slice((*byte)(b.data), need)})
		run.inLoc = append(run.inLoc, l)
	}
	// The outputs after the inputs, as GE reads them (model.cpp:625-650).
	if len(outs.bufs) != len(model.Outputs) {
		return nil, c.fail(acl.CodeGEFailure, "E13025: The number of inputs or outputs provided by the user is inconsistent with that required by the model: %d output buffers, the model has %d outputs", len(outs.bufs), len(model.Outputs))
	}
	for i, h := range outs.bufs {
		b := t.bufs[h]
		if b == nil {
			return nil, c.fail(acl.CodeInvalidParam, "output data buffer 0x%x (dataset entry %d) is unknown or destroyed", uintptr(h), i)
		}
		m := ioMem{ptr: b.data}
		if b.data != nil {
			l, err := c.dynIO(md, "output", i, b.data, max(b.size, 1))
			if err != nil {
				return nil, err
			}
			m.l = l
		} else if b.size != 0 || !sync {
			return nil, c.fail(acl.CodeGEExecModelAddrInvalid, "output %d (%s): NULL address", i, model.Outputs[i].Name)
		}
		run.out = append(run.out, m)
		run.outSize = append(run.outSize, b.size)
	}
	return run, nil
}

// checkRunShape checks input i's dims of a run against its ranges.
func (c *call) checkRunShape(md *model, i int, dims []int64) error {
	io := &md.m.Inputs[i]
	rs := md.dyn.ranges[i]
	for _, d := range dims {
		if d < 0 {
			return c.fail(acl.CodeGEFailure, "input %d (%s) has unknown dims %v and the input dataset gives no tensor description for it (aclmdlSetDatasetTensorDesc): the execution cannot size it", i, io.Name, io.Dims)
		}
	}
	if len(dims) != len(rs) {
		return c.fail(acl.CodeInvalidParam, "Input [%d] shape out of shape range: %s has rank %d (dims %v), the model's is %d", i, io.Name, len(dims), dims, len(rs))
	}
	for k, d := range dims {
		if d < rs[k][0] || (rs[k][1] >= 0 && d > rs[k][1]) {
			return c.fail(acl.CodeInvalidParam, "Input [%d] shape out of shape range: %s dim %d is %d, its range is [%d, %d]", i, io.Name, k, d, rs[k][0], rs[k][1])
		}
	}
	return nil
}

// dynIO checks a caller buffer of a dynamic run as classifyIO does for a
// static one.
func (c *call) dynIO(md *model, role string, i int, p unsafe.Pointer, size uintptr) (loc, error) {
	l, err := c.checkRange(role, p, size)
	if err != nil {
		return loc{}, c.fail(acl.CodeGEExecModelAddrInvalid, "%s %d buffer: %s", role, i, err.(*acl.Error).Msg)
	}
	if l.Place == npuhook.PlaceDevice && l.Device != md.dev.id {
		return loc{}, c.fail(acl.CodeGEExecModelAddrInvalid, "%s %d buffer 0x%x is device %d memory, but model %d runs on device %d", role, i, uintptr(p), l.Device, md.id, md.dev.id)
	}
	return l, nil
}

// runDynamic runs one gathered execution: the plan for its shapes (or an
// interpreted run), under a context that ends at the execution timeout or
// when the NPU closes; then each output into its buffer and its real
// shape onto the output dataset. Errors are *acl.Error values; one from
// the ONNX run keeps the *onnx.Error as Cause.
func (md *model) runDynamic(run *dynRun) error {
	const op = "model execution"
	n := md.n
	for i := range run.inLoc {
		if err := run.inLoc[i].alive("IO buffer"); err != nil {
			return err
		}
		if isHostPlace(run.inLoc[i].Place) {
			return acl.Errorf(op, acl.CodeRTAICoreException,
				"input %d (0x%x) is host memory, which the model's tasks address as device memory; bind device memory (acl.Model and zerocopy.Binding stage acl.HostBuffer IO through device memory)", i, uintptr(unsafe.Pointer(unsafe.SliceData(run.in[i].Data))))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if d := n.cfg.modelExecTimeout(); d > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), d)
	}
	defer cancel()
	go func() {
		select {
		case <-n.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	// The run reads the caller's memory directly: copies guard against
	// an input buffer aliasing an output buffer.
	in := make([]ge.HostTensor, len(run.in))
	for i, t := range run.in {
		in[i] = ge.HostTensor{Desc: t.Desc, Data: slices.Clone(t.Data)}
	}
	outs, err := md.dyn.m.Run(ctx, in)
	if err != nil {
		var oe *onnx.Error
		code := acl.CodeOf(err)
		if errors.Is(err, onnx.ErrCanceled) {
			code = acl.CodeGEModelExecuteTimeout
		}
		e := acl.Errorf(op, code, "model %d: %v", md.id, err)
		if errors.As(err, &oe) {
			e.Cause = oe
		} else {
			e.Cause = err
		}
		return e
	}
	if len(outs) != len(run.out) {
		return acl.Errorf(op, acl.CodeGEFailure, "model %d produced %d outputs for %d output buffers", md.id, len(outs), len(run.out))
	}
	for i, o := range outs {
		need := uintptr(len(o.Data))
		m := &run.out[i]
		if m.ptr == nil {
			// aclmdlExecute gives an empty output buffer device memory of
			// the output's real size (model.cpp:695-709).
			p, err := (&call{n: n, op: op, tid: -1, quiet: true}).allocate(md.dev.arena, max(need, 1), callers())
			if err != nil {
				return acl.Errorf(op, acl.CodeRTMemoryAllocation, "no device memory for output %d (%d bytes): %v", i, need, err)
			}
			m.ptr, m.l = p, n.locate(uintptr(p))
			n.models.mu.Lock()
			if s := n.models.sets[run.outSet]; s != nil && i < len(s.bufs) {
				if b := n.models.bufs[s.bufs[i]]; b != nil && b.data == nil && b.size == 0 {
					b.data, b.size = p, need
				}
			}
			n.models.mu.Unlock()
			run.outSize[i] = need
		}
		// GE copies an output into the caller's buffer only when it fits
		// (runtime/v2/kernel/common_kernel_impl/memory_copy.cc:566-571:
		// GRAPH_FAILED, ACL_ERROR_GE_FAILURE at the ACL layer).
		if run.outSize[i] < need {
			return acl.Errorf(op, acl.CodeGEFailure, "model %d: Failed to copy output tensor data to the given buffer, given buffer size %d is less than output %d tensor size %d (shape %v)", md.id, run.outSize[i], i, need, o.Desc.Dims)
		}
		if err := m.l.alive("IO buffer"); err != nil {
			return err
		}
		if isHostPlace(m.l.Place) {
			return acl.Errorf(op, acl.CodeRTAICoreException, "output %d (0x%x) is host memory, which the model's tasks address as device memory", i, uintptr(m.ptr))
		}
		copy(unsafe.Slice((*byte)(m.ptr), need), o.Data)
	}
	hs := make([]acl.TensorDescHandle, len(outs))
	for i := range hs {
		hs[i] = acl.TensorDescHandle(n.newHandle())
	}
	n.models.mu.Lock()
	if s := n.models.sets[run.outSet]; s != nil {
		for i, o := range outs {
			if i < len(s.bufs) {
				d := o.Desc
				n.setDescLocked(s, i, &d, hs[i])
			}
		}
	}
	n.models.mu.Unlock()
	md.executed.Add(1)
	return nil
}

// dynStats adds the plan cache's counters of a model with unknown dims.
func (md *model) dynStats(s *ModelStats) {
	if md.dyn == nil {
		return
	}
	st := md.dyn.m.Stats()
	s.Plans += st.Plans
	s.Compiles += st.Compiles
	s.PlanHits += st.Hits
	s.Evictions += st.Evictions
	s.Interpreted += st.Interpreted
	s.Executions += md.executed.Load()
}
