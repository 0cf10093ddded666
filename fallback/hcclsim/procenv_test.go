package hcclsim_test

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// procEnv is the conformance env of ranks as separate processes: rank i
// lives in process i of a procs.Cluster, on device i of that process's
// NPU, and every call runs there.
type procEnv struct {
	cl *procs.Cluster
}

func (e *procEnv) Backend() hccl.Backend { return e.cl.Backend() }
func (e *procEnv) MaxRanks() int         { return e.cl.Procs() }

func (e *procEnv) Devices(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func (e *procEnv) Live() int {
	total := 0
	for i := 0; i < e.cl.Procs(); i++ {
		n, err := e.cl.Proc(i).Live()
		if err != nil {
			return -1
		}
		total += n
	}
	return total
}

func (e *procEnv) OpenRank(rank int, dev int32) (hccltest.Rank, error) {
	p := e.cl.Proc(rank)
	e.cl.Backend().BindThread(p) // the suite locked this goroutine to its thread
	s, err := p.OpenRank(dev)
	if err != nil {
		return nil, err
	}
	return &procRank{p: p, dev: dev, s: s}, nil
}

// foreign turns an address in a rank process into an opaque pointer
// value; this process never dereferences it.
func foreign(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// procRank is one rank process's device and stream.
type procRank struct {
	p   *procs.Proc
	dev int32
	s   acl.StreamHandle
}

func (r *procRank) Stream() acl.StreamHandle { return r.s }
func (r *procRank) Sync() error              { return r.p.Sync(r.s) }
func (r *procRank) MemType() hccl.MemType    { return hccl.MemDevice }
func (r *procRank) Close() error             { return r.p.CloseRank(r.dev, r.s) }
func (r *procRank) Free(p unsafe.Pointer) error {
	return r.p.Free(uintptr(p))
}

func (r *procRank) Alloc(size uintptr) (unsafe.Pointer, error) {
	a, err := r.p.Alloc(uint64(size))
	return foreign(a), err
}

func (r *procRank) Write(dst unsafe.Pointer, src []byte) error { return r.p.Write(uintptr(dst), src) }

func (r *procRank) Read(dst []byte, src unsafe.Pointer) error {
	b, err := r.p.Read(uintptr(src), len(dst))
	copy(dst, b)
	return err
}

// Hold blocks the stream with a task until Release.
func (r *procRank) Hold() error { return r.p.HoldStream(r.s) }

// Release lets the held stream run on.
func (r *procRank) Release() error { return r.p.ReleaseStream(r.s) }

// WithSoc starts two rank processes whose devices are of SoC name
// (hccltest.SocEnv); release stops them.
func (e *procEnv) WithSoc(name string) (hccltest.Env, func(), error) {
	cl, err := procs.Start(procs.Options{Processes: 2, Devices: 2, Args: []string{"-test.run=^$"},
		ExecTimeout: testTimeout, ConnectTimeout: 10 * testTimeout, SocName: name})
	if err != nil {
		return nil, nil, err
	}
	return &procEnv{cl: cl}, func() { _ = cl.Close() }, nil
}
