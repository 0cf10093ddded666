package hcclsim

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// memKind says what memory a buffer argument may live in.
type memKind uint8

const (
	memDevice memKind = iota // device memory of the rank's device
	memHost                  // host memory registered for device access (one-sided registrations of host memory)
	memOwn                   // either: memory the rank's device reaches (CopyLocal sources)
)

// env is what the simulator needs from the host-memory NPU it runs on: a
// checked view of memory, stream-ordered asynchronous tasks, and the
// calling thread's current device. The adapter over package fallback is
// one implementation; tests have a small one of their own.
type env interface {
	// view returns the bytes of [p, p+n) if the whole range lies inside one
	// live allocation of the given kind on device dev (dev is ignored for
	// host memory). n may be 0, in which case p must still be valid.
	view(dev int32, kind memKind, p unsafe.Pointer, n uint64) ([]byte, error)
	// region returns the base and size of the whole live allocation or
	// host registration that contains p, if it is memory of the given kind
	// on device dev: view succeeds for every range inside it (regions.go).
	region(dev int32, kind memKind, p unsafe.Pointer) (base uintptr, size uint64, err error)
	// enqueue appends task to stream s; the stream runs its tasks in order
	// on its own goroutine and a task's error fails the stream (sticky,
	// reported at synchronize). It returns an error when s is not a live
	// stream of device dev. The state reports, from any goroutine, whether
	// the stream has failed, after which it never runs the task if it has
	// not already.
	enqueue(dev int32, s acl.StreamHandle, task func() error) (streamState, error)
	// currentDevice is the device of the calling OS thread's current
	// context.
	currentDevice() (int32, error)
	// deviceCount bounds the device ids of CommInitAll.
	deviceCount() int
}

// ptrOf turns an address of device or registered memory back into a
// pointer. Such memory lives outside the Go heap (mmap arenas), so the
// garbage collector neither moves nor frees it; the indirection keeps vet's
// uintptr check quiet about this deliberate conversion.
func ptrOf(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }
