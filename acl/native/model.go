package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

// msym indexes the symbol table of the model API.
type msym int

const (
	msQuerySizeFromMem msym = iota
	msLoadFromMem
	msLoadFromMemWithMem
	msCreateConfigHandle
	msSetConfigOpt
	msLoadWithConfig
	msDestroyConfigHandle
	msUnload
	msCreateDesc
	msGetDesc
	msDestroyDesc
	msGetNumInputs
	msGetNumOutputs
	msGetInputSizeByIndex
	msGetOutputSizeByIndex
	msGetInputDims
	msGetOutputDims
	msGetInputNameByIndex
	msGetOutputNameByIndex
	msGetInputIndexByName
	msGetInputDataType
	msGetOutputDataType
	msGetInputFormat
	msGetOutputFormat
	msCreateDataset
	msDestroyDataset
	msAddDatasetBuffer
	msGetDatasetNumBuffers
	msGetDatasetBuffer
	msCreateDataBuffer
	msDestroyDataBuffer
	msUpdateDataBuffer
	msGetDataBufferAddr
	msGetDataBufferSizeV2
	msExecute
	msExecuteAsync
	msGetDynamicBatch
	msGetInputDynamicGearCount
	msGetInputDynamicDims
	msSetDynamicBatchSize
	msGetCurOutputDims
	msSetDatasetTensorDesc
	msGetDatasetTensorDesc
	msGetInputDimsV2
	msGetInputDimsRange
	msGetDynamicHW
	msSetDynamicHWSize
	msSetInputDynamicDims
	numModelSyms
)

// modelSyms are the C names of the model API. All are optional: a runtime
// without libacl_mdl.so still opens, and the model methods then report
// ACL_ERROR_API_NOT_SUPPORT (or their zero value, for the C functions that
// return no aclError).
var modelSyms = [numModelSyms]string{
	msQuerySizeFromMem:     "aclmdlQuerySizeFromMem",
	msLoadFromMem:          "aclmdlLoadFromMem",
	msLoadFromMemWithMem:   "aclmdlLoadFromMemWithMem",
	msCreateConfigHandle:   "aclmdlCreateConfigHandle",
	msSetConfigOpt:         "aclmdlSetConfigOpt",
	msLoadWithConfig:       "aclmdlLoadWithConfig",
	msDestroyConfigHandle:  "aclmdlDestroyConfigHandle",
	msUnload:               "aclmdlUnload",
	msCreateDesc:           "aclmdlCreateDesc",
	msGetDesc:              "aclmdlGetDesc",
	msDestroyDesc:          "aclmdlDestroyDesc",
	msGetNumInputs:         "aclmdlGetNumInputs",
	msGetNumOutputs:        "aclmdlGetNumOutputs",
	msGetInputSizeByIndex:  "aclmdlGetInputSizeByIndex",
	msGetOutputSizeByIndex: "aclmdlGetOutputSizeByIndex",
	msGetInputDims:         "aclmdlGetInputDims",
	msGetOutputDims:        "aclmdlGetOutputDims",
	msGetInputNameByIndex:  "aclmdlGetInputNameByIndex",
	msGetOutputNameByIndex: "aclmdlGetOutputNameByIndex",
	msGetInputIndexByName:  "aclmdlGetInputIndexByName",
	msGetInputDataType:     "aclmdlGetInputDataType",
	msGetOutputDataType:    "aclmdlGetOutputDataType",
	msGetInputFormat:       "aclmdlGetInputFormat",
	msGetOutputFormat:      "aclmdlGetOutputFormat",
	msCreateDataset:        "aclmdlCreateDataset",
	msDestroyDataset:       "aclmdlDestroyDataset",
	msAddDatasetBuffer:     "aclmdlAddDatasetBuffer",
	msGetDatasetNumBuffers: "aclmdlGetDatasetNumBuffers",
	msGetDatasetBuffer:     "aclmdlGetDatasetBuffer",
	msCreateDataBuffer:     "aclCreateDataBuffer",
	msDestroyDataBuffer:    "aclDestroyDataBuffer",
	msUpdateDataBuffer:     "aclUpdateDataBuffer",
	msGetDataBufferAddr:    "aclGetDataBufferAddr",
	msGetDataBufferSizeV2:  "aclGetDataBufferSizeV2",
	msExecute:              "aclmdlExecute",
	msExecuteAsync:         "aclmdlExecuteAsync",
	// Dynamic batch and dims (acl_mdl.h).
	msGetDynamicBatch:          "aclmdlGetDynamicBatch",
	msGetInputDynamicGearCount: "aclmdlGetInputDynamicGearCount",
	msGetInputDynamicDims:      "aclmdlGetInputDynamicDims",
	msSetDynamicBatchSize:      "aclmdlSetDynamicBatchSize",
	msGetCurOutputDims:         "aclmdlGetCurOutputDims",
	// Unknown dims, ranges and image-size / dims gears (model_dynamic.go).
	msSetDatasetTensorDesc: "aclmdlSetDatasetTensorDesc",
	msGetDatasetTensorDesc: "aclmdlGetDatasetTensorDesc",
	msGetInputDimsV2:       "aclmdlGetInputDimsV2",
	msGetInputDimsRange:    "aclmdlGetInputDimsRange",
	msGetDynamicHW:         "aclmdlGetDynamicHW",
	msSetDynamicHWSize:     "aclmdlSetDynamicHWSize",
	msSetInputDynamicDims:  "aclmdlSetInputDynamicDims",
}

