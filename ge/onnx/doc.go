// Package onnx imports ONNX models into ge graphs: the fallback's
// counterpart of ATC. Import decodes a ModelProto (with
// google.golang.org/protobuf and types generated from the ONNX schema),
// turns initializers into weights and graph inputs into Data nodes that
// keep their ONNX names, converts every node with the attribute rules of
// the model's opset (7 to 21), folds every subgraph whose inputs are
// constant (shape arithmetic, Constant, Shape, Range, ...) with the same
// ge kernels the model runs, and names the model outputs after the ONNX
// graph outputs. Compile then gives the ge.Model a runtime loads.
//
//	m, err := onnx.Compile(data, onnx.WithExternalDataDir(dir))
//
// Every refusal is an *Error naming the node, its op type, the opset and
// the reason (unsupported op, attribute, data type or dynamic shape); it
// unwraps to an *acl.Error (ACL_ERROR_GE_PARAM_INVALID, or
// ACL_ERROR_UNSUPPORTED_DATA_TYPE for a data type) and matches the
// sentinels ErrUnsupportedOp, ErrUnsupportedAttr, ErrUnsupportedDataType,
// ErrDynamicShape and ErrInvalidModel with errors.Is.
//
// Import and Compile are safe for concurrent use; they share no state.
package onnx
