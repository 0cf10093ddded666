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
	if e.Op == "" {
		return fmt.Sprintf("onnx: %v: %s", e.Kind, e.Msg)
	}
	return fmt.Sprintf("onnx: node %q (%s, opset %d): %v: %s", e.Node, e.Op, e.Opset, e.Kind, e.Msg)
}

// Unwrap returns the kind sentinel and the *acl.Error.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.err} }

func newError(node, op string, opset int64, kind error, format string, args ...any) *Error {
	e := &Error{Node: node, Op: op, Opset: opset, Kind: kind, Msg: fmt.Sprintf(format, args...)}
	code := acl.CodeGEParamInvalid
	if kind == ErrUnsupportedDataType {
		code = acl.CodeUnsupportedDataType
	}
	e.err = &acl.Error{Op: "onnx.Import", Code: code, Msg: e.Error()}
	return e
}

// modelError is a refusal that no single node causes.
func modelError(kind error, format string, args ...any) *Error {
	return newError("", "", 0, kind, format, args...)
}
