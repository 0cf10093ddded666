package native

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/internal/dl"
)

var _ acl.OpBackend = (*Backend)(nil)

// osym indexes the single-op API's function pointers.
type osym int

const (
	osCreateTensorDesc osym = iota
	osDestroyTensorDesc
	osCreateAttr
	osDestroyAttr
	osSetAttrBool
	osSetAttrInt
	osSetAttrFloat
	osSetAttrString
	osSetAttrListInt
	osCompileAndExecuteV2
	osGetTensorDescType
	osGetTensorDescFormat
	osGetTensorDescNumDims
	osGetTensorDescDimV2
	numOpSyms
)

// opSyms are the C names of the single-op API (acl/acl_op.h,
// acl/acl_op_compiler.h, the tensor descriptions of acl_base.h). All are
// optional: without them the OpBackend methods report
// ACL_ERROR_API_NOT_SUPPORT.
var opSyms = [numOpSyms]string{
	osCreateTensorDesc:    "aclCreateTensorDesc",
	osDestroyTensorDesc:   "aclDestroyTensorDesc",
	osCreateAttr:          "aclopCreateAttr",
	osDestroyAttr:         "aclopDestroyAttr",
	osSetAttrBool:         "aclopSetAttrBool",
	osSetAttrInt:          "aclopSetAttrInt",
	osSetAttrFloat:        "aclopSetAttrFloat",
	osSetAttrString:       "aclopSetAttrString",
	osSetAttrListInt:      "aclopSetAttrListInt",
	osCompileAndExecuteV2: "aclopCompileAndExecuteV2",
	// Readers of a description (acl_base_mdl.h), for the model API's
	// output shapes (model_dynamic.go).
	osGetTensorDescType:    "aclGetTensorDescType",
	osGetTensorDescFormat:  "aclGetTensorDescFormat",
	osGetTensorDescNumDims: "aclGetTensorDescNumDims",
	osGetTensorDescDimV2:   "aclGetTensorDescDimV2",
}

// OpSymbols lists the C functions of the single-op API, all optional.
func OpSymbols() []string { return append([]string(nil), opSyms[:]...) }

// bindOps prepares the calls that cannot go through SyscallN:
// aclopSetAttrFloat takes a C float, passed in a floating-point register.
func (b *Backend) bindOps() {
	if fn := b.ops[osSetAttrFloat]; fn != 0 {
		purego.RegisterFunc(&b.setAttrFloat, fn)
	}
}

// ocall runs a single-op function returning an aclError.
//
//go:uintptrescapes
func (b *Backend) ocall(id osym, args ...uintptr) error {
	if b == nil {
		return acl.NilHandle(opSyms[id], "native backend")
	}
	f := dl.GetFrame()
	n := copy(f.Args[:], args)
	err := b.status(opSyms[id], b.ops[id], f, n)
	dl.PutFrame(f)
	return err
}

// ocreate runs a single-op constructor returning a pointer.
//
//go:uintptrescapes
func (b *Backend) ocreate(id osym, args ...uintptr) (uintptr, error) {
	if b == nil {
		return 0, acl.NilHandle(opSyms[id], "native backend")
	}
	f := dl.GetFrame()
	n := copy(f.Args[:], args)
	h, err := b.create(opSyms[id], b.ops[id], f, n)
	dl.PutFrame(f)
	return h, err
}

// odestroy runs a destructor returning void.
func (b *Backend) odestroy(id osym, h uintptr) error {
	if b == nil {
		return acl.NilHandle(opSyms[id], "native backend")
	}
	fn := b.ops[id]
	if fn == 0 || b.lib.Closed() {
		return b.unavailable(opSyms[id], fn)
	}
	purego.SyscallN(fn, h)
	return nil
}

// CreateTensorDesc calls aclCreateTensorDesc.
func (b *Backend) CreateTensorDesc(dt acl.DataType, dims []int64, format acl.Format) (acl.TensorDescHandle, error) {
	var p uintptr
	if len(dims) > 0 {
		p = uintptr(unsafe.Pointer(&dims[0]))
		dl.Escape(unsafe.Pointer(&dims[0]))
	}
	h, err := b.ocreate(osCreateTensorDesc, uintptr(dt), uintptr(len(dims)), p, uintptr(format))
	runtime.KeepAlive(dims)
	return acl.TensorDescHandle(h), err
}

// DestroyTensorDesc calls aclDestroyTensorDesc.
func (b *Backend) DestroyTensorDesc(d acl.TensorDescHandle) error {
	return b.odestroy(osDestroyTensorDesc, uintptr(d))
}

// CreateOpAttr calls aclopCreateAttr.
func (b *Backend) CreateOpAttr() (acl.OpAttrHandle, error) {
	h, err := b.ocreate(osCreateAttr)
	return acl.OpAttrHandle(h), err
}

