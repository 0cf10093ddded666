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
// A model with symbolic dims (an exported batch, image size or sequence
// length) is loaded once with Load and run at any shapes: Model.Run
// compiles one plan per tuple of input shapes (a bounded cache) and
// stages the runs whose shapes or control flow depend on the input values
// (NonZero, an If on data, a Loop of data-dependent length): compiled
// segments between host control steps, each branch and body compiled per
// tuple of its shapes, under the run's context and memory limit.
// Model.RunInto reuses the caller's output tensors, so a steady-state run
// allocates nothing. If, Loop and Scan read outer-scope
// values; sequences and optionals are import-time lists of tensors, and a
// model with sequence or optional inputs or outputs runs with
// Model.RunValues.
//
//	m, err := onnx.Load(data)
//	out, err := m.Run(ctx, inputs) // each input's Desc gives this run's shape
//
// Every refusal is an *Error naming the node, its op type, the opset and
// the reason (unsupported op, attribute, data type or dynamic shape); it
// unwraps to an *acl.Error (ACL_ERROR_GE_PARAM_INVALID, or
// ACL_ERROR_UNSUPPORTED_DATA_TYPE for a data type) and matches the
// sentinels ErrUnsupportedOp, ErrUnsupportedAttr, ErrUnsupportedDataType,
// ErrDynamicShape, ErrInvalidModel, ErrEmptyTensor, ErrShapeMismatch,
// ErrCanceled and ErrOutOfMemory with errors.Is.
//
// Import and Compile are safe for concurrent use; they share no state. A
// Model is safe for concurrent runs.
package onnx
