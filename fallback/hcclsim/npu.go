package hcclsim

import (
	"fmt"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/internal/npuhook"
)

// New returns the HCCL model over a fallback NPU: ranks are the NPU's
// devices, buffers its device memory (or host memory registered with it),
// operations its stream tasks. Close the Sim before the NPU. Its devices
// are the NPU's SoC (fallback.WithSocName) unless opts.SocName is set.
func New(npu *fallback.NPU, opts Options) *Sim {
	h := npuhook.Of(npu)
	if opts.SocName == "" && h != nil {
		opts.SocName = h.SocName()
	}
	return newSim(npuEnv{h}, opts)
}

// npuEnv adapts a fallback NPU (through its hooks) to env.
type npuEnv struct{ n npuhook.NPU }

func (e npuEnv) view(dev int32, kind memKind, p unsafe.Pointer, n uint64) ([]byte, error) {
	d, b, err := e.n.DeviceBytes(p, uintptr(n))
	if err != nil {
		return nil, err
	}
	switch {
	case kind == memOwn && d >= 0 && d != dev:
		return nil, fmt.Errorf("%p is memory of device %d, the rank is on device %d", p, d, dev)
	case kind == memDevice && d != dev:
		if d < 0 {
			return nil, fmt.Errorf("%p is registered host memory, not device memory", p)
		}
		return nil, fmt.Errorf("%p is memory of device %d, the rank is on device %d", p, d, dev)
	case kind == memHost && d >= 0:
		return nil, fmt.Errorf("%p is device memory, not registered host memory", p)
	}
	return b, nil
}

func (e npuEnv) region(dev int32, kind memKind, p unsafe.Pointer) (uintptr, uint64, error) {
	pl := e.n.Classify(p)
	if !pl.DeviceAccessible() || pl.Size == 0 {
		return 0, 0, fmt.Errorf("%p is %s memory, which the device cannot access", p, pl.Place)
	}
	// The whole block passes view's checks (live, of kind, on dev), so
	// every range inside it does.
	if _, err := e.view(dev, kind, ptrOf(pl.Base), uint64(pl.Size)); err != nil {
		return 0, 0, err
	}
	return pl.Base, uint64(pl.Size), nil
}

func (e npuEnv) enqueue(dev int32, s acl.StreamHandle, task func() error) (streamState, error) {
	st, err := e.n.Enqueue(s, "HCCL", task)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (e npuEnv) currentDevice() (int32, error) { return e.n.CurrentDevice() }

func (e npuEnv) deviceCount() int { return e.n.DeviceCount() }