// ModelSymbols lists the C functions of the model API, all optional.
func ModelSymbols() []string { return append([]string(nil), modelSyms[:]...) }

// minvoke is invoke for the model API.
func (b *Backend) minvoke(id msym, f *dl.Frame, n int) error {
	if b == nil {
		return acl.NilHandle(modelSyms[id], "native backend")
	}
	return b.status(modelSyms[id], b.mdl[id], f, n)
}

// mvalue runs a model function that returns a value rather than an
// aclError; ok is false when the symbol is missing or the backend closed.
func (b *Backend) mvalue(id msym, f *dl.Frame, n int) (r uintptr, ok bool) {
	if b == nil {
		return 0, false
	}
	fn := b.mdl[id]
	if !b.ready(fn) {
		return 0, false
	}
	return dl.CallRaw(fn, f, n), true
}

// mcreate runs a model-API constructor returning a pointer.
func (b *Backend) mcreate(id msym, f *dl.Frame, n int) (uintptr, error) {
	if b == nil {
		return 0, acl.NilHandle(modelSyms[id], "native backend")
	}
	return b.create(modelSyms[id], b.mdl[id], f, n)
}

// QuerySizeFromMem calls aclmdlQuerySizeFromMem.
func (b *Backend) QuerySizeFromMem(model unsafe.Pointer, modelSize uintptr) (workSize, weightSize uintptr, err error) {
	dl.Escape(model)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(model), modelSize, f.Outp(0), f.Outp(1)
	err = b.minvoke(msQuerySizeFromMem, f, 4)
	workSize, weightSize = uintptr(f.Out[0]), uintptr(f.Out[1])
	dl.PutFrame(f)
	runtime.KeepAlive(model)
	if err != nil {
		return 0, 0, err
	}
	return workSize, weightSize, nil
}