// DestroyOpAttr calls aclopDestroyAttr.
func (b *Backend) DestroyOpAttr(a acl.OpAttrHandle) error {
	return b.odestroy(osDestroyAttr, uintptr(a))
}

// setAttr calls a setter with the attribute name as a C string.
func (b *Backend) setAttr(id osym, a acl.OpAttrHandle, name string, rest ...uintptr) error {
	cs, err := cString(opSyms[id], name)
	if err != nil {
		return err
	}
	err = b.ocall(id, append([]uintptr{uintptr(a), uintptr(unsafe.Pointer(&cs[0]))}, rest...)...)
	runtime.KeepAlive(cs)
	return err
}

// SetOpAttrBool calls aclopSetAttrBool.
func (b *Backend) SetOpAttrBool(a acl.OpAttrHandle, name string, v bool) error {
	var u uintptr
	if v {
		u = 1
	}
	return b.setAttr(osSetAttrBool, a, name, u)
}

// SetOpAttrInt calls aclopSetAttrInt.
func (b *Backend) SetOpAttrInt(a acl.OpAttrHandle, name string, v int64) error {
	return b.setAttr(osSetAttrInt, a, name, uintptr(v))
}

// SetOpAttrFloat calls aclopSetAttrFloat.
func (b *Backend) SetOpAttrFloat(a acl.OpAttrHandle, name string, v float32) error {
	if b == nil {
		return acl.NilHandle("aclopSetAttrFloat", "native backend")
	}
	const op = "aclopSetAttrFloat"
	if b.setAttrFloat == nil || b.lib.Closed() {
		return b.unavailable(op, b.ops[osSetAttrFloat])
	}
	cs, err := cString(op, name)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := b.setAttrFloat(uintptr(a), &cs[0], v)
	runtime.KeepAlive(cs)
	if r != 0 {
		return &acl.Error{Op: op, Code: acl.Code(r), Msg: dl.Message(b.fns[symGetRecentErrMsg])}
	}
	return nil
}

// SetOpAttrString calls aclopSetAttrString.
func (b *Backend) SetOpAttrString(a acl.OpAttrHandle, name string, v string) error {
	cv, err := cString(opSyms[osSetAttrString], v)
	if err != nil {
		return err
	}
	err = b.setAttr(osSetAttrString, a, name, uintptr(unsafe.Pointer(&cv[0])))
	runtime.KeepAlive(cv)
	return err
}

// SetOpAttrListInt calls aclopSetAttrListInt.
func (b *Backend) SetOpAttrListInt(a acl.OpAttrHandle, name string, v []int64) error {
	var p uintptr
	if len(v) > 0 {
		p = uintptr(unsafe.Pointer(&v[0]))
		dl.Escape(unsafe.Pointer(&v[0]))
	}
	err := b.setAttr(osSetAttrListInt, a, name, uintptr(len(v)), p)
	runtime.KeepAlive(v)
	return err
}

// CompileAndExecuteV2 calls aclopCompileAndExecuteV2. The handle arrays
// are passed as C arrays for the duration of the call.
func (b *Backend) CompileAndExecuteV2(opType string, inDesc []acl.TensorDescHandle, in []acl.DataBufferHandle,
	outDesc []acl.TensorDescHandle, out []acl.DataBufferHandle, attr acl.OpAttrHandle,
	engine acl.OpEngineType, compile acl.OpCompileType, opPath string, s acl.StreamHandle) error {
	const op = "aclopCompileAndExecuteV2"
	if len(inDesc) != len(in) || len(outDesc) != len(out) {
		return &acl.Error{Op: op, Code: acl.CodeInvalidParam, Msg: "native: descriptions and buffers differ in number"}
	}
	ct, err := cString(op, opType)
	if err != nil {
		return err
	}
	var cp []byte
	var pathp uintptr
	if opPath != "" {
		if cp, err = cString(op, opPath); err != nil {
			return err
		}
		pathp = uintptr(unsafe.Pointer(&cp[0]))
	}
	arr := func(p unsafe.Pointer, n int) uintptr {
		if n == 0 {
			return 0
		}
		dl.Escape(p)
		return uintptr(p)
	}
	err = b.ocall(osCompileAndExecuteV2,
		uintptr(unsafe.Pointer(&ct[0])),
		uintptr(len(in)), arr(unsafe.Pointer(unsafe.SliceData(inDesc)), len(inDesc)), arr(unsafe.Pointer(unsafe.SliceData(in)), len(in)),
		uintptr(len(out)), arr(unsafe.Pointer(unsafe.SliceData(outDesc)), len(outDesc)), arr(unsafe.Pointer(unsafe.SliceData(out)), len(out)),
		uintptr(attr), uintptr(engine), uintptr(compile), pathp, uintptr(s))
	runtime.KeepAlive(ct)
	runtime.KeepAlive(cp)
	runtime.KeepAlive(inDesc)
	runtime.KeepAlive(in)
	runtime.KeepAlive(outDesc)
	runtime.KeepAlive(out)
	return err
}
