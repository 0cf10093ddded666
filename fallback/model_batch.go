package fallback

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

// Dynamic batch: a model built with batch gears (ge.BatchModel, ATC's
// --dynamic_batch_size) takes the extra input acl.DynamicTensorName, into
// which aclmdlSetDynamicBatchSize writes the batch; each execution runs
// the gear that value names.

// GetDynamicBatch is aclmdlGetDynamicBatch: the gears of a dynamic-batch
// model, BatchCount 0 for a static one (hicann/ge api/acl/acl_model/model/
// model_om2.cpp:1786-1815; more than ACL_MAX_BATCH_NUM gears would be
// ACL_ERROR_STORAGE_OVER_LIMIT, which ge.BatchModel never has).
func (n *NPU) GetDynamicBatch(d acl.ModelDescHandle, batch *acl.Batch) error {
	c, err := n.begin("aclmdlGetDynamicBatch", false)
	if err != nil {
		return err
	}
	defer n.exit()
	if batch == nil {
		return c.fail(acl.CodeInvalidParam, "null batch")
	}
	t := &n.models
	t.mu.RLock()
	defer t.mu.RUnlock()
	desc := t.descs[d]
	if desc == nil {
		return c.badHandle("model description", uintptr(d))
	}
	if len(desc.batches) > acl.MaxBatchNum {
		return c.fail(acl.CodeStorageOverLimit, "batch count[%d] is larger than max batch num[%d]", len(desc.batches), acl.MaxBatchNum)
	}
	batch.BatchCount = uintptr(len(desc.batches))
	for i, b := range desc.batches {
		batch.Batch[i] = uint64(b)
	}
	return nil
}

// GetInputDynamicGearCount is aclmdlGetInputDynamicGearCount: the number
// of dynamic-dims gears. index must be -1 (model_om2.cpp:1846-1874). The
// models the fallback runs have batch gears at most, never dynamic dims,
// so a filled description reports 0, as the device does for them.
func (n *NPU) GetInputDynamicGearCount(d acl.ModelDescHandle, index uintptr) (uintptr, error) {
	c, err := n.begin("aclmdlGetInputDynamicGearCount", false)
	if err != nil {
		return 0, err
	}
	defer n.exit()
	if err := c.dynamicDimsArgs(d, index); err != nil {
		return 0, err
	}
	return 0, nil
}

// GetInputDynamicDims is aclmdlGetInputDynamicDims: the dims of every
// dynamic-dims gear (model_om2.cpp:1876-1920); index must be -1 and dims
// must have room for every gear. With no such gears nothing is written.
func (n *NPU) GetInputDynamicDims(d acl.ModelDescHandle, index uintptr, dims []acl.IODims) error {
	c, err := n.begin("aclmdlGetInputDynamicDims", false)
	if err != nil {
		return err
	}
	defer n.exit()
	return c.dynamicDimsArgs(d, index)
}

func (c *call) dynamicDimsArgs(d acl.ModelDescHandle, index uintptr) error {
	t := &c.n.models
	t.mu.RLock()
	desc := t.descs[d]
	t.mu.RUnlock()
	if desc == nil {
		return c.badHandle("model description", uintptr(d))
	}
	if index != ^uintptr(0) {
		return c.fail(acl.CodeInvalidParam, "index must be -1 but it is %d", index)
	}
	return nil
}