// LoadFromMem calls aclmdlLoadFromMem.
func (b *Backend) LoadFromMem(model unsafe.Pointer, modelSize uintptr) (acl.ModelID, error) {
	dl.Escape(model)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(model), modelSize, f.Outp(0)
	err := b.minvoke(msLoadFromMem, f, 3)
	id := acl.ModelID(uint32(f.Out[0]))
	dl.PutFrame(f)
	runtime.KeepAlive(model)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// LoadFromMemWithMem calls aclmdlLoadFromMemWithMem.
func (b *Backend) LoadFromMemWithMem(model unsafe.Pointer, modelSize uintptr, work unsafe.Pointer, workSize uintptr, weight unsafe.Pointer, weightSize uintptr) (acl.ModelID, error) {
	dl.Escape(model)
	dl.Escape(work)
	dl.Escape(weight)
	f := dl.GetFrame()
	f.Args = [10]uintptr{uintptr(model), modelSize, f.Outp(0), uintptr(work), workSize, uintptr(weight), weightSize}
	err := b.minvoke(msLoadFromMemWithMem, f, 7)
	id := acl.ModelID(uint32(f.Out[0]))
	dl.PutFrame(f)
	runtime.KeepAlive(model)
	runtime.KeepAlive(work)
	runtime.KeepAlive(weight)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// CreateConfigHandle calls aclmdlCreateConfigHandle.
func (b *Backend) CreateConfigHandle() (acl.ModelConfigHandle, error) {
	f := dl.GetFrame()
	h, err := b.mcreate(msCreateConfigHandle, f, 0)
	dl.PutFrame(f)
	return acl.ModelConfigHandle(h), err
}

// SetConfigOpt calls aclmdlSetConfigOpt. value points at the value
// (valueSize bytes); for a pointer-valued attribute it points at the
// pointer, which must stay valid until LoadWithConfig.
func (b *Backend) SetConfigOpt(h acl.ModelConfigHandle, attr acl.ModelConfigAttr, value unsafe.Pointer, valueSize uintptr) error {
	dl.Escape(value)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(h), uintptr(attr), uintptr(value), valueSize
	err := b.minvoke(msSetConfigOpt, f, 4)
	dl.PutFrame(f)
	runtime.KeepAlive(value)
	return err
}

// LoadWithConfig calls aclmdlLoadWithConfig.
func (b *Backend) LoadWithConfig(h acl.ModelConfigHandle) (acl.ModelID, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = uintptr(h), f.Outp(0)
	err := b.minvoke(msLoadWithConfig, f, 2)
	id := acl.ModelID(uint32(f.Out[0]))
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// DestroyConfigHandle calls aclmdlDestroyConfigHandle.
func (b *Backend) DestroyConfigHandle(h acl.ModelConfigHandle) error {
	return b.mcall(msDestroyConfigHandle, uintptr(h))
}

// Unload calls aclmdlUnload.
func (b *Backend) Unload(id acl.ModelID) error { return b.mcall(msUnload, uintptr(id)) }

// CreateDesc calls aclmdlCreateDesc.
func (b *Backend) CreateDesc() (acl.ModelDescHandle, error) {
	f := dl.GetFrame()
	h, err := b.mcreate(msCreateDesc, f, 0)
	dl.PutFrame(f)
	return acl.ModelDescHandle(h), err
}

// GetDesc calls aclmdlGetDesc.
func (b *Backend) GetDesc(d acl.ModelDescHandle, id acl.ModelID) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = uintptr(d), uintptr(id)
	err := b.minvoke(msGetDesc, f, 2)
	dl.PutFrame(f)
	return err
}

// DestroyDesc calls aclmdlDestroyDesc.
func (b *Backend) DestroyDesc(d acl.ModelDescHandle) error { return b.mcall(msDestroyDesc, uintptr(d)) }

// GetNumInputs calls aclmdlGetNumInputs.
func (b *Backend) GetNumInputs(d acl.ModelDescHandle) uintptr {
	return b.mvalue1(msGetNumInputs, uintptr(d))
}

// GetNumOutputs calls aclmdlGetNumOutputs.
func (b *Backend) GetNumOutputs(d acl.ModelDescHandle) uintptr {
	return b.mvalue1(msGetNumOutputs, uintptr(d))
}

// GetInputSizeByIndex calls aclmdlGetInputSizeByIndex.
func (b *Backend) GetInputSizeByIndex(d acl.ModelDescHandle, i uintptr) uintptr {
	return b.mvalue2(msGetInputSizeByIndex, uintptr(d), i)
}

// GetOutputSizeByIndex calls aclmdlGetOutputSizeByIndex.
func (b *Backend) GetOutputSizeByIndex(d acl.ModelDescHandle, i uintptr) uintptr {
	return b.mvalue2(msGetOutputSizeByIndex, uintptr(d), i)
}

// GetInputDims calls aclmdlGetInputDims, which fills *dims.
func (b *Backend) GetInputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return b.ioDims(msGetInputDims, d, i, dims)
}

// GetOutputDims calls aclmdlGetOutputDims, which fills *dims.
func (b *Backend) GetOutputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return b.ioDims(msGetOutputDims, d, i, dims)
}

func (b *Backend) ioDims(id msym, d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	p := unsafe.Pointer(dims)
	dl.Escape(p)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(d), i, uintptr(p)
	err := b.minvoke(id, f, 3)
	dl.PutFrame(f)
	runtime.KeepAlive(p)
	return err
}

// GetInputNameByIndex calls aclmdlGetInputNameByIndex ("" for NULL).
func (b *Backend) GetInputNameByIndex(d acl.ModelDescHandle, i uintptr) string {
	return goString(b.mvalue2(msGetInputNameByIndex, uintptr(d), i))
}

// GetOutputNameByIndex calls aclmdlGetOutputNameByIndex ("" for NULL).
func (b *Backend) GetOutputNameByIndex(d acl.ModelDescHandle, i uintptr) string {
	return goString(b.mvalue2(msGetOutputNameByIndex, uintptr(d), i))
}

