// Package zerocopy binds a loaded model's inputs and outputs to buffers
// once, so that every execution is a single aclmdlExecuteAsync that points
// the model's task arguments at those buffers instead of copying data
// (GE's zero-copy model IO).
//
// Bind sizes one device buffer per IO from the model description (or takes
// the caller's, WithInputs / WithOutputs) and builds the datasets once;
// Binding.RunAsync then costs one backend call and no allocation. Device
// buffers are zero copy; host buffers are accepted but make their IO
// copy-only (WithHostBuffers is the copy mode a zero-copy run is compared
// against); WithDeviceOnly refuses anything that would not be zero copy, WithAlwaysZeroCopy is GE's always_zero_copy rule for outputs.
//
// A model with unknown dims (-1 in its description) takes each run's input
// shapes with the data (WriteInputDims, SetInputShape) and reports its
// outputs' real shapes (ReadOutputDims, OutputShape); Bind sizes such IO
// from its dims range, or WithMaxBytes.
//
// The run-time mechanism a backend uses to honour a binding (offset
// records, task-argument refresh, copy-only IO, GE's size and reuse rules)
// is the backend's business and lives in an internal package; this package
// holds only what a user calls.
//
// # Concurrency
//
// A Binding is safe for concurrent use: runs, swaps and Close are
// serialized, and the Model serializes executions across all its Bindings.
package zerocopy