// SetDynamicBatchSize is aclmdlSetDynamicBatchSize, with the checks and
// codes of hicann/ge api/acl/acl_model/model/model.cpp:1839-1877 then
// GeExecutor::SetDynamicBatchSize (runtime/v1/executor/ge_executor.cc:
// 375-430): a NULL dataset, batch 0, no buffer at index or a NULL buffer
// address is ACL_ERROR_INVALID_PARAM; a buffer under 4 bytes
// ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID; an unknown model
// ACL_ERROR_GE_EXEC_MODEL_ID_INVALID; a batch that is not a gear (any
// batch, for a static model) ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
// (ge_executor.cc:138-160). Then the batch is copied host to device into
// the buffer: 8 bytes when it holds 8, else 4.
func (n *NPU) SetDynamicBatchSize(id acl.ModelID, ds acl.DatasetHandle, index uintptr, batch uint64) error {
	c, err := n.begin("aclmdlSetDynamicBatchSize", false)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	set := t.sets[ds]
	var b *dataBuffer
	if set != nil && index < uintptr(len(set.bufs)) {
		b = t.bufs[set.bufs[index]]
	}
	var p unsafe.Pointer
	var size uintptr
	if b != nil {
		p, size = b.data, b.size
	}
	t.mu.RUnlock()
	switch {
	case set == nil:
		return c.badHandle("dataset", uintptr(ds))
	case batch == 0:
		return c.fail(acl.CodeInvalidParam, "input param[batchSize] invalid, batchSize can't be zero")
	case b == nil:
		return c.fail(acl.CodeInvalidParam, "failed to get data buffer by index[%d], dataset buffer is null", index)
	case p == nil:
		return c.fail(acl.CodeInvalidParam, "get addr by index[%d] failed, data buffer addr cannot be null", index)
	case size < 4:
		return c.fail(acl.CodeGEDynamicInputLengthInvalid, "Dynamic input size [%d] is less than [4], model id:%d", size, id)
	}
	md, err := c.lookupModel(id)
	if err != nil {
		return err
	}
	if !slices.Contains(md.batches, int64(batch)) {
		return c.fail(acl.CodeGEDynamicBatchSizeInvalid, "Dynamic batch %d cannot match the gear of model %d (gears %v)", batch, id, md.batches)
	}
	if err := c.needCtx(); err != nil {
		return err
	}
	n8 := uintptr(4)
	if size >= 8 {
		n8 = 8
	}
	l, err := c.checkRange("dst", p, n8)
	if err != nil {
		return err
	}
	md.curBatch.Store(int64(batch))
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], batch)
	copy(unsafe.Slice((*byte)(p), n8), v[:n8])
	if l.Place == npuhook.PlaceDevice {
		n.ctr.copied(HostToDevice, uint64(n8))
	}
	return nil
}

// GetCurOutputDims is aclmdlGetCurOutputDims (hicann/ge api/acl/
// acl_model/model/model.cpp:1978-2035): output i's dims for the batch the
// model's last aclmdlSetDynamicBatchSize chose (GeExecutor::GetCurShape);
// the description's dims for a static model or before a batch is chosen.
// A model with unknown dims, which GE runs with its runtime v2 executor,
// is refused with ACL_ERROR_API_NOT_SUPPORT before the index is checked
// (model.cpp:1981-1985: "This api does not support dynamic model"): its
// outputs' real shapes are on the output dataset
// (aclmdlGetDatasetTensorDesc).
func (n *NPU) GetCurOutputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	c, err := n.begin("aclmdlGetCurOutputDims", false)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.models
	t.mu.RLock()
	desc := t.descs[d]
	var io ge.IODesc
	var id acl.ModelID
	ok := desc != nil && i < uintptr(len(desc.outputs))
	if ok {
		io, id = desc.outputs[i], desc.id
	}
	t.mu.RUnlock()
	switch {
	case desc == nil:
		return c.badHandle("model description", uintptr(d))
	case dims == nil:
		return c.fail(acl.CodeInvalidParam, "null dims")
	}
	t.mu.RLock()
	dm := t.models[desc.id]
	t.mu.RUnlock()
	switch {
	case dm != nil && dm.dyn != nil:
		return c.fail(acl.CodeAPINotSupport, "This api does not support dynamic model: model %d has unknown dims; read the outputs' real shapes from the output dataset (aclmdlGetDatasetTensorDesc)", desc.id)
	case !ok:
		return c.fail(acl.CodeInvalidParam, "index[%d] should be smaller than tensor size[%d]", i, len(desc.outputs))
	}
	md, err := c.lookupModel(id)
	if err != nil {
		return err
	}
	shape := io.Dims
	if b := md.curBatch.Load(); b > 0 && md.gears != nil {
		shape = md.gears[slices.Index(md.batches, b)].m.Outputs[i].Dims
	}
	fillDims(dims, io.Name, shape)
	return nil
}

