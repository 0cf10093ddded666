package onnx

import (
	"errors"
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// Sentinels for the kinds of refusal, for errors.Is.
var (
	ErrUnsupportedOp       = errors.New("unsupported op")
	ErrUnsupportedAttr     = errors.New("unsupported attribute")
	ErrUnsupportedDataType = errors.New("unsupported data type")
	ErrDynamicShape        = errors.New("dynamic shape")
	ErrInvalidModel        = errors.New("invalid model")
	ErrEmptyTensor         = errors.New("empty tensors are not supported")
	// ErrCanceled: a run ended because its context did (a caller's
	// deadline, or the stream's timeout in the fallback); a Loop that would
	// never end ends this way. Its ACL code is
	// ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT.
	ErrCanceled = errors.New("run canceled")
	// ErrOutOfMemory: a run's tensor would exceed the memory the run may
	// use (ACL_ERROR_GE_MEMORY_ALLOCATION).
	ErrOutOfMemory = errors.New("out of memory")
	// ErrShapeMismatch: a run's input shapes break the model's contract (a
	// fixed dim differs, a symbolic dim takes two values, a dim is outside
	// its range): ACL_ERROR_GE_PARAM_INVALID.
	ErrShapeMismatch = errors.New("input shape mismatch")
)

// Error is an import failure. Node, Op and Opset are set when a node is
// at fault (Node may be the node's first output name when it has no
// name); Kind is one of the sentinels. It unwraps to Kind and to the
// *acl.Error that carries the ACL code.
type Error struct {
	Node  string
	Op    string
	Opset int64
	Kind  error
	Msg   string
	err   *acl.Error
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil *onnx.Error>"
	}
	if e.Op == "" {
		return fmt.Sprintf("onnx: %v: %s", e.Kind, e.Msg)
	}
	return fmt.Sprintf("onnx: node %q (%s, opset %d): %v: %s", e.Node, e.Op, e.Opset, e.Kind, e.Msg)
}

// Unwrap returns the kind sentinel and the *acl.Error.
func (e *Error) Unwrap() []error {
	if e == nil {
		return nil
	}
	return []error{e.Kind, e.err}
}

func newError(node, op string, opset int64, kind error, format string, args ...any) *Error {
	e := &Error{Node: node, Op: op, Opset: opset, Kind: kind, Msg: fmt.Sprintf(format, args...)}
	code := acl.CodeGEParamInvalid
	switch kind {
	case ErrUnsupportedDataType:
		code = acl.CodeUnsupportedDataType
	case ErrCanceled:
		code = acl.CodeGEModelExecuteTimeout
	case ErrOutOfMemory:
		code = acl.CodeGEMemoryAllocation
	}
	e.err = &acl.Error{Op: "onnx.Import", Code: code, Msg: e.Error()}
	return e
}

// modelError is a refusal that no single node causes.
func modelError(kind error, format string, args ...any) *Error {
	return newError("", "", 0, kind, format, args...)
}
