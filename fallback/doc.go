// Package fallback is a host-memory NPU: a pure-Go model of an Ascend
// machine that implements acl.Backend and enforces the rules the device
// enforces, so that a program that would fail on hardware fails in CI too,
// with the same error codes (docs/misuse.md is the source of truth).
//
// # What it models
//
//   - Devices with a memory capacity (WithDevices, WithDeviceMemory). Device
//     memory lives in one mmap'ed arena per device, outside the Go heap
//     (MAP_NORESERVE: a large capacity costs nothing until touched), with a
//     best-fit allocator that coalesces free blocks; every block is
//     512-byte aligned. MallocHost draws from a pinned host arena of its
//     own. Exceeding the capacity gives ACL_ERROR_RT_MEMORY_ALLOCATION.
//   - Pointer classification on every copy, in O(log n): device
//     memory of which device, pinned host memory, registered host memory
//     (HostRegister; its device address equals its host address), plain
//     host memory. Unknown, freed, interior (to Free) and out-of-range
//     pointers give ACL_ERROR_RT_PARAM_INVALID, never a crash.
//   - Copy kinds checked against the placements (ACL_MEMCPY_DEFAULT infers
//     the direction); asynchronous work refuses plain host memory.
//   - A current context per OS thread, as in ACL: SetDevice,
//     CreateContext and SetCurrentContext bind the calling thread (found
//     with gettid); a goroutine that moved to another thread without
//     binding gets ACL_ERROR_RT_CONTEXT_NULL. Callers hold
//     runtime.LockOSThread.
//   - Streams that run asynchronously and in order, each on its own
//     goroutine, with sticky errors; events with timestamps
//     (WithClock); synchronize with timeouts. A synchronize without a
//     deadline runs queued HCCL tasks itself while the stream's goroutine
//     is idle (still one at a time, in order): the caller's OS thread is
//     not parked and woken per collective (Counters.InlineTasks).
//   - Counters (Counters, ResetCounters), leaks released by ResetDevice,
//     Finalize and Close (Leaks), and fault injection (WithAllocFault,
//     WithTaskFault, FailAllocation, FailTask).
//
// Behaviour the C library leaves open is fixed here as follows: ResetDevice
// of the last SetDevice releases everything on the device, user contexts
// included; StreamWaitEvent on an event never recorded does not wait; a
// task whose memory was freed before it ran fails with
// ACL_ERROR_RT_DEVICE_MEM_ERROR; every memory attribute of GetMemInfo
// reports the device's one pool.
//
// # Machinery shared with the HCCL model
//
// What only the fallback's own subsystems need (queueing a task on a
// stream, checked views of device memory, pointer classification, the
// memory file behind shareable device memory, the communicators of a
// model's collective tasks, a model's zero-copy records) is not part of
// NPU's method set: it is reached through the module's internal/npuhook
// package, so no user can queue arbitrary stream work or fake the counters
// that prove zero copy.
//
// # Concurrency
//
// An *NPU is safe for concurrent use by many goroutines, like the C
// library. Calls that act on the current context use the calling OS
// thread's binding, so a goroutine must hold runtime.LockOSThread from its
// SetDevice (or SetCurrentContext) through the calls that depend on it.
// The copy path takes no lock beyond short read locks for classification
// and allocates nothing. Close waits for calls in progress and stream
// work.
package fallback
