package fallback

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/npuhook"
	"github.com/ascend-go/cann/internal/zcrt"
)

// The machinery the fallback's subsystems share (the HCCL model, tests that
// prove zero copy) is reached through package internal/npuhook, not through
// NPU's method set: a user cannot queue arbitrary work on a stream or fake
// the counters. hooks adapts an *NPU to npuhook.NPU; the methods it calls
// are documented there.
func init() {
	npuhook.Register(func(b any) npuhook.NPU {
		if n, ok := b.(*NPU); ok && n != nil {
			return hooks{n}
		}
		return nil
	})
}

type hooks struct{ n *NPU }

func (h hooks) Enqueue(s acl.StreamHandle, op string, task func() error) (npuhook.StreamState, error) {
	st, err := h.n.enqueueOpState(s, op, task)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (h hooks) DeviceBytes(ptr unsafe.Pointer, size uintptr) (int32, []byte, error) {
	return h.n.deviceBytes(ptr, size)
}

func (h hooks) Classify(ptr unsafe.Pointer) npuhook.Placement { return h.n.classify(ptr) }
func (h hooks) CurrentDevice() (int32, error)                 { return h.n.currentDevice() }
func (h hooks) DeviceCount() int                              { return h.n.deviceCount() }
func (h hooks) SocName() string                               { return h.n.cfg.soc }

func (h hooks) MemoryFile(dev int32) (npuhook.MemoryFile, error) { return h.n.memoryFile(dev) }

func (h hooks) RegisterCollective(device int32, group string, c ge.Collective) error {
	return h.n.registerCollective(device, group, c)
}

func (h hooks) UnregisterCollective(device int32, group string) error {
	return h.n.unregisterCollective(device, group)
}

func (h hooks) LoadedModels() []acl.ModelID { return h.n.loadedModels() }

func (h hooks) ModelLaunches(id acl.ModelID) ([]npuhook.ModelLaunch, error) {
	return h.n.modelLaunches(id)
}

func (h hooks) ModelRuntime(id acl.ModelID) (*zcrt.Runtime, error) { return h.n.modelRuntime(id) }

// enqueueTask is npuhook.NPU.Enqueue under the operation name "Enqueue",
// without the stream state.
func (n *NPU) enqueueTask(s acl.StreamHandle, task func() error) error {
	return n.enqueueOp(s, "Enqueue", task)
}

// enqueueOp is enqueueTask with the name of the operation (for example
// "aclmdlExecuteAsync") used in the messages of errors it causes.
func (n *NPU) enqueueOp(s acl.StreamHandle, op string, task func() error) error {
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

// deviceBytes is npuhook.NPU.DeviceBytes. Errors do not touch
// GetRecentErrMsg.
func (n *NPU) deviceBytes(ptr unsafe.Pointer, size uintptr) (dev int32, b []byte, err error) {
	p, b, err := n.bytes("fallback.DeviceBytes", ptr, size)
	if err != nil {
		return -1, nil, err
	}
	if !p.DeviceAccessible() {
		return -1, nil, acl.Errorf("fallback.DeviceBytes", acl.CodeRTInvalidMemoryType, "0x%x is %s memory, which the device cannot access", uintptr(ptr), p.Place)
	}
	return p.Device, b, nil
}

// bytes returns a view of [ptr, ptr+size) with its placement, checked like
// a copy operand: device, pinned and registered ranges must lie inside one
// live allocation or registration; a plain host range must not touch the
// arenas (its validity is the caller's business, as for copy()).
func (n *NPU) bytes(op string, ptr unsafe.Pointer, size uintptr) (npuhook.Placement, []byte, error) {
	c := call{n: n, op: op, tid: -1, quiet: true}
	if !n.enter() {
		return npuhook.Placement{Place: npuhook.PlaceInvalid, Device: -1}, nil, c.closedErr()
	}
	defer n.exit()
	if ptr == nil {
		return npuhook.Placement{Place: npuhook.PlaceInvalid, Device: -1}, nil, c.fail(acl.CodeInvalidParam, "null pointer")
	}
	l, err := c.checkRange("ptr", ptr, max(size, 1))
	if err != nil {
		return l.Placement, nil, err
	}
	return l.Placement, unsafe.Slice((*byte)(ptr), size), nil
}

// countCopy adds a copy of bytes in direction d to the counters, for
// copies made outside Memcpy (model IO).
func (n *NPU) countCopy(d Direction, bytes uint64) { n.ctr.copied(d, bytes) }

// countLaunch adds one kernel launch to the counters.
func (n *NPU) countLaunch() { n.ctr.launches.Add(1) }

// currentDevice is npuhook.NPU.CurrentDevice.
func (n *NPU) currentDevice() (int32, error) {
	c, err := n.begin("fallback.CurrentDevice", true)
	if err != nil {
		return -1, err
	}
	defer n.exit()
	return c.ctx.dev.id, nil
}

// deviceCount is the number of devices, known without Init.
func (n *NPU) deviceCount() int { return len(n.devs) }
