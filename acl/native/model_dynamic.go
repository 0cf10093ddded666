package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

// The dynamic-shape half of the model API (acl_mdl.h @hicann/ge ffdcbc9:
// aclmdlSetDatasetTensorDesc l.400, aclmdlGetDatasetTensorDesc l.413,
// aclmdlSetDynamicHWSize l.1005, aclmdlSetInputDynamicDims l.1023,
// aclmdlGetInputDimsV2 l.1055, aclmdlGetInputDimsRange l.1068,
// aclmdlGetDynamicHW l.1232) and the readers of a tensor description
// (acl_base_mdl.h). All are optional symbols: a library without them makes
// the methods that return aclError report ACL_ERROR_API_NOT_SUPPORT
// (matching acl.ErrNotSupported), and the others their C failure value.

// SetDatasetTensorDesc calls aclmdlSetDatasetTensorDesc.
func (b *Backend) SetDatasetTensorDesc(ds acl.DatasetHandle, desc acl.TensorDescHandle, index uintptr) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(ds), uintptr(desc), index
	err := b.minvoke(msSetDatasetTensorDesc, f, 3)
	dl.PutFrame(f)
	return err
}

// GetDatasetTensorDesc calls aclmdlGetDatasetTensorDesc (0 for NULL).
func (b *Backend) GetDatasetTensorDesc(ds acl.DatasetHandle, index uintptr) acl.TensorDescHandle {
	return acl.TensorDescHandle(b.mvalue2(msGetDatasetTensorDesc, uintptr(ds), index))
}

// GetInputDimsV2 calls aclmdlGetInputDimsV2, which fills *dims.
func (b *Backend) GetInputDimsV2(d acl.ModelDescHandle, i uintptr, dims *acl.IODims) error {
	return b.ioDims(msGetInputDimsV2, d, i, dims)
}

// GetInputDimsRange calls aclmdlGetInputDimsRange, which fills *r (the
// 2056-byte aclmdlIODimsRange).
func (b *Backend) GetInputDimsRange(d acl.ModelDescHandle, i uintptr, r *acl.IODimsRange) error {
	return b.mout3(msGetInputDimsRange, uintptr(d), i, unsafe.Pointer(r))
}

// GetDynamicHW calls aclmdlGetDynamicHW, which fills *hw (the 2056-byte
// aclmdlHW).
func (b *Backend) GetDynamicHW(d acl.ModelDescHandle, index uintptr, hw *acl.HW) error {
	return b.mout3(msGetDynamicHW, uintptr(d), index, unsafe.Pointer(hw))
}

// SetDynamicHWSize calls aclmdlSetDynamicHWSize.
func (b *Backend) SetDynamicHWSize(id acl.ModelID, ds acl.DatasetHandle, index uintptr, height, width uint64) error {
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3], f.Args[4] = uintptr(id), uintptr(ds), index, uintptr(height), uintptr(width)
	err := b.minvoke(msSetDynamicHWSize, f, 5)
	dl.PutFrame(f)
	return err
}

// SetInputDynamicDims calls aclmdlSetInputDynamicDims with *dims (read
// during the call).
func (b *Backend) SetInputDynamicDims(id acl.ModelID, ds acl.DatasetHandle, index uintptr, dims *acl.IODims) error {
	p := unsafe.Pointer(dims)
	dl.Escape(p)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2], f.Args[3] = uintptr(id), uintptr(ds), index, uintptr(p)
	err := b.minvoke(msSetInputDynamicDims, f, 4)
	dl.PutFrame(f)
	runtime.KeepAlive(p)
	return err
}

// mout3 calls a model function (a, b, out) that fills the struct at out.
func (b *Backend) mout3(id msym, a0, a1 uintptr, out unsafe.Pointer) error {
	dl.Escape(out)
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = a0, a1, uintptr(out)
	err := b.minvoke(id, f, 3)
	dl.PutFrame(f)
	runtime.KeepAlive(out)
	return err
}

// ovalue runs a tensor-description reader returning a value; ok is false
// when the symbol is missing or the backend closed.
func (b *Backend) ovalue(id osym, args ...uintptr) (uintptr, bool) {
	if b == nil {
		return 0, false
	}
	fn := b.ops[id]
	if !b.ready(fn) {
		return 0, false
	}
	f := dl.GetFrame()
	n := copy(f.Args[:], args)
	r := dl.CallRaw(fn, f, n)
	dl.PutFrame(f)
	return r, true
}

// GetTensorDescType calls aclGetTensorDescType (acl.DTUndefined when the
// library lacks it).
func (b *Backend) GetTensorDescType(d acl.TensorDescHandle) acl.DataType {
	r, ok := b.ovalue(osGetTensorDescType, uintptr(d))
	if !ok {
		return acl.DTUndefined
	}
	return acl.DataType(int32(r))
}

// GetTensorDescFormat calls aclGetTensorDescFormat (acl.FormatUndefined
// when the library lacks it).
func (b *Backend) GetTensorDescFormat(d acl.TensorDescHandle) acl.Format {
	r, ok := b.ovalue(osGetTensorDescFormat, uintptr(d))
	if !ok {
		return acl.FormatUndefined
	}
	return acl.Format(int32(r))
}

// GetTensorDescNumDims calls aclGetTensorDescNumDims (0 when the library
// lacks it).
func (b *Backend) GetTensorDescNumDims(d acl.TensorDescHandle) uintptr {
	r, _ := b.ovalue(osGetTensorDescNumDims, uintptr(d))
	return r
}

// GetTensorDescDimV2 calls aclGetTensorDescDimV2.
func (b *Backend) GetTensorDescDimV2(d acl.TensorDescHandle, i uintptr) (int64, error) {
	if b == nil {
		return 0, acl.NilHandle("aclGetTensorDescDimV2", "native backend")
	}
	f := dl.GetFrame()
	f.Args[0], f.Args[1], f.Args[2] = uintptr(d), i, f.Outp(0)
	err := b.status(opSyms[osGetTensorDescDimV2], b.ops[osGetTensorDescDimV2], f, 3)
	v := int64(f.Out[0])
	dl.PutFrame(f)
	if err != nil {
		return 0, err
	}
	return v, nil
}
