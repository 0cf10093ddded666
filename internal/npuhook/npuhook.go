// Package npuhook is the fallback NPU's machinery that the fallback's
// subsystems share and no user calls: queueing a task on a stream, viewing
// device memory, classifying pointers, sharing device memory with another
// process, registering the communicators a model's collective tasks use,
// and looking inside a loaded model's zero-copy runtime.
//
// Package fallback implements NPU on its *fallback.NPU and registers the
// lookup when it is initialized; the HCCL model (fallback/hcclsim) and the
// tests that prove zero copy reach it through Of. Keeping these hooks here
// keeps them out of fallback.NPU's public method set: nothing outside the
// module can queue arbitrary work on a stream or fake the counters that
// prove zero copy.
package npuhook

import (
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/internal/zcrt"
)

// NPU is what a fallback NPU gives its sibling subsystems. Every method is
// safe for concurrent use.
type NPU interface {
	// Enqueue queues task on a stream of the calling thread's current
	// context (the null handle is the context's default stream), with the
	// checks of MemcpyAsync: a current context is required and the stream
	// must be live and belong to it. The task runs in order with the
	// stream's other work, on the stream's goroutine or on a goroutine
	// that synchronizes the stream without a deadline (the fallback runs it
	// where the waiting caller already is), so it must not depend on the
	// goroutine or OS thread it runs on. If it returns an
	// error (or panics), the stream fails: the error's acl code
	// (ACL_ERROR_RT_TS_ERROR when it carries none) becomes the stream's
	// sticky error, reported at synchronize, and later tasks are skipped.
	// op names the operation in the messages of errors it causes. The
	// returned state observes the stream the task went to. It counts as a
	// stream task for fault injection (fallback.WithTaskFault).
	Enqueue(s acl.StreamHandle, op string, task func() error) (StreamState, error)

	// DeviceBytes returns a view of [ptr, ptr+size) after checking the
	// range lies inside one live device allocation or one host
	// registration (memory the device can reach). dev is the device of
	// device memory, -1 for registered host memory. A range that is not
	// device-accessible, not live or runs past its allocation gives
	// ACL_ERROR_RT_PARAM_INVALID or ACL_ERROR_RT_INVALID_MEMORY_TYPE. The
	// view is valid until the memory is freed or the NPU closed; no
	// current context is needed, so stream tasks may call it.
	DeviceBytes(ptr unsafe.Pointer, size uintptr) (dev int32, b []byte, err error)

	// Classify says where ptr lives: on which device, in pinned or
	// registered host memory, in plain host memory, or nowhere valid. No
	// current context is needed. After Close every pointer is
	// PlaceInvalid.
	Classify(ptr unsafe.Pointer) Placement

	// CurrentDevice returns the device of the calling OS thread's current
	// context, or ACL_ERROR_RT_CONTEXT_NULL.
	CurrentDevice() (int32, error)

	// DeviceCount is the number of devices, known without Init.
	DeviceCount() int

	// SocName is the SoC the NPU was configured as (fallback.WithSocName),
	// known without Init: the HCCL model takes it as its own.
	SocName() string

	// MemoryFile describes the memory file behind device dev's memory. It
	// fails with ACL_ERROR_RT_FEATURE_NOT_SUPPORT when the NPU was built
	// without fallback.WithShareableDeviceMemory, ACL_ERROR_INVALID_DEVICE
	// for a device out of range. The descriptor stays open until Close.
	MemoryFile(dev int32) (MemoryFile, error)

	// RegisterCollective makes c the communicator of group on device: a
	// collective task of that group in a model loaded on the device runs
	// through c when the model executes (looked up at every launch, so a
	// model may be loaded before its communicator exists). An empty group
	// is ge.DefaultGroup. Errors: ACL_ERROR_RT_INVALID_DEVICEID for a
	// device outside the NPU, ACL_ERROR_INVALID_PARAM for a nil c or a
	// group already registered on the device.
	RegisterCollective(device int32, group string, c ge.Collective) error

	// UnregisterCollective removes the communicator of group on device;
	// executions that launch a collective task of the group afterwards
	// fail. Removing a registration that does not exist gives
	// ACL_ERROR_INVALID_PARAM.
	UnregisterCollective(device int32, group string) error

	// LoadedModels returns the ids of the loaded models, ascending.
	LoadedModels() []acl.ModelID

	// ModelLaunches returns the launches of the last execution of a loaded
	// model, in task order (empty before the first execution): the proof
	// of zero copy, since a slot bound to a caller's device buffer holds
	// the buffer's address. Errors: ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
	ModelLaunches(id acl.ModelID) ([]ModelLaunch, error)

	// ModelRuntime returns the zero-copy runtime of a loaded model (its
	// offset records and argument memory). Read it only while no execution
	// of the model runs. Errors: ACL_ERROR_GE_EXEC_MODEL_ID_INVALID.
	ModelRuntime(id acl.ModelID) (*zcrt.Runtime, error)
}

