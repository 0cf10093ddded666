package fallback

import (
	"time"

	"github.com/ascend-go/cann/acl"
)

// Defaults of New.
const (
	DefaultDevices      = 2
	DefaultDeviceMemory = 4 << 30 // bytes per device
	DefaultHostMemory   = 4 << 30 // bytes of pinned host memory (MallocHost)
	// DefaultSocName is what GetSocName reports and, unless
	// hcclsim.Options.SocName says otherwise, the SoC the HCCL fallback
	// models (one SoC per fallback): an Atlas A3 (Ascend910_9391 maps to
	// DEV_TYPE_910_93, hcomm platform/inc/adapter/adapter_hal.h:50-57,
	// SOC_VER_CONVERT), because the HCCL buffer windows the SDK offers
	// (HcclCommRegister, hccl.Comm.OpenWindow, engram's ZeroCopy) exist on
	// an A3 only (hcomm legacy hccl_communicator_host.cc:9282,9306,9329).
	DefaultSocName = "Ascend910_9391"
)

// Default per-device resource limits (WithResourceLimits). The public
// source leaves the numbers to the driver; these are generous.
const (
	DefaultMaxStreams = 2048
	DefaultMaxEvents  = 65536
)

// Limits on the options of New.
const (
	MaxDevices = 64
	// MaxMemory bounds one arena: the allocator packs block sizes and
	// offsets, in 512-byte units, into 32 bits each.
	MaxMemory = 1 << 40
)

// config is what the options set.
type config struct {
	devices    int
	devMem     uintptr
	hostMem    uintptr
	soc        string
	version    [3]int32
	clock      func() time.Time
	allocFault []fault
	taskFault  []fault
	shareable  bool // device arenas are memfd files (arena_file.go)
	profile    bool // record task device times (profile.go)
	pedantic   bool // report what the device tolerates but is almost always a bug
	maxStreams int  // streams per device (CreateStream), 0: DefaultMaxStreams
	maxEvents  int  // events per device (CreateEvent*), 0: DefaultMaxEvents
	// execTimeout bounds an execution of a model with unknown dims
	// (WithModelExecuteTimeout, model_dynamic.go); 0: the default, < 0:
	// unbounded.
	execTimeout time.Duration
}

type fault struct {
	nth  int
	code acl.Code
}

func defaultConfig() config {
	return config{
		devices: DefaultDevices,
		devMem:  DefaultDeviceMemory,
		hostMem: DefaultHostMemory,
		soc:     DefaultSocName,
		version: [3]int32{1, 15, 0},
		clock:   time.Now,
	}
}

// Option configures New.
type Option func(*config)

// WithDevices sets the number of devices (1 to MaxDevices; default 2).
func WithDevices(n int) Option { return func(c *config) { c.devices = n } }

// WithDeviceMemory sets each device's memory capacity in bytes (default
// 4 GiB). The address space is reserved at New; pages cost memory only
// once touched.
func WithDeviceMemory(bytes uintptr) Option { return func(c *config) { c.devMem = bytes } }

// WithHostMemory sets the capacity of the pinned host arena that MallocHost
// draws from (default 4 GiB, reserved like device memory).
func WithHostMemory(bytes uintptr) Option { return func(c *config) { c.hostMem = bytes } }

// WithSocName sets what GetSocName reports (default DefaultSocName), and
// so the SoC an hcclsim.Sim over this NPU models ("Ascend910B1", an Atlas
// A2, has no buffer windows).
func WithSocName(name string) Option { return func(c *config) { c.soc = name } }

// WithVersion sets what GetVersion reports (default 1.15.0).
func WithVersion(major, minor, patch int32) Option {
	return func(c *config) { c.version = [3]int32{major, minor, patch} }
}

// WithClock replaces time.Now as the source of event timestamps, so tests
// can make EventElapsedTime deterministic. The function must be safe for
// concurrent use.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithAllocFault makes the k-th allocation (Malloc or MallocHost, counted
// from 1 since New) fail with code (ACL_ERROR_RT_MEMORY_ALLOCATION when code
// is 0). It may be given several times.
func WithAllocFault(k int, code acl.Code) Option {
	return func(c *config) { c.allocFault = append(c.allocFault, fault{k, code}) }
}

// WithTaskFault makes the k-th stream task (MemcpyAsync, MemsetAsync, a
// model or HCCL task, counted from 1 since New in the order they are
// queued) fail with code (ACL_ERROR_RT_TS_ERROR when code is 0) when its
// stream reaches it.
// It may be given several times.
func WithTaskFault(k int, code acl.Code) Option {
	return func(c *config) { c.taskFault = append(c.taskFault, fault{k, code}) }
}

// WithPedantic makes the NPU refuse what the device tolerates but is almost
// always a bug, with an error whose message starts "pedantic:" and says
// what the device would have done instead: an asynchronous copy touching
// pageable (plain) host memory, which the device turns into a stream
// synchronize plus a synchronous copy (ACL_ERROR_RT_PARAM_INVALID); a
// synchronous copy whose kind disagrees with where the pointers live,
// which the device ignores, and an asynchronous one whose kind the device
// corrects (ACL_ERROR_RT_INVALID_MEMORY_TYPE), including a model IO in host
// memory that GE copies with ACL_MEMCPY_DEVICE_TO_DEVICE (the ACL layer
// passes every model IO as device memory). Off by default, so that a
// program behaves as on the device.
func WithPedantic() Option { return func(c *config) { c.pedantic = true } }

// WithResourceLimits sets how many streams (aclrtCreateStream) and events
// (aclrtCreateEvent*) one device holds at once; one more is
// ACL_ERROR_RT_NO_STREAM_RESOURCE 207008 or ACL_ERROR_RT_NO_EVENT_RESOURCE
// 207007 (the driver's RT_ERROR_DRV_NO_STREAM_RESOURCES /
// NO_EVENT_RESOURCES, hicann/runtime src/runtime/core/src/common/
// errcode_manage.cc:93-94, 576-577). 0 keeps the default (DefaultMaxStreams,
// DefaultMaxEvents).
func WithResourceLimits(streams, events int) Option {
	return func(c *config) { c.maxStreams, c.maxEvents = streams, events }
}
