package hcclsim_test

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/hccltest"
)

// procEnv is the conformance env of ranks as separate processes: rank i
// of a group lives in process devs[i] of a procs.Cluster (devs from
// Devices), on device devs[i] of that process's NPU, and every call runs
// there. Without concurrent, devs are 0..n-1: rank i is process i.
type procEnv struct {
	cl *procs.Cluster
	// concurrent leases processes to groups (Devices), so that groups
	// running at once (hccltest.ConcurrentEnv) hold disjoint processes: a
	// rank process serves one call at a time, so a group's blocking call
	// (a synchronize that waits out a timeout) would hold up the calls of
	// another group in the same process, past that group's own timeouts.
	concurrent bool
	maxRanks   int // 0: every process

	mu     sync.Mutex
	freed  chan struct{} // closed and replaced when a lease ends
	leased map[int]int   // process → ranks holding it
}

func (e *procEnv) Backend() hccl.Backend { return e.cl.Backend() }

// MaxRanks is maxRanks when set (a cluster with more processes than the
// suite's groups may use, for concurrent groups), else every process.
func (e *procEnv) MaxRanks() int {
	if e.maxRanks > 0 {
		return e.maxRanks
	}
	return e.cl.Procs()
}

// ConcurrentGroups is hccltest.ConcurrentEnv: true when Devices leases.
func (e *procEnv) ConcurrentGroups() bool { return e.concurrent }

// leaseWait bounds how long Devices waits for enough processes to free
// up before sharing leased ones (as every group did before leases):
// concurrent groups end within a few timeouts. The suite's sequential
// subtests hold one group at a time, so they never wait.
const leaseWait = 10 * testTimeout

// waitedOut counts the times Devices waited leaseWait out.
var waitedOut atomic.Int32

func (e *procEnv) Devices(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	if !e.concurrent {
		return out
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.leased == nil {
		e.leased = map[int]int{}
	}
	for deadline := time.Now().Add(leaseWait); ; {
		var free []int32
		for p := 0; p < e.cl.Procs() && len(free) < n; p++ {
			if e.leased[p] == 0 {
				free = append(free, int32(p))
			}
		}
		if time.Now().After(deadline) {
			waitedOut.Add(1)
			free = out // shared with the groups that hold them
		}
		if len(free) == n {
			for _, p := range free {
				e.leased[int(p)]++
			}
			return free
		}
		if e.freed == nil {
			e.freed = make(chan struct{})
		}
		ch := e.freed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
		e.mu.Lock()
	}
}

// release ends the lease of process p (a rank's Close).
func (e *procEnv) release(p int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.leased[p] == 0 {
		return
	}
	if e.leased[p]--; e.leased[p] == 0 {
		delete(e.leased, p)
	}
	if e.freed != nil {
		close(e.freed)
		e.freed = nil
	}
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
	idx := rank
	if e.concurrent {
		idx = int(dev) // Devices leased process dev
	}
	p := e.cl.Proc(idx)
	e.cl.Backend().BindThread(p) // the suite locked this goroutine to its thread
	s, err := p.OpenRank(dev)
	if err != nil {
		if e.concurrent {
			e.release(idx)
		}
		return nil, err
	}
	r := &procRank{p: p, dev: dev, s: s}
	if e.concurrent {
		r.release = func() { e.release(idx) }
	}
	return r, nil
}

// foreign turns an address in a rank process into an opaque pointer
// value; this process never dereferences it.
func foreign(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// procRank is one rank process's device and stream.
type procRank struct {
	p       *procs.Proc
	dev     int32
	s       acl.StreamHandle
	release func() // ends the env's lease of the process (concurrent envs)
}

func (r *procRank) Stream() acl.StreamHandle { return r.s }
func (r *procRank) Sync() error              { return r.p.Sync(r.s) }
func (r *procRank) MemType() hccl.MemType    { return hccl.MemDevice }
func (r *procRank) Close() error {
	err := r.p.CloseRank(r.dev, r.s)
	if r.release != nil {
		r.release()
		r.release = nil
	}
	return err
}
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
