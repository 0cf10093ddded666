// Package ge is the graph engine: a small graph IR with a fluent builder,
// shape and dtype inference, reference kernels for every op, a compiler that
// assigns memory the way GE does (feature-map reuse by lifetime, zero-copy
// blocks for model inputs and outputs) and generates kernel tasks whose
// arguments are 8-byte address slots, and the versioned binary model format.
//
// A typical use:
//
//	g := ge.NewGraph("mlp")
//	x := g.Data("x", 0, acl.Float32, []int64{8, 64})
//	w := g.ConstFloat32("w1", acl.Float32, []int64{64, 128}, weights)
//	h := g.Relu(g.MatMul(x, w, ge.Name("fc1")))
//	g.Output(h)
//	m, err := ge.Compile(g)
//	blob, err := m.MarshalBinary()
//	m2, err := ge.ParseModel(blob)
//
// # Memory model of a compiled CompiledModel
//
// A model addresses two regions. The weight region (MemFixed, WeightSize
// bytes, its initial contents in CompiledModel.Weights) holds constants. The model
// memory region (MemorySize bytes) holds the feature map first,
// [0, MemorySize-ZeroCopySize), then the zero-copy IO blocks: the outputs in
// output order, then the inputs sorted ascending by size. Every block starts
// on a 512-byte boundary (MemAlignSize). Each Task argument is an 8-byte slot
// holding, at compile time, the logical offset of its tensor within its
// region; a runtime adds the region base when it loads the model and, for a
// zero-copy IO slot (MemModelIO), writes the caller's buffer address instead
// at every execution. IO whose block lies in the feature map (ZeroCopy false)
// is copied in and out by the runtime.
//
// # Running a model
//
// An executor allocates the regions, writes each task's argument table and
// runs the tasks in order: for every slot it resolves the address to a byte
// slice of device memory and calls RunTask (or KernelFor(op) for its own
// dispatch); a collective task (OpType.IsCollective, such as HcclAllReduce)
// has no kernel and runs with RunCollective through the rank's
// communicator. Package ge/getest has the reference interpreter (one host
// arena, or zero-copy with caller buffers), a brute-force checker of memory
// plans and the graphs used by the tests and benchmarks.
//
// # Errors
//
// Every failure is an *acl.Error: builder and compiler failures carry
// ACL_ERROR_GE_PARAM_INVALID (or ACL_ERROR_UNSUPPORTED_DATA_TYPE for a dtype
// an op does not support) and a message naming the node, such as
// `node "fc1" (MatMul): inner dims 64 and 32 differ`; kernel failures at run
// time carry ACL_ERROR_RT_AICORE_EXCEPTION; model parsing failures carry the
// codes described in docs/model-format.md.
//
// # Concurrency
//
// A Graph under construction is not safe for concurrent use; Compile only
// reads it, so several compiles of one unchanged graph may run at once. A
// compiled or parsed CompiledModel is immutable and safe for concurrent use by any
// number of readers and executors; descriptors and attributes are plain
// values.
package ge
