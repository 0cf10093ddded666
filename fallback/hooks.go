package fallback

import (
	"context"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Enqueue queues task on a stream of the calling thread's current context
// (the null handle is the context's default stream), with the checks of
// MemcpyAsync: a current context is required and the stream must be live
// and belong to it. The task runs on the stream's goroutine in order with
// the stream's other work. If it returns an error (or panics), the stream
// fails: the error's acl code (ACL_ERROR_RT_TS_ERROR when it carries none)
// becomes the stream's sticky error, reported by SynchronizeStream, and
// later tasks are skipped. Enqueue counts as a stream task for FailTask.
//
// Model execution and the HCCL model build their asynchronous operations
// on it.
func (n *NPU) Enqueue(s acl.StreamHandle, task func() error) error {
	return n.EnqueueOp(s, "Enqueue", task)
}

// EnqueueOp is Enqueue with the name of the operation (for example
// "aclmdlExecuteAsync") used in the messages of errors it causes.
func (n *NPU) EnqueueOp(s acl.StreamHandle, op string, task func() error) error {
	c, err := n.begin(op, true)
	if err != nil {
		return err
	}
	defer n.exit()
	if task == nil {
		return c.fail(acl.CodeInvalidParam, "nil task")
	}
	st, err := c.stream(s)
	if err != nil {
		return err
	}
	return c.enqueue(st, true, false, func(*stream) error { return task() })
}

// SynchronizeStreamContext is SynchronizeStream bounded by ctx: it returns
// ctx.Err() if ctx ends first.
func (n *NPU) SynchronizeStreamContext(ctx context.Context, s acl.StreamHandle) error {
	c, err := n.begin("aclrtSynchronizeStream", true)
	if err != nil {
		return err
	}
	defer n.exit()
	return c.syncStream(ctx, s, -1)
}

// DeviceBytes returns a view of [ptr, ptr+size) after checking the range
// lies inside one live device allocation or one host registration (memory
// the device can reach). dev is the device of device memory, -1 for
// registered host memory. A range that is not device-accessible, not live
// or runs past its allocation gives ACL_ERROR_RT_PARAM_INVALID or
// ACL_ERROR_RT_INVALID_MEMORY_TYPE. The view is valid until the memory is
// freed or the NPU closed; no current context is needed, so stream tasks
// may call it. Errors do not touch GetRecentErrMsg.
func (n *NPU) DeviceBytes(ptr unsafe.Pointer, size uintptr) (dev int32, b []byte, err error) {
	p, b, err := n.bytes("fallback.DeviceBytes", ptr, size)
	if err != nil {
		return -1, nil, err
	}
	if !p.DeviceAccessible() {
		return -1, nil, acl.Errorf("fallback.DeviceBytes", acl.CodeRTInvalidMemoryType, "0x%x is %s memory, which the device cannot access", uintptr(ptr), p.Place)
	}
	return p.Device, b, nil
}

// Bytes returns a view of [ptr, ptr+size) with its placement, checked like
// a copy operand: device, pinned and registered ranges must lie inside one
// live allocation or registration; a plain host range must not touch the
// arenas (its validity is the caller's business, as for copy()).
func (n *NPU) Bytes(ptr unsafe.Pointer, size uintptr) (Placement, []byte, error) {
	return n.bytes("fallback.Bytes", ptr, size)
}

func (n *NPU) bytes(op string, ptr unsafe.Pointer, size uintptr) (Placement, []byte, error) {
	c := call{n: n, op: op, tid: -1, quiet: true}
	if !n.enter() {
		return Placement{Place: PlaceInvalid, Device: -1}, nil, c.closedErr()
	}
	defer n.exit()
	if ptr == nil {
		return Placement{Place: PlaceInvalid, Device: -1}, nil, c.fail(acl.CodeInvalidParam, "null pointer")
	}
	l, err := c.checkRange("ptr", ptr, max(size, 1))
	if err != nil {
		return l.Placement, nil, err
	}
	return l.Placement, unsafe.Slice((*byte)(ptr), size), nil
}

// CountCopy adds a copy of bytes in direction d to the counters, for
// copies made by sibling subsystems (model IO, collectives) outside
// Memcpy.
func (n *NPU) CountCopy(d Direction, bytes uint64) { n.ctr.copied(d, bytes) }

// CountLaunch adds one kernel launch to the counters.
func (n *NPU) CountLaunch() { n.ctr.launches.Add(1) }

// CurrentDevice returns the device of the calling OS thread's current
// context (as GetDevice), or ACL_ERROR_RT_CONTEXT_NULL.
func (n *NPU) CurrentDevice() (int32, error) {
	c, err := n.begin("fallback.CurrentDevice", true)
	if err != nil {
		return -1, err
	}
	defer n.exit()
	return c.ctx.dev.id, nil
}

// DeviceCount is the number of devices, known without Init.
func (n *NPU) DeviceCount() int { return len(n.devs) }
