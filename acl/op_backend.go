package acl

// Single-op codes (acl_base.h).
const (
	CodeOpTypeNotMatch   Code = 100020
	CodeOpInputNotMatch  Code = 100021
	CodeOpOutputNotMatch Code = 100022
	CodeOpAttrNotMatch   Code = 100023
	CodeOpNotFound       Code = 100024
	CodeOpLoadFailed     Code = 100025
)

func init() {
	for c, s := range map[Code]string{
		CodeOpTypeNotMatch:   "ACL_ERROR_OP_TYPE_NOT_MATCH",
		CodeOpInputNotMatch:  "ACL_ERROR_OP_INPUT_NOT_MATCH",
		CodeOpOutputNotMatch: "ACL_ERROR_OP_OUTPUT_NOT_MATCH",
		CodeOpAttrNotMatch:   "ACL_ERROR_OP_ATTR_NOT_MATCH",
		CodeOpNotFound:       "ACL_ERROR_OP_NOT_FOUND",
		CodeOpLoadFailed:     "ACL_ERROR_OP_LOAD_FAILED",
	} {
		codeNames[c] = s
	}
}

// TensorDescHandle is an aclTensorDesc*.
type TensorDescHandle uintptr

// OpAttrHandle is an aclopAttr*.
type OpAttrHandle uintptr

// OpEngineType is aclopEngineType.
type OpEngineType int32

// aclopEngineType values.
const (
	OpEngineSys    OpEngineType = 0
	OpEngineAICore OpEngineType = 1
	OpEngineVector OpEngineType = 2
)

// OpCompileType is aclopCompileType.
type OpCompileType int32

// aclopCompileType values.
const (
	OpCompileSys          OpCompileType = 0
	OpCompileUnregistered OpCompileType = 1
)

// OpBackend is ACL's single-op API (acl/acl_op.h, acl/acl_op_compiler.h
// and the tensor descriptions of acl_base.h), one method per C function.
// Single-op execution is always zero copy with external memory: the
// caller's buffers are the op's inputs and outputs. A backend that lacks
// the API does not implement the interface, or returns errors matching
// ErrNotSupported (the native binding, when the library lacks the symbols).
type OpBackend interface {
	CreateTensorDesc(dt DataType, dims []int64, format Format) (TensorDescHandle, error) // aclCreateTensorDesc
	DestroyTensorDesc(d TensorDescHandle) error                                          // aclDestroyTensorDesc

	CreateOpAttr() (OpAttrHandle, error)                           // aclopCreateAttr
	DestroyOpAttr(a OpAttrHandle) error                            // aclopDestroyAttr
	SetOpAttrBool(a OpAttrHandle, name string, v bool) error       // aclopSetAttrBool
	SetOpAttrInt(a OpAttrHandle, name string, v int64) error       // aclopSetAttrInt
	SetOpAttrFloat(a OpAttrHandle, name string, v float32) error   // aclopSetAttrFloat
	SetOpAttrString(a OpAttrHandle, name string, v string) error   // aclopSetAttrString
	SetOpAttrListInt(a OpAttrHandle, name string, v []int64) error // aclopSetAttrListInt

	// CompileAndExecuteV2 is aclopCompileAndExecuteV2: compile (or find
	// compiled) op opType for these descriptions and attributes and launch
	// it on stream s over the given buffers. opPath "" passes NULL.
	CompileAndExecuteV2(opType string, inDesc []TensorDescHandle, in []DataBufferHandle,
		outDesc []TensorDescHandle, out []DataBufferHandle, attr OpAttrHandle,
		engine OpEngineType, compile OpCompileType, opPath string, s StreamHandle) error
}