// GetInputIndexByName calls aclmdlGetInputIndexByName.
func (b *Backend) GetInputIndexByName(d acl.ModelDescHandle, name string) (uintptr, error) {
	cs, err := cString(modelSyms[msGetInputIndexByName], name)
	if err != nil {
		return 0, err
	}
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(d), uintptr(unsafe.Pointer(&cs[0])), f.Outp(0)
	err = b.minvoke(msGetInputIndexByName, f, 3)
	v := uintptr(f.Out[0])
	dl.PutFrame(f)
	runtime.KeepAlive(cs)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// GetInputDataType calls aclmdlGetInputDataType (acl.DTUndefined when the
// library lacks it).
func (b *Backend) GetInputDataType(d acl.ModelDescHandle, i uintptr) acl.DataType {
	return acl.DataType(b.menum(msGetInputDataType, uintptr(d), i))
}

// GetOutputDataType calls aclmdlGetOutputDataType.
func (b *Backend) GetOutputDataType(d acl.ModelDescHandle, i uintptr) acl.DataType {
	return acl.DataType(b.menum(msGetOutputDataType, uintptr(d), i))
}

// GetInputFormat calls aclmdlGetInputFormat (acl.FormatUndefined when the
// library lacks it).
func (b *Backend) GetInputFormat(d acl.ModelDescHandle, i uintptr) acl.Format {
	return acl.Format(b.menum(msGetInputFormat, uintptr(d), i))
}

// GetOutputFormat calls aclmdlGetOutputFormat.
func (b *Backend) GetOutputFormat(d acl.ModelDescHandle, i uintptr) acl.Format {
	return acl.Format(b.menum(msGetOutputFormat, uintptr(d), i))
}

// CreateDataset calls aclmdlCreateDataset.
func (b *Backend) CreateDataset() (acl.DatasetHandle, error) {
	f := dl.GetFrame()
	h, err := b.mcreate(msCreateDataset, f, 0)
	dl.PutFrame(f)
	return acl.DatasetHandle(h), err
}

// DestroyDataset calls aclmdlDestroyDataset; the data buffers stay.
func (b *Backend) DestroyDataset(ds acl.DatasetHandle) error {
	return b.mcall(msDestroyDataset, uintptr(ds))
}

// AddDatasetBuffer calls aclmdlAddDatasetBuffer.
func (b *Backend) AddDatasetBuffer(ds acl.DatasetHandle, buf acl.DataBufferHandle) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = uintptr(ds), uintptr(buf)
	err := b.minvoke(msAddDatasetBuffer, f, 2)
	dl.PutFrame(f)
	return err
}

// GetDatasetNumBuffers calls aclmdlGetDatasetNumBuffers.
func (b *Backend) GetDatasetNumBuffers(ds acl.DatasetHandle) uintptr {
	return b.mvalue1(msGetDatasetNumBuffers, uintptr(ds))
}

// GetDatasetBuffer calls aclmdlGetDatasetBuffer (0 for NULL).
func (b *Backend) GetDatasetBuffer(ds acl.DatasetHandle, i uintptr) acl.DataBufferHandle {
	return acl.DataBufferHandle(b.mvalue2(msGetDatasetBuffer, uintptr(ds), i))
}

// CreateDataBuffer calls aclCreateDataBuffer. data is kept by the buffer:
// it must be device, pinned or registered memory, never Go memory.
func (b *Backend) CreateDataBuffer(data unsafe.Pointer, size uintptr) (acl.DataBufferHandle, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = uintptr(data), size
	h, err := b.mcreate(msCreateDataBuffer, f, 2)
	dl.PutFrame(f)
	return acl.DataBufferHandle(h), err
}

// DestroyDataBuffer calls aclDestroyDataBuffer.
func (b *Backend) DestroyDataBuffer(buf acl.DataBufferHandle) error {
	return b.mcall(msDestroyDataBuffer, uintptr(buf))
}

// UpdateDataBuffer calls aclUpdateDataBuffer (same memory rule as
// CreateDataBuffer).
func (b *Backend) UpdateDataBuffer(buf acl.DataBufferHandle, data unsafe.Pointer, size uintptr) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(buf), uintptr(data), size
	err := b.minvoke(msUpdateDataBuffer, f, 3)
	dl.PutFrame(f)
	return err
}

