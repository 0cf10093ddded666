package procs

import (
	"unsafe"

	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// Rank-table communicators across rank processes: the call runs in the
// process of the calling thread (BindThread), else in the process numbered
// like the rank, and the child's own hcclsim.Sim forms the world with the
// ranks in the other processes (hcclsim's ranktable_world.go: rank 0's
// root info handed over sealed in the job directory, then the admission
// of root-info worlds). The request carries the path and the config, never
// a key: each child reads the job key itself.

var _ hccl.ClusterInfoConfigBackend = (*Backend)(nil)

// CommInitClusterInfo is HcclCommInitClusterInfo in the calling thread's
// process.
func (b *Backend) CommInitClusterInfo(clusterInfo string, rank uint32) (hccl.CommHandle, error) {
	return b.initCluster("CommInitClusterInfo", clusterInfo, rank, nil)
}

// CommInitClusterInfoConfig is HcclCommInitClusterInfoConfig in the calling
// thread's process.
func (b *Backend) CommInitClusterInfoConfig(clusterInfo string, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if cfg == nil {
		return 0, hccl.Errorf("HcclCommInitClusterInfoConfig", hccl.EPtr, "null config")
	}
	return b.initCluster("CommInitClusterInfoConfig", clusterInfo, rank, cfg)
}

func (b *Backend) initCluster(op, path string, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if b == nil {
		return 0, hccl.NilHandle("Hccl"+op, "backend")
	}
	p, ok := b.procFor(rank)
	if !ok {
		// No process hosts that rank: the table's check of the rank
		// (HCCL_E_PARA past its end) runs in the first process.
		p = b.c.procs[0]
	}
	r := &req{Op: op, U2: rank, Path: path}
	if cfg != nil {
		r.Bytes = append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(cfg)), unsafe.Sizeof(*cfg))...)
	}
	res, err := p.call(r)
	if err != nil {
		return 0, err
	}
	return b.wrap(p.idx, res.U), nil
}

// initClusterChild runs a rank-table init in the child.
func initClusterChild(s *hcclsim.Sim, r *req) (uint64, error) {
	if r.Op == "CommInitClusterInfo" {
		h, err := s.CommInitClusterInfo(r.Path, r.U2)
		return uint64(h), err
	}
	cfg := new(hccl.CommConfig)
	if len(r.Bytes) != int(unsafe.Sizeof(*cfg)) {
		return 0, hccl.Errorf("HcclCommInitClusterInfoConfig", hccl.EPara, "config of %d bytes", len(r.Bytes))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(cfg)), unsafe.Sizeof(*cfg)), r.Bytes)
	h, err := s.CommInitClusterInfoConfig(r.Path, r.U2, cfg)
	return uint64(h), err
}
