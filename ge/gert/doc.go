// Package gert is GE's runtime-V2 vocabulary in Go: tensors whose data
// carries its owner (TensorData), the placements that data can have, the
// allocators an executor draws output memory from, and the V2 executor with
// GE's output policy.
//
// The names follow GE's runtime V2 (hicann/ge runtime/v2 and the
// exe_graph headers of graph_metadef): TensorPlacement, TensorData with its
// manager (get address, free, add a share), Tensor with origin and storage
// shapes and formats, and the lowering options AlwaysZeroCopy,
// AlwaysExternalAllocator and TrustShapeOnOutTensor.
//
// Ownership moves and is never copied. A TensorData is used through a
// pointer; Tensor.SetData and TensorData.MoveFrom take the data and leave the
// source empty, so the memory has exactly one owner and is freed exactly once.
// A TensorData is not safe for concurrent use (neither is GE's); hand it from
// one goroutine to another as a value moved into a fresh TensorData. Managers
// must be safe for concurrent use when data is shared across goroutines
// (RefCounted is).
package gert