// GetDataBufferAddr calls aclGetDataBufferAddr (nil for NULL).
func (b *Backend) GetDataBufferAddr(buf acl.DataBufferHandle) unsafe.Pointer {
	return ptrOf(b.mvalue1(msGetDataBufferAddr, uintptr(buf)))
}

// GetDataBufferSizeV2 calls aclGetDataBufferSizeV2.
func (b *Backend) GetDataBufferSizeV2(buf acl.DataBufferHandle) uintptr {
	return b.mvalue1(msGetDataBufferSizeV2, uintptr(buf))
}

// Execute calls aclmdlExecute.
func (b *Backend) Execute(id acl.ModelID, in, out acl.DatasetHandle) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(id), uintptr(in), uintptr(out)
	err := b.minvoke(msExecute, f, 3)
	dl.PutFrame(f)
	return err
}

// ExecuteAsync calls aclmdlExecuteAsync.
func (b *Backend) ExecuteAsync(id acl.ModelID, in, out acl.DatasetHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(id), uintptr(in), uintptr(out), uintptr(s)
	err := b.minvoke(msExecuteAsync, f, 4)
	dl.PutFrame(f)
	return err
}

// GetDynamicBatch calls aclmdlGetDynamicBatch, which fills *batch (the
// 1032-byte aclmdlBatch).
func (b *Backend) GetDynamicBatch(d acl.ModelDescHandle, batch *acl.Batch) error {
	p := unsafe.Pointer(batch)
	dl.Escape(p)
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = uintptr(d), uintptr(p)
	err := b.minvoke(msGetDynamicBatch, f, 2)
	dl.PutFrame(f)
	runtime.KeepAlive(p)
	return err
}

// GetCurOutputDims calls aclmdlGetCurOutputDims, which fills *dims.
func (b *Backend) GetCurOutputDims(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return b.ioDims(msGetCurOutputDims, d, i, dims)
}

// GetInputDynamicGearCount calls aclmdlGetInputDynamicGearCount.
func (b *Backend) GetInputDynamicGearCount(d acl.ModelDescHandle, index uintptr) (uintptr, error) {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(d), index, f.Outp(0)
	err := b.minvoke(msGetInputDynamicGearCount, f, 3)
	v := uintptr(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// GetInputDynamicDims calls aclmdlGetInputDynamicDims with len(dims) as
// the gear count (dims may be empty: C then gets NULL).
func (b *Backend) GetInputDynamicDims(d acl.ModelDescHandle, index uintptr, dims []acl.IODims) error {
	var p unsafe.Pointer
	if len(dims) > 0 {
		p = unsafe.Pointer(&dims[0])
	}
	dl.Escape(p)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(d), index, uintptr(p), uintptr(len(dims))
	err := b.minvoke(msGetInputDynamicDims, f, 4)
	dl.PutFrame(f)
	runtime.KeepAlive(dims)
	return err
}

// SetDynamicBatchSize calls aclmdlSetDynamicBatchSize.
func (b *Backend) SetDynamicBatchSize(id acl.ModelID, ds acl.DatasetHandle, index uintptr, batch uint64) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(id), uintptr(ds), index, uintptr(batch)
	err := b.minvoke(msSetDynamicBatchSize, f, 4)
	dl.PutFrame(f)
	return err
}

// mcall runs a model function with one plain argument.
func (b *Backend) mcall(id msym, a uintptr) error {
	f := dl.GetFrame()
	f.Args[0] = a
	err := b.minvoke(id, f, 1)
	dl.PutFrame(f)
	return err
}

func (b *Backend) mvalue1(id msym, a uintptr) uintptr {
	f := dl.GetFrame()
	f.Args[0] = a
	r, _ := b.mvalue(id, f, 1)
	dl.PutFrame(f)
	return r
}

func (b *Backend) mvalue2(id msym, a0, a1 uintptr) uintptr {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = a0, a1
	r, _ := b.mvalue(id, f, 2)
	dl.PutFrame(f)
	return r
}

// menum runs a function returning a C enum; -1 (undefined) when the
// symbol is missing.
func (b *Backend) menum(id msym, a0, a1 uintptr) int32 {
	f := dl.GetFrame()
	f.Args[0], f.Args[1] = a0, a1
	r, ok := b.mvalue(id, f, 2)
	dl.PutFrame(f)
	if !ok {
		return -1
	}
	return int32(r)
}
