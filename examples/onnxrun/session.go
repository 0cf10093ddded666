package main

import (
	"fmt"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/internal/examplecli"
)

// session is a fallback NPU with device 0 open and, after load, a model.
type session struct {
	picked cann.Picked
	npu    *fallback.NPU
	rt     *acl.Runtime
	dev    *acl.Device
	m      *acl.Model
}

// openSession opens the fallback (check refused every other backend) with
// one device as large as examplecli.FallbackDeviceMemory, before anything
// is imported, so that the model's sizes can be checked against what the
// device reports.
func openSession(cfg config) (*session, error) {
	b, err := examplecli.ResolveBackend(cfg.backend)
	if err == nil {
		b, err = b.FallbackOnly("onnxrun", "it runs ge models")
	}
	if err != nil {
		return nil, err
	}
	opts := []fallback.Option{fallback.WithDevices(1), fallback.WithDeviceMemory(examplecli.FallbackDeviceMemory())}
	if cfg.deviceProfile != "" {
		opts = append(opts, fallback.WithDeviceProfile())
	}
	p, err := b.Open(cann.Options{NoHCCL: true, Fallback: opts})
	if err != nil {
		return nil, err
	}
	se := &session{picked: p}
	var ok bool
	if se.npu, ok = p.Backend.(*fallback.NPU); !ok {
		_ = p.Close()
		return nil, fmt.Errorf("onnxrun: backend %T is not the fallback", p.Backend)
	}
	if se.rt, err = acl.Init(p.Backend, ""); err == nil {
		if se.dev, err = se.rt.OpenDevice(0); err != nil {
			_ = se.rt.Close()
		}
	}
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	return se, nil
}

// fits refuses a job of device bytes on the device and host bytes more
// on the host (the fallback's device memory is host memory, so both count
// there), before they are allocated.
func (se *session) fits(what string, device, host int64) error {
	if err := examplecli.CheckDevice(se.dev, what, device); err != nil {
		return err
	}
	total, ok := examplecli.Sum(device, host)
	if !ok {
		total = -1
	}
	return examplecli.CheckHost(what, total)
}

// load loads blob on device 0.
func (se *session) load(blob []byte) error {
	m, err := se.dev.LoadModel(blob)
	se.m = m
	return err
}

// Close unloads the model and releases the runtime and the NPU.
func (se *session) Close() {
	if se.m != nil {
		_ = se.m.Close()
	}
	_ = se.dev.Close()
	_ = se.rt.Close()
	_ = se.picked.Close()
}

// inputBytes is the size of the inputs at the given dims, as ge lays them
// out; false when a size overflows.
func inputBytes(dts []acl.DataType, dims [][]int64) (total, maxElems int64, ok bool) {
	for i, d := range dims {
		n, ok1 := examplecli.Product(d...)
		b, ok2 := examplecli.Product(n, int64(max(dts[i].Size(), 1)))
		if total, ok = examplecli.Sum(total, b); !ok || !ok1 || !ok2 {
			return 0, 0, false
		}
		maxElems = max(maxElems, n)
	}
	return total, maxElems, true
}

// ioBytes is the bytes of a compiled model's inputs and outputs.
func ioBytes(m *ge.CompiledModel) int64 {
	var n int64
	for _, d := range m.Inputs {
		n += d.Size
	}
	for _, d := range m.Outputs {
		n += d.Size
	}
	return n
}

// hostTemp is the host memory randomInput takes for an input of n
// elements besides its result: n float64 values and their bytes.
func hostTemp(n int64) int64 { return 16 * n }