// StreamState observes one stream from any goroutine.
type StreamState interface {
	// Failed reports whether the stream stopped on a failure (its context
	// is in ACL_STOP_ON_FAILURE) and the code. It is never cleared, so once
	// true it stays true: no task queued on the stream from then on, or
	// still waiting in its queue, will run. A failure in the default mode
	// (ACL_CONTINUE_ON_FAILURE) does not stop the stream.
	Failed() (bool, acl.Code)
}

// MemoryFile is what another process needs to map a device's memory: the
// file descriptor Fd of process Pid (open /proc/<Pid>/fd/<Fd>), mapped at
// Base in that process over Size bytes. A device address a of that process
// is offset a-Base in the file.
type MemoryFile struct {
	Pid  int
	Fd   int
	Base uintptr
	Size uintptr
}

// ModelLaunch is one kernel launch of a model's last execution, as the
// device saw it: the task and the addresses in its argument slots.
type ModelLaunch struct {
	Task  int
	Name  string
	Op    ge.OpType
	Args  []uint64        // one address per 8-byte slot
	Types []zcrt.AddrType // each slot's address type
}

var lookup atomic.Pointer[func(any) NPU]

// Register installs the function Of uses; package fallback calls it once,
// when it is initialized.
func Register(f func(any) NPU) { lookup.Store(&f) }

// Of returns the hooks of b, a *fallback.NPU; nil when b is anything else.
func Of(b any) NPU {
	f := lookup.Load()
	if f == nil {
		return nil
	}
	return (*f)(b)
}

// Place says where a pointer lives.
type Place uint8

// Places of memory.
const (
	// PlaceHost is plain host memory: anything the NPU did not allocate or
	// register (Go heap, stacks, other mappings).
	PlaceHost Place = iota
	// PlacePinned is a live MallocHost block.
	PlacePinned
	// PlaceRegistered is host memory registered with HostRegister or
	// HostRegisterV2; it is device-accessible at the same address.
	PlaceRegistered
	// PlaceDevice is a live Malloc block of one device.
	PlaceDevice
	// PlaceInvalid is inside the NPU's device or pinned arenas but not in
	// a live block: never allocated, freed, or in a block's padding.
	PlaceInvalid
)

var placeNames = [...]string{"host", "pinned host", "registered host", "device", "invalid"}

// String names the place ("device", "pinned host", ...).
func (p Place) String() string {
	if int(p) < len(placeNames) {
		return placeNames[p]
	}
	return "Place(" + strconv.Itoa(int(p)) + ")"
}

// TensorPlacement maps a pointer's place to GE's placement vocabulary
// (gert.TensorPlacement), the module's one mapping: device memory and host
// memory registered for device access are addressable by the device
// (OnDeviceHbm), plain and pinned host memory are not (OnHost), and an
// invalid pointer has no placement (PlacementEnd).
func (p Place) TensorPlacement() gert.TensorPlacement {
	switch p {
	case PlaceDevice, PlaceRegistered:
		return gert.OnDeviceHbm
	case PlaceHost, PlacePinned:
		return gert.OnHost
	}
	return gert.PlacementEnd
}

// Placement is the classification of a pointer.
type Placement struct {
	Place Place
	// Device is the device of PlaceDevice memory (and of PlaceInvalid
	// pointers inside a device's arena); -1 otherwise.
	Device int32
	// Base and Size are the allocation or registration containing the
	// pointer (zero for PlaceHost and PlaceInvalid).
	Base uintptr
	Size uintptr
}

// DeviceAccessible reports whether the device may read or write the memory
// (device memory or registered host memory).
func (p Placement) DeviceAccessible() bool {
	return p.Place == PlaceDevice || p.Place == PlaceRegistered
}
