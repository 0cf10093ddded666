package acl

import "unsafe"

// ModelID identifies a loaded model (the uint32_t modelId of acl_mdl.h).
type ModelID uint32

// Opaque model-API handles (pointers to C structs); zero is NULL.
type (
	ModelDescHandle   uintptr // aclmdlDesc*
	DatasetHandle     uintptr // aclmdlDataset*
	DataBufferHandle  uintptr // aclDataBuffer*
	ModelConfigHandle uintptr // aclmdlConfigHandle*
)

// ModelConfigAttr is aclmdlConfigAttr, the option set by SetConfigOpt.
type ModelConfigAttr int32

// aclmdlConfigAttr values.
const (
	MdlPriorityInt32        ModelConfigAttr = 0
	MdlLoadTypeSizet        ModelConfigAttr = 1
	MdlPathPtr              ModelConfigAttr = 2
	MdlMemAddrPtr           ModelConfigAttr = 3
	MdlMemSizet             ModelConfigAttr = 4
	MdlWeightAddrPtr        ModelConfigAttr = 5
	MdlWeightSizet          ModelConfigAttr = 6
	MdlWorkspaceAddrPtr     ModelConfigAttr = 7
	MdlWorkspaceSizet       ModelConfigAttr = 8
	MdlInputQNumSizet       ModelConfigAttr = 9
	MdlInputQAddrPtr        ModelConfigAttr = 10
	MdlOutputQNumSizet      ModelConfigAttr = 11
	MdlOutputQAddrPtr       ModelConfigAttr = 12
	MdlWorkspaceMemOptimize ModelConfigAttr = 13
	MdlWeightPathPtr        ModelConfigAttr = 14
	MdlModelDescPtr         ModelConfigAttr = 15
	MdlModelDescSizet       ModelConfigAttr = 16
	MdlKernelPtr            ModelConfigAttr = 17
	MdlKernelSizet          ModelConfigAttr = 18
	MdlKernelArgsPtr        ModelConfigAttr = 19
	MdlKernelArgsSizet      ModelConfigAttr = 20
	MdlStaticTaskPtr        ModelConfigAttr = 21
	MdlStaticTaskSizet      ModelConfigAttr = 22
	MdlDynamicTaskPtr       ModelConfigAttr = 23
	MdlDynamicTaskSizet     ModelConfigAttr = 24
	MdlMemMallocPolicySizet ModelConfigAttr = 25
	MdlFIFOPtr              ModelConfigAttr = 26
	MdlFIFOSizet            ModelConfigAttr = 27
)

// Load types, passed as a size_t under MdlLoadTypeSizet (#defines in acl_mdl.h).
const (
	MdlLoadFromFile        uintptr = 1
	MdlLoadFromFileWithMem uintptr = 2
	MdlLoadFromMem         uintptr = 3
	MdlLoadFromMemWithMem  uintptr = 4
	MdlLoadFromFileWithQ   uintptr = 5
	MdlLoadFromMemWithQ    uintptr = 6
)

// Values of MdlWorkspaceMemOptimize.
const (
	WorkspaceMemOptimizeDefault     uintptr = 0
	WorkspaceMemOptimizeInputOutput uintptr = 1 // the workspace excludes model IO memory
)

// Limits of aclmdlIODims.
const (
	MaxTensorNameLen = 128
	MaxDimCount      = 128
)

// MaxBatchNum is ACL_MAX_BATCH_NUM (acl_mdl.h): the most batch gears a
// model description reports.
const MaxBatchNum = 128

// DynamicTensorName is ACL_DYNAMIC_TENSOR_NAME (acl_mdl.h): the name of the
// extra input ATC adds to a model built with --dynamic_batch_size, which
// SetDynamicBatchSize writes the chosen batch into.
const DynamicTensorName = "ascend_mbatch_shape_data"

// Batch is aclmdlBatch: 1032 bytes, batchCount at offset 0, batch at 8.
type Batch struct {
	BatchCount uintptr
	Batch      [MaxBatchNum]uint64
}

// Gears returns the first BatchCount batch sizes (at most MaxBatchNum).
func (b *Batch) Gears() []uint64 {
	if b == nil {
		return nil
	}
	return append([]uint64(nil), b.Batch[:min(b.BatchCount, MaxBatchNum)]...)
}

// IODims is aclmdlIODims: 1160 bytes, dimCount at offset 128, dims at 136.
type IODims struct {
	Name     [MaxTensorNameLen]byte
	DimCount uintptr
	Dims     [MaxDimCount]int64
}

