// Package acl is the AscendCL runtime API for Go: error codes and types,
// the Backend interface, and an idiomatic layer on top of any Backend.
//
// # Two layers
//
// Backend is the C API one method per function, with the C semantics: the
// same argument checks and error codes (docs/misuse.md), and the current
// context kept per OS thread. Two implementations exist: the purego binding
// of libascendcl (package acl/native) and the host-memory NPU (package
// fallback). Every backend passes the conformance suite in acl/acltest.
//
// The idiomatic layer — Runtime, Device, Stream, Event, DeviceBuffer,
// HostBuffer, HostRegistration — is what programs normally use:
//
//	rt, err := acl.Init(backend, "")  // aclInit
//	defer rt.Close()                  // closes open devices, aclFinalize
//	dev, err := rt.OpenDevice(0)      // aclrtSetDevice + own context
//	buf, err := dev.Malloc(n, acl.MemMallocHugeFirst)
//	err = buf.CopyFromHost(data)
//
// # Threads
//
// The ACL current context belongs to an OS thread; goroutines move between
// threads. Every operation of a Device and of the handles it created locks
// the calling goroutine to its thread, makes the Device's context current,
// calls the backend and unlocks, so handles work from any goroutine without
// runtime.LockOSThread. Device.Do runs several raw Backend calls under one
// lock and bind. The thread is left with the Device's context current;
// code that mixes in raw Backend calls outside Do binds its own context.
//
// # Dynamic shapes
//
// A model built with unknown dims (ATC keeps -1 when asked; the fallback
// does so for an ONNX model whose shapes only a run fixes) reports -1 in
// its ModelDesc, with each input dim's range (ModelDesc.InputDimsRange).
// Each run takes its real input shapes from the input Dataset
// (Dataset.SetTensorDesc, aclmdlSetDatasetTensorDesc) and reports each
// output's real shape on the output Dataset (Dataset.TensorDesc,
// aclmdlGetDatasetTensorDesc). Models built with gears choose one per run:
// Model.SetDynamicBatchSize, Model.SetDynamicHW, Model.SetInputDynamicDims.
// zerocopy.Binding carries the shapes with the data (WriteInputDims,
// ReadOutputDims).
//
// # Ownership and errors
//
// Close is explicit and idempotent everywhere. A Runtime owns its Devices
// and a Device owns what it created, so closing the owner releases what the
// program forgot; no finalizers or cleanups are used (they would run ACL
// calls on a thread without the right context). Closing a buffer first
// waits for the streams that have asynchronous work on it. Methods of a
// closed or nil handle return an *Error with code ACL_ERROR_RT_INVALID_HANDLE
// and Op naming the method; errors from the backend are its *Error values,
// which match the sentinels (ErrInvalidParam, ErrInvalidHandle, …) with
// errors.Is; an *Error that reports another layer's error keeps it as its
// Cause (the fallback's *onnx.Error for an ONNX model it refuses), which
// errors.As and errors.Is reach. Waits that take a context.Context poll the backend in short
// bounded slices, so giving up leaves nothing blocked behind.
package acl
