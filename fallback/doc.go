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
//   - Pointer classification (Classify) on every copy, in O(log n): device
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
//     (WithClock); synchronize with timeouts.
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
// # Hooks for sibling subsystems
//
// Model execution and the HCCL model build on these exported methods:
//
//   - Enqueue / EnqueueOp: a stream-ordered task with the context and stream
//     checks of MemcpyAsync; its error becomes the stream's sticky error.
//   - DeviceBytes: a checked []byte view of device-accessible memory (device
//     allocations and registered host memory), usable from stream tasks.
//   - Bytes and Classify: checked views and placement of any pointer.
//   - CountCopy and CountLaunch: counters for copies and kernel launches
//     made outside Memcpy, so tests can assert zero-copy execution.
//   - CurrentDevice: the device of the calling thread's current context.
//   - DeviceMemoryFile: where another process can map a device's memory
//     from (NPUs built WithShareableDeviceMemory), for ranks of a
//     multi-process HCCL communicator that read each other's memory.
//   - SynchronizeStreamContext: a stream synchronize bounded by a
//     context.Context.
//
// # Concurrency
//
// An *NPU is safe for concurrent use by many goroutines, like the C
// library. Calls that act on the current context use the calling OS
// thread's binding, so a goroutine must hold runtime.LockOSThread from its
// SetDevice (or SetCurrentContext) through the calls that depend on it.
// The copy path takes no lock beyond short read locks for classification
// and allocates nothing. Close waits for calls in progress and stream
// work; slices from DeviceBytes and Bytes must not be used after the
// memory is freed or the NPU closed.
package fallback
