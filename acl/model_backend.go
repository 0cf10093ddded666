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

// IODims is aclmdlIODims: 1160 bytes, dimCount at offset 128, dims at 136.
type IODims struct {
	Name     [MaxTensorNameLen]byte
	DimCount uintptr
	Dims     [MaxDimCount]int64
}

// NameString returns Name up to its first NUL.
func (d *IODims) NameString() string {
	for i, c := range d.Name {
		if c == 0 {
			return string(d.Name[:i])
		}
	}
	return string(d.Name[:])
}

// Shape returns the first DimCount dims (at most MaxDimCount).
func (d *IODims) Shape() []int64 {
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
	// QuerySizeFromMem: work (feature map + IO) and weight memory the model needs.
	QuerySizeFromMem(model unsafe.Pointer, modelSize uintptr) (workSize, weightSize uintptr, err error)
	// LoadFromMem loads a model; the backend allocates its memory.
	LoadFromMem(model unsafe.Pointer, modelSize uintptr) (ModelID, error)
	// LoadFromMemWithMem loads a model into work and weight memory the caller owns.
	LoadFromMemWithMem(model unsafe.Pointer, modelSize uintptr, work unsafe.Pointer, workSize uintptr, weight unsafe.Pointer, weightSize uintptr) (ModelID, error)
	CreateConfigHandle() (ModelConfigHandle, error)
	// SetConfigOpt sets attr from the value at value (valueSize bytes); for a
	// pointer-valued attr, value points at the pointer.
	SetConfigOpt(h ModelConfigHandle, attr ModelConfigAttr, value unsafe.Pointer, valueSize uintptr) error
	LoadWithConfig(h ModelConfigHandle) (ModelID, error)
	DestroyConfigHandle(h ModelConfigHandle) error
	Unload(id ModelID) error

	CreateDesc() (ModelDescHandle, error)
	GetDesc(d ModelDescHandle, id ModelID) error
	DestroyDesc(d ModelDescHandle) error
	GetNumInputs(d ModelDescHandle) uintptr
	GetNumOutputs(d ModelDescHandle) uintptr
	GetInputSizeByIndex(d ModelDescHandle, i uintptr) uintptr
	GetOutputSizeByIndex(d ModelDescHandle, i uintptr) uintptr
	GetInputDims(d ModelDescHandle, i uintptr, dims *IODims) error
	GetOutputDims(d ModelDescHandle, i uintptr, dims *IODims) error
	GetInputNameByIndex(d ModelDescHandle, i uintptr) string
	GetOutputNameByIndex(d ModelDescHandle, i uintptr) string
	GetInputIndexByName(d ModelDescHandle, name string) (uintptr, error)
	GetInputDataType(d ModelDescHandle, i uintptr) DataType
	GetOutputDataType(d ModelDescHandle, i uintptr) DataType
	GetInputFormat(d ModelDescHandle, i uintptr) Format
	GetOutputFormat(d ModelDescHandle, i uintptr) Format

	CreateDataset() (DatasetHandle, error)
	DestroyDataset(ds DatasetHandle) error
	AddDatasetBuffer(ds DatasetHandle, buf DataBufferHandle) error
	GetDatasetNumBuffers(ds DatasetHandle) uintptr
	GetDatasetBuffer(ds DatasetHandle, i uintptr) DataBufferHandle

	CreateDataBuffer(data unsafe.Pointer, size uintptr) (DataBufferHandle, error)
	DestroyDataBuffer(buf DataBufferHandle) error
	UpdateDataBuffer(buf DataBufferHandle, data unsafe.Pointer, size uintptr) error
	GetDataBufferAddr(buf DataBufferHandle) unsafe.Pointer
	GetDataBufferSizeV2(buf DataBufferHandle) uintptr

	// Execute runs the model synchronously.
	Execute(id ModelID, in, out DatasetHandle) error
	// ExecuteAsync queues the model on stream s.
	ExecuteAsync(id ModelID, in, out DatasetHandle, s StreamHandle) error
}
