package hcclsim_test

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
	"github.com/ascend-go/cann/internal/npuhook"
)

// npuEnv is the conformance env of ranks as devices of one fallback NPU,
// each rank on its own locked goroutine.
type npuEnv struct {
	npu *fallback.NPU
	sim *hcclsim.Sim
}

func (e *npuEnv) Backend() hccl.Backend { return e.sim }

// ConcurrentGroups: every rank is a goroutine on its own thread, so
// groups never wait for each other's calls (hccltest.ConcurrentEnv).
func (e *npuEnv) ConcurrentGroups() bool { return true }
func (e *npuEnv) MaxRanks() int          { return npuhook.Of(e.npu).DeviceCount() }
func (e *npuEnv) Live() int              { return e.sim.Live() }

func (e *npuEnv) Devices(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i % npuhook.Of(e.npu).DeviceCount())
	}
	return out
}

func (e *npuEnv) OpenRank(rank int, dev int32) (hccltest.Rank, error) {
	if err := e.npu.SetDevice(dev); err != nil {
		return nil, err
	}
	s, err := e.npu.CreateStream()
	if err != nil {
		return nil, err
	}
	return &npuRank{npu: e.npu, dev: dev, s: s}, nil
}

// npuRank is one rank's device and stream; used from its goroutine only.
type npuRank struct {
	npu  *fallback.NPU
	dev  int32
	s    acl.StreamHandle
	gate chan struct{}
}

// Hold blocks the stream with a task until Release.
func (r *npuRank) Hold() error {
	r.gate = make(chan struct{})
	g := r.gate
	_, err := npuhook.Of(r.npu).Enqueue(r.s, "hold", func() error { <-g; return nil })
	return err
}

// Release lets the held stream run on.
func (r *npuRank) Release() error {
	close(r.gate)
	return nil
}

func (r *npuRank) Stream() acl.StreamHandle { return r.s }
func (r *npuRank) Sync() error              { return r.npu.SynchronizeStream(r.s) }
func (r *npuRank) MemType() hccl.MemType    { return hccl.MemDevice }

func (r *npuRank) Alloc(size uintptr) (unsafe.Pointer, error) {
	return r.npu.Malloc(max(size, 1), acl.MemMallocHugeFirst)
}

func (r *npuRank) Free(p unsafe.Pointer) error { return r.npu.Free(p) }

func (r *npuRank) Write(dst unsafe.Pointer, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return r.npu.Memcpy(dst, uintptr(len(src)), unsafe.Pointer(&src[0]), uintptr(len(src)), acl.MemcpyHostToDevice)
}

func (r *npuRank) Read(dst []byte, src unsafe.Pointer) error {
	if len(dst) == 0 {
		return nil
	}
	return r.npu.Memcpy(unsafe.Pointer(&dst[0]), uintptr(len(dst)), src, uintptr(len(dst)), acl.MemcpyDeviceToHost)
}

func (r *npuRank) Close() error {
	err := r.npu.SynchronizeStream(r.s)
	if e := r.npu.DestroyStream(r.s); err == nil {
		err = e
	}
	if e := r.npu.ResetDevice(r.dev); err == nil {
		err = e
	}
	return err
}

// WithSoc is a second model over the same NPU whose devices are of SoC
// name (hccltest.SocEnv).
func (e *npuEnv) WithSoc(name string) (hccltest.Env, func(), error) {
	sim := hcclsim.New(e.npu, hcclsim.Options{ExecTimeout: testTimeout, ConnectTimeout: testTimeout, SocName: name})
	return &npuEnv{npu: e.npu, sim: sim}, func() { _ = sim.Close() }, nil
}