// gearFor returns the gear of dynamic-batch model md that the batch input
// of dataset in selects, after checking the datasets' buffer counts
// against md. A batch input holding a value that is not a gear (never
// set, or overwritten) is ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: the
// device's case op would pick no branch. Another gear still executing is
// refused as one model id executing twice (ACL_ERROR_RT_MODEL_EXECUTE),
// except asynchronous runs queued on the same stream st.
func (c *call) gearFor(md *model, in, out acl.DatasetHandle, st *stream) (*model, error) {
	t := &c.n.models
	t.mu.RLock()
	ins, outs := t.sets[in], t.sets[out]
	var b *dataBuffer
	if ins != nil && outs != nil && len(ins.bufs) == len(md.m.Inputs) && len(outs.bufs) == len(md.m.Outputs) {
		b = t.bufs[ins.bufs[md.batchIdx]]
	}
	var p unsafe.Pointer
	var size uintptr
	if b != nil {
		p, size = b.data, b.size
	}
	t.mu.RUnlock()
	switch {
	case ins == nil:
		return nil, c.badHandle("input dataset", uintptr(in))
	case outs == nil:
		return nil, c.badHandle("output dataset", uintptr(out))
	}
	if err := zcrt.CheckIOCount(c.op, md.m, len(ins.bufs), len(outs.bufs)); err != nil {
		e := err.(*acl.Error)
		return nil, c.fail(e.Code, "%s", e.Msg)
	}
	switch {
	case b == nil:
		return nil, c.fail(acl.CodeInvalidParam, "input data buffer %d (%s) is unknown or destroyed", md.batchIdx, acl.DynamicTensorName)
	case p == nil:
		return nil, c.fail(acl.CodeGEExecModelAddrInvalid, "input %d (%s) has a null address", md.batchIdx, acl.DynamicTensorName)
	case size < 4:
		return nil, c.fail(acl.CodeGEDynamicInputLengthInvalid, "input %d (%s) holds %d bytes, less than 4", md.batchIdx, acl.DynamicTensorName, size)
	}
	n := uintptr(4)
	if size >= 8 {
		n = 8
	}
	if _, err := c.checkRange(acl.DynamicTensorName+" buffer", p, n); err != nil {
		return nil, c.fail(acl.CodeGEExecModelAddrInvalid, "%s", err.(*acl.Error).Msg)
	}
	raw := unsafe.Slice((*byte)(p), n)
	v := uint64(binary.LittleEndian.Uint32(raw))
	if n == 8 {
		v = binary.LittleEndian.Uint64(raw)
	}
	i := slices.Index(md.batches, int64(v))
	if i < 0 {
		return nil, c.fail(acl.CodeGEDynamicBatchSizeInvalid, "model %d: input %s holds batch %d, which is not one of the gears %v: choose one with aclmdlSetDynamicBatchSize",
			md.id, acl.DynamicTensorName, v, md.batches)
	}
	want := execSync
	if st != nil {
		want = execAsync
	}
	for j, x := range md.gears {
		if j == i {
			continue
		}
		busy, mode := x.busyElsewhere(st)
		if busy {
			return nil, c.fail(acl.CodeRTModelExecute, "model %d is still executing with batch %d; one model id must not run concurrently", md.id, md.batches[j])
		}
		if err := c.modeConflict(md.id, mode, want); err != nil {
			return nil, err // the gears are one model id: one kind of execution
		}
	}
	return md.gears[i], nil
}

// busyElsewhere reports whether the model is executing synchronously, or
// has an execution queued or running on a stream other than st (any
// stream when st is nil), and the kind of its executions.
func (md *model) busyElsewhere(st *stream) (bool, execMode) {
	md.mu.Lock()
	defer md.mu.Unlock()
	if md.syncRunning {
		return true, md.execMode
	}
	for _, r := range md.recs {
		if r.inUse() && (st == nil || r.s != st) {
			return true, md.execMode
		}
	}
	return false, md.execMode
}