// NameString returns Name up to its first NUL.
func (d *IODims) NameString() string {
	if d == nil {
		return ""
	}
	for i, c := range d.Name {
		if c == 0 {
			return string(d.Name[:i])
		}
	}
	return string(d.Name[:])
}

// Shape returns the first DimCount dims (at most MaxDimCount).
func (d *IODims) Shape() []int64 {
	if d == nil {
		return nil
	}
	n := d.DimCount
	if n > MaxDimCount {
		n = MaxDimCount
	}
	return append([]int64(nil), d.Dims[:n]...)
}

// ModelBackend is the model half of AscendCL (acl_mdl.h and the data-buffer
// functions of acl_base.h), one method per C function with its C semantics.
// Backends implement it beside Backend.
//
// Memory handed to a data buffer, a dataset or a load call is kept by the
// backend after the call returns, so it must be device memory or pinned /
// registered host memory, never Go-heap memory. Functions that in C return a
// size_t or an enum without an error report 0 (or the undefined value) for a
// bad handle or index, as C does. Safe for concurrent use, with the ACL rule
// that one model id is not executed concurrently.
type ModelBackend interface {
	// QuerySizeFromMem (aclmdlQuerySizeFromMem) parses the model at
	// model (modelSize bytes) and returns the work memory (feature map and
	// IO) and the weight memory a load into caller memory needs. It needs
	// aclInit but no context. A NULL model or size 0 is ErrInvalidParam; a
	// model that does not parse is ErrInvalidModel.
	QuerySizeFromMem(model unsafe.Pointer, modelSize uintptr) (workSize, weightSize uintptr, err error)
	// LoadFromMem (aclmdlLoadFromMem) loads a model into memory the backend
	// allocates on the current context's device and returns its id (never
	// 0, never reused while loaded). It needs a current context
	// (ACL_ERROR_RT_CONTEXT_NULL otherwise, checked first). The model bytes
	// are read during the call.
	LoadFromMem(model unsafe.Pointer, modelSize uintptr) (ModelID, error)
	// LoadFromMemWithMem (aclmdlLoadFromMemWithMem) loads a model into work
	// and weight memory the caller owns: device memory of the current
	// device, at least QuerySizeFromMem's sizes, which must stay allocated
	// until Unload. The weights are copied into weight at load; execution
	// uses both. Host, freed or too small memory is ErrInvalidParam
	// (ACL_ERROR_GE_PARAM_INVALID).
	LoadFromMemWithMem(model unsafe.Pointer, modelSize uintptr, work unsafe.Pointer, workSize uintptr, weight unsafe.Pointer, weightSize uintptr) (ModelID, error)
	// CreateConfigHandle (aclmdlCreateConfigHandle) returns an empty load
	// configuration. C returns NULL on failure; that is ErrBadAlloc.
	CreateConfigHandle() (ModelConfigHandle, error)
	// SetConfigOpt (aclmdlSetConfigOpt) sets attr from the value at value,
	// valueSize bytes: 4 for the *_INT32 attributes, 8 (size_t or pointer)
	// for the others. For a pointer-valued attribute (*_PTR) value points
	// at the pointer, and the memory it names must stay valid until
	// LoadWithConfig returns. A NULL or unknown handle, an undefined attr,
	// a NULL value, a wrong valueSize or a value out of range (priority
	// outside [0, 7], WORKSPACE_MEM_OPTIMIZE other than 0 or 1) is
	// ErrInvalidParam.
	SetConfigOpt(h ModelConfigHandle, attr ModelConfigAttr, value unsafe.Pointer, valueSize uintptr) error
	// LoadWithConfig (aclmdlLoadWithConfig) loads as MdlLoadTypeSizet says:
	// FROM_FILE (PATH_PTR), FROM_MEM (MEM_ADDR_PTR, MEM_SIZET) and their
	// _WITH_MEM forms (plus WORKSPACE_ADDR_PTR/SIZET, WEIGHT_ADDR_PTR/SIZET,
	// with LoadFromMemWithMem's rules). A missing load type or a missing
	// attribute the type needs is ErrInvalidParam; the queue types
	// (_WITH_Q) are ErrNotSupported. Needs a current context.
	LoadWithConfig(h ModelConfigHandle) (ModelID, error)
	// DestroyConfigHandle (aclmdlDestroyConfigHandle); NULL, unknown or
	// already destroyed is ErrInvalidParam. Models loaded with it stay.
	DestroyConfigHandle(h ModelConfigHandle) error
	// Unload (aclmdlUnload) releases a model and the memory the backend
	// allocated for it (caller memory is left alone). An id that is not
	// loaded is ErrInvalidModelID (ACL_ERROR_GE_EXEC_MODEL_ID_INVALID).
	// Needs a current context.
	Unload(id ModelID) error

	// CreateDesc (aclmdlCreateDesc) returns an empty description (NULL,
	// i.e. ErrBadAlloc, on failure).
	CreateDesc() (ModelDescHandle, error)
	// GetDesc (aclmdlGetDesc) fills d with the IO of model id; the
	// description stays valid after the model is unloaded. Unknown id is
	// ErrInvalidModelID; a NULL or unknown d is ErrInvalidParam.
	GetDesc(d ModelDescHandle, id ModelID) error
	// DestroyDesc (aclmdlDestroyDesc); NULL, unknown or already destroyed
	// is ErrInvalidParam.
	DestroyDesc(d ModelDescHandle) error
	// GetNumInputs and GetNumOutputs (aclmdlGetNumInputs/Outputs) count
	// the IO of a filled description; 0 for a NULL, unknown or unfilled d.
	GetNumInputs(d ModelDescHandle) uintptr
	GetNumOutputs(d ModelDescHandle) uintptr
	// GetInputSizeByIndex and GetOutputSizeByIndex
	// (aclmdlGet{Input,Output}SizeByIndex) are the byte sizes of IO i
	// (elements × element size); 0 for a bad d or i.
	GetInputSizeByIndex(d ModelDescHandle, i uintptr) uintptr
	GetOutputSizeByIndex(d ModelDescHandle, i uintptr) uintptr
	// GetInputDims and GetOutputDims (aclmdlGet{Input,Output}Dims) fill
	// *dims (the caller's 1160-byte aclmdlIODims) with the name and shape
	// of IO i. A NULL dims, a bad d or i is ErrInvalidParam.
	GetInputDims(d ModelDescHandle, i uintptr, dims *IODims) error
	GetOutputDims(d ModelDescHandle, i uintptr, dims *IODims) error
	// GetInputNameByIndex and GetOutputNameByIndex
	// (aclmdlGet{Input,Output}NameByIndex) copy the name of IO i; "" for
	// a bad d or i (C's NULL).
	GetInputNameByIndex(d ModelDescHandle, i uintptr) string
	GetOutputNameByIndex(d ModelDescHandle, i uintptr) string
	// GetInputIndexByName (aclmdlGetInputIndexByName): the index of the
	// input named name. No such input, a bad d or a name containing NUL is
	// ErrInvalidParam.
	GetInputIndexByName(d ModelDescHandle, name string) (uintptr, error)
	// GetDynamicBatch (aclmdlGetDynamicBatch) fills *batch with the batch
	// gears of a model built with dynamic batch; BatchCount 0 for a static
	// model. A NULL d or batch is ErrInvalidParam; more than MaxBatchNum
	// gears is ACL_ERROR_STORAGE_OVER_LIMIT.
	GetDynamicBatch(d ModelDescHandle, batch *Batch) error
	// GetInputDynamicGearCount (aclmdlGetInputDynamicGearCount) is the
	// number of dynamic-dims gears (ATC's --dynamic_dims; 0 for a static or
	// dynamic-batch model). index must be ^uintptr(0) (C's -1), otherwise
	// ErrInvalidParam.
	GetInputDynamicGearCount(d ModelDescHandle, index uintptr) (uintptr, error)
	// GetInputDynamicDims (aclmdlGetInputDynamicDims) fills dims[g], for
	// each dynamic-dims gear g, with the dims of all inputs concatenated,
	// the gear's values in place of the -1 dims. index must be ^uintptr(0);
	// fewer dims than gears is ErrInvalidParam.
	GetInputDynamicDims(d ModelDescHandle, index uintptr, dims []IODims) error
	// GetCurOutputDims (aclmdlGetCurOutputDims) fills *dims with output
	// i's dims for the batch last chosen with SetDynamicBatchSize on the
	// model d describes; those of the description for a static model or
	// before a batch is chosen. A NULL d or dims, or a bad i, is
	// ErrInvalidParam; a model no longer loaded ErrInvalidModelID; a
	// model with unknown dims ACL_ERROR_API_NOT_SUPPORT (its outputs'
	// real shapes are on the output dataset: GetDatasetTensorDesc).
	GetCurOutputDims(d ModelDescHandle, i uintptr, dims *IODims) error
	// SetDynamicBatchSize (aclmdlSetDynamicBatchSize) chooses the batch of
	// the next executions of model id with dataset ds: it writes batch into
	// the buffer at index (the DynamicTensorName input). A NULL ds, batch
	// 0, no buffer at index or a NULL buffer address is ErrInvalidParam; a
	// buffer under 4 bytes is ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID; an
	// unknown id ErrInvalidModelID; a batch that is not one of the model's
	// gears (or a static model) ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID.
	// Needs a current context for the copy.
	SetDynamicBatchSize(id ModelID, ds DatasetHandle, index uintptr, batch uint64) error

	// Dynamic shapes (model_dynamic.go): a model built with unknown dims
	// (ATC keeps -1, or a range) takes each run's real input shapes from
	// tensor descriptions set on the input dataset, and reports each
	// output's real shape on the output dataset after the run.
	//
	// SetDatasetTensorDesc (aclmdlSetDatasetTensorDesc) copies desc into
	// entry index of ds (index below the buffer count, else
	// ErrInvalidParam; a NULL ds is ErrInvalidParam); a NULL desc (0)
	// removes the entry's description.
	SetDatasetTensorDesc(ds DatasetHandle, desc TensorDescHandle, index uintptr) error
	// GetDatasetTensorDesc (aclmdlGetDatasetTensorDesc) is the description
	// of entry index, which ds owns (valid until the next run or
	// SetDatasetTensorDesc on it, or ds's destruction); 0 (NULL) for a bad
	// ds or index or an entry without one.
	GetDatasetTensorDesc(ds DatasetHandle, index uintptr) TensorDescHandle
	// CreateTensorDesc and DestroyTensorDesc (aclCreateTensorDesc,
	// aclDestroyTensorDesc) are OpBackend's: a description to hand to
	// SetDatasetTensorDesc.
	CreateTensorDesc(dt DataType, dims []int64, format Format) (TensorDescHandle, error)
	DestroyTensorDesc(d TensorDescHandle) error
	// GetTensorDescType, GetTensorDescFormat and GetTensorDescNumDims
	// (aclGetTensorDesc{Type,Format,NumDims}) read a description:
	// DTUndefined, FormatUndefined and 0 for a NULL or unknown d;
	// UnknownRank dims for dims [-2].
	GetTensorDescType(d TensorDescHandle) DataType
	GetTensorDescFormat(d TensorDescHandle) Format
	GetTensorDescNumDims(d TensorDescHandle) uintptr
	// GetTensorDescDimV2 (aclGetTensorDescDimV2) is dim i of d; a NULL d
	// or an i past the dims is ErrInvalidParam.
	GetTensorDescDimV2(d TensorDescHandle, i uintptr) (int64, error)
	// GetInputDimsV2 (aclmdlGetInputDimsV2) is GetInputDims, except for a
	// model with static AIPP (the dims after AIPP). -1 marks an unknown dim
	// here, in GetInputDims and GetOutputDims.
	GetInputDimsV2(d ModelDescHandle, i uintptr, dims *IODims) error
	// GetInputDimsRange (aclmdlGetInputDimsRange) fills *r with the range
	// of each dim of input i: [n, n] for a fixed dim (every dim of a
	// static input), [lo, hi] for an unknown or ranged one, hi -1 for no
	// upper bound; RangeCount 0 for a model with gears (dynamic batch,
	// image size, dims). A NULL d or r, or a bad i, is ErrInvalidParam.
	GetInputDimsRange(d ModelDescHandle, i uintptr, r *IODimsRange) error
	// GetDynamicHW (aclmdlGetDynamicHW) fills *hw with the image-size
	// gears of a model built with --dynamic_image_size (HWCount 0 for
	// others); index is unused (-1). A NULL d or hw is ErrInvalidParam.
	GetDynamicHW(d ModelDescHandle, index uintptr, hw *HW) error
	// SetDynamicHWSize (aclmdlSetDynamicHWSize) chooses the image size of
	// the next runs with ds, writing it into the buffer at index (the
	// DynamicTensorName input). height or width 0, no buffer at index or a
	// NULL address is ErrInvalidParam; a buffer under 8 bytes
	// ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID; a size that is not a gear
	// ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID.
	SetDynamicHWSize(id ModelID, ds DatasetHandle, index uintptr, height, width uint64) error
	// SetInputDynamicDims (aclmdlSetInputDynamicDims) chooses the
	// dynamic-dims gear of the next runs with ds: dims holds every input's
	// dims concatenated, the gear's values in place of the -1 dims. A NULL
	// ds or dims, DimCount 0, no buffer at index or a NULL address is
	// ErrInvalidParam; a dim count other than the inputs' total
	// ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID; values that are not a
	// gear ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID.
	SetInputDynamicDims(id ModelID, ds DatasetHandle, index uintptr, dims *IODims) error

	// GetInputDataType, GetOutputDataType (aclmdlGet{Input,Output}DataType)
	// and GetInputFormat, GetOutputFormat (aclmdlGet{Input,Output}Format)
	// describe IO i; DTUndefined and FormatUndefined for a bad d or i.
	GetInputDataType(d ModelDescHandle, i uintptr) DataType
	GetOutputDataType(d ModelDescHandle, i uintptr) DataType
	GetInputFormat(d ModelDescHandle, i uintptr) Format
	GetOutputFormat(d ModelDescHandle, i uintptr) Format

	// CreateDataset (aclmdlCreateDataset) returns an empty dataset
	// (ErrBadAlloc for C's NULL).
	CreateDataset() (DatasetHandle, error)
	// DestroyDataset (aclmdlDestroyDataset) frees the dataset but not its
	// data buffers. NULL, unknown or already destroyed is ErrInvalidParam.
	DestroyDataset(ds DatasetHandle) error
	// AddDatasetBuffer (aclmdlAddDatasetBuffer) appends buf (the dataset
	// refers to it, it does not copy it). A NULL or unknown ds or buf is
	// ErrInvalidParam.
	AddDatasetBuffer(ds DatasetHandle, buf DataBufferHandle) error
	// GetDatasetNumBuffers (aclmdlGetDatasetNumBuffers); 0 for a bad ds.
	GetDatasetNumBuffers(ds DatasetHandle) uintptr
	// GetDatasetBuffer (aclmdlGetDatasetBuffer): entry i, or 0 for a bad
	// ds or i.
	GetDatasetBuffer(ds DatasetHandle, i uintptr) DataBufferHandle

	// CreateDataBuffer (aclCreateDataBuffer) describes size bytes at data
	// (not copied: the memory rule above applies). NULL data with size 0
	// is an empty buffer. ErrBadAlloc for C's NULL.
	CreateDataBuffer(data unsafe.Pointer, size uintptr) (DataBufferHandle, error)
	// DestroyDataBuffer (aclDestroyDataBuffer) frees the descriptor, not
	// the memory. NULL, unknown or destroyed is ErrInvalidParam.
	DestroyDataBuffer(buf DataBufferHandle) error
	// UpdateDataBuffer (aclUpdateDataBuffer) points buf at other memory;
	// datasets holding buf see the change. A bad buf is ErrInvalidParam.
	UpdateDataBuffer(buf DataBufferHandle, data unsafe.Pointer, size uintptr) error
	// GetDataBufferAddr (aclGetDataBufferAddr); nil for a bad buf.
	GetDataBufferAddr(buf DataBufferHandle) unsafe.Pointer
	// GetDataBufferSizeV2 (aclGetDataBufferSizeV2); 0 for a bad buf.
	GetDataBufferSizeV2(buf DataBufferHandle) uintptr

	// Execute (aclmdlExecute) runs model id on in and out, one data buffer
	// per model IO in order, and returns when the outputs are written.
	// Needs a current context (checked first). Unknown id is
	// ErrInvalidModelID; a NULL or unknown dataset or buffer is
	// ErrInvalidParam; a buffer count other than the model's, or a buffer
	// more than 64 bytes smaller than its IO, is ACL_ERROR_GE_FAILURE (GE
	// logs E13025, which the message carries, naming the counts, or the IO
	// and both sizes); a NULL or freed buffer address is
	// ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID (ErrInvalidParam). Larger
	// buffers are accepted. A model id runs with Execute or with
	// ExecuteAsync, not both: after the first execution the other kind is
	// ACL_ERROR_GE_FAILURE (acl.Model keeps to the first kind for its
	// users).
	Execute(id ModelID, in, out DatasetHandle) error
	// ExecuteAsync (aclmdlExecuteAsync) checks as Execute, then queues the
	// run on stream s (0: the current context's default stream; a stream of
	// another context is ACL_ERROR_RT_STREAM_CONTEXT) and returns; the
	// outputs are written when the stream reaches it. The buffers are
	// captured at the call, must stay valid until then, and may not be
	// plain host memory (ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID). One model
	// id must not run on two streams at once.
	ExecuteAsync(id ModelID, in, out DatasetHandle, s StreamHandle) error
}
