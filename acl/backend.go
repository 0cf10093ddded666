package acl

import "unsafe"

// Backend is the runtime half of AscendCL, one method per C function, with
// the C semantics: the same argument checks, the same error codes, the same
// per-OS-thread current context. Two implementations exist: the purego
// binding of libascendcl (package acl/native) and the host-memory NPU
// (package fallback). Programs normally use the idiomatic layer (Device,
// Stream, Event, DeviceBuffer, HostBuffer) over a Backend instead of calling
// it directly.
//
// Errors are *Error values carrying the aclError code. Pointers are
// unsafe.Pointer so that Go memory passed in stays alive and tracked for the
// duration of a call; a backend never keeps a pointer into the Go heap after
// the call returns (asynchronous copies need pinned or registered host
// memory). Output parameters of the C functions are results here.
//
// Context-bound methods act on the calling OS thread's current context:
// callers that rely on it must hold runtime.LockOSThread across the calls,
// as the idiomatic layer does.
//
// Implementations are safe for concurrent use, like the C library.
type Backend interface {
	// Name says which implementation this is ("native", "fallback").
	Name() string

	Init(configPath string) error // aclInit; "" passes NULL
	Finalize() error              // aclFinalize

	SetDevice(deviceID int32) error                      // aclrtSetDevice
	ResetDevice(deviceID int32) error                    // aclrtResetDevice
	ResetDeviceForce(deviceID int32) error               // aclrtResetDeviceForce
	GetDevice() (int32, error)                           // aclrtGetDevice
	GetDeviceCount() (uint32, error)                     // aclrtGetDeviceCount
	GetRunMode() (RunMode, error)                        // aclrtGetRunMode
	CreateContext(deviceID int32) (ContextHandle, error) // aclrtCreateContext
	DestroyContext(ctx ContextHandle) error              // aclrtDestroyContext
	SetCurrentContext(ctx ContextHandle) error           // aclrtSetCurrentContext
	GetCurrentContext() (ContextHandle, error)           // aclrtGetCurrentContext

	CreateStream() (StreamHandle, error)                                // aclrtCreateStream
	DestroyStream(s StreamHandle) error                                 // aclrtDestroyStream
	SynchronizeStream(s StreamHandle) error                             // aclrtSynchronizeStream
	SynchronizeStreamWithTimeout(s StreamHandle, timeoutMs int32) error // aclrtSynchronizeStreamWithTimeout
	SetStreamFailureMode(s StreamHandle, mode StreamFailureMode) error  // aclrtSetStreamFailureMode

	CreateEvent() (EventHandle, error)                        // aclrtCreateEvent
	CreateEventWithFlag(flag EventFlag) (EventHandle, error)  // aclrtCreateEventWithFlag
	RecordEvent(e EventHandle, s StreamHandle) error          // aclrtRecordEvent
	SynchronizeEvent(e EventHandle) error                     // aclrtSynchronizeEvent
	StreamWaitEvent(s StreamHandle, e EventHandle) error      // aclrtStreamWaitEvent
	ResetEvent(e EventHandle, s StreamHandle) error           // aclrtResetEvent
	EventElapsedTime(start, end EventHandle) (float32, error) // aclrtEventElapsedTime (ms)
	DestroyEvent(e EventHandle) error                         // aclrtDestroyEvent

	Malloc(size uintptr, policy MemMallocPolicy) (unsafe.Pointer, error) // aclrtMalloc
	Free(devPtr unsafe.Pointer) error                                    // aclrtFree
	MallocHost(size uintptr) (unsafe.Pointer, error)                     // aclrtMallocHost
	FreeHost(hostPtr unsafe.Pointer) error                               // aclrtFreeHost
	Memcpy(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind MemcpyKind) error
	MemcpyAsync(dst unsafe.Pointer, destMax uintptr, src unsafe.Pointer, count uintptr, kind MemcpyKind, s StreamHandle) error
	Memset(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr) error
	MemsetAsync(devPtr unsafe.Pointer, maxCount uintptr, value int32, count uintptr, s StreamHandle) error
	GetMemInfo(attr MemAttr) (free, total uintptr, err error) // aclrtGetMemInfo

	DeviceCanAccessPeer(deviceID, peerDeviceID int32) (int32, error) // aclrtDeviceCanAccessPeer
	DeviceEnablePeerAccess(peerDeviceID int32, flags uint32) error   // aclrtDeviceEnablePeerAccess
	DeviceDisablePeerAccess(peerDeviceID int32) error                // aclrtDeviceDisablePeerAccess

	HostRegister(ptr unsafe.Pointer, size uint64, typ HostRegisterType) (devPtr unsafe.Pointer, err error) // aclrtHostRegister
	HostUnregister(ptr unsafe.Pointer) error                                                               // aclrtHostUnregister
	HostRegisterV2(ptr unsafe.Pointer, size uint64, flag HostRegFlag) error                                // aclrtHostRegisterV2
	HostGetDevicePointer(host unsafe.Pointer, flag uint32) (unsafe.Pointer, error)                         // aclrtHostGetDevicePointer

	GetRecentErrMsg() string                            // aclGetRecentErrMsg ("" for NULL)
	GetSocName() string                                 // aclrtGetSocName
	GetVersion() (major, minor, patch int32, err error) // aclrtGetVersion
}
