package procs

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Backend is an hccl.Backend whose calls run in the rank processes of a
// Cluster. A communicator handle it returns names the process that owns
// it (bits 48 and up) and the handle in that process; every call on the
// handle runs there. Calls without a handle (CommInitRootInfo) run in the
// process bound to the calling OS thread (BindThread), as a rank's thread
// of a real program talks to its own device; an unbound thread's call runs
// in the process numbered like the rank it names. Buffer and stream arguments are the child's own
// (from Proc.Alloc and Proc.OpenRank). Safe for concurrent use.
type Backend struct {
	c *Cluster

	mu      sync.Mutex
	threads map[int]*Proc // OS thread id → the process its calls go to
}

var _ hccl.Backend = (*Backend)(nil)

const procShift = 48

func (b *Backend) wrap(proc int, h uint64) hccl.CommHandle {
	if h == 0 {
		return 0
	}
	return hccl.CommHandle(uint64(proc+1)<<procShift | h)
}

// Local splits a handle into its process and the process's own handle.
func (b *Backend) Local(h hccl.CommHandle) (*Proc, hccl.CommHandle, bool) {
	i := int(uint64(h)>>procShift) - 1
	if i < 0 || i >= len(b.c.procs) {
		return nil, 0, false
	}
	return b.c.procs[i], hccl.CommHandle(uint64(h) & (1<<procShift - 1)), true
}

// on runs r in the process owning h.
func (b *Backend) on(op string, h hccl.CommHandle, r *req) (resp, error) {
	p, lh, ok := b.Local(h)
	if !ok {
		if h == 0 {
			return resp{}, hccl.Errorf(op, hccl.EPtr, "null communicator")
		}
		return resp{}, hccl.Errorf(op, hccl.EPara, "unknown communicator %#x", uintptr(h))
	}
	r.Op, r.H = op, uint64(lh)
	return p.call(r)
}

func addr(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

func wireDescs(ds []hccl.OneSideOpDesc) []oneDesc {
	out := make([]oneDesc, len(ds))
	for i, d := range ds {
		out[i] = oneDesc{Local: addr(d.LocalAddr), Remote: uint64(d.RemoteAddr), Count: d.Count, DT: int32(d.DataType)}
	}
	return out
}

// Name returns "fallback-procs".
func (b *Backend) Name() string { return "fallback-procs" }

// GetRootInfo runs in the parent, which hosts the rendezvous: every rank
// then joins from its own process.
func (b *Backend) GetRootInfo() (hccl.RootInfo, error) {
	if b == nil {
		return hccl.RootInfo{}, hccl.NilHandle("HcclGetRootInfo", "backend")
	}
	return b.c.sim.GetRootInfo()
}

// BindThread sends the handle-less calls of the calling OS thread to p
// (the caller holds runtime.LockOSThread); nil unbinds.
func (b *Backend) BindThread(p *Proc) {
	if b == nil {
		return
	}
	tid := unix.Gettid()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.threads == nil {
		b.threads = map[int]*Proc{}
	}
	if p == nil {
		delete(b.threads, tid)
	} else {
		b.threads[tid] = p
	}
}

// procFor is the process of the calling thread, else process rank.
func (b *Backend) procFor(rank uint32) (*Proc, bool) {
	b.mu.Lock()
	p := b.threads[unix.Gettid()]
	b.mu.Unlock()
	if p != nil {
		return p, true
	}
	if int(rank) < len(b.c.procs) {
		return b.c.procs[rank], true
	}
	return nil, false
}

// CommInitRootInfo runs in the calling thread's process (BindThread).
func (b *Backend) CommInitRootInfo(nRanks uint32, root *hccl.RootInfo, rank uint32) (hccl.CommHandle, error) {
	return b.initRoot("CommInitRootInfo", nRanks, root, rank, nil)
}

// CommInitRootInfoConfig runs in the calling thread's process.
func (b *Backend) CommInitRootInfoConfig(nRanks uint32, root *hccl.RootInfo, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if cfg == nil {
		return 0, hccl.Errorf("HcclCommInitRootInfoConfig", hccl.EPtr, "null config")
	}
	return b.initRoot("CommInitRootInfoConfig", nRanks, root, rank, cfg)
}

func (b *Backend) initRoot(op string, n uint32, root *hccl.RootInfo, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if root == nil {
		return 0, hccl.Errorf("Hccl"+op, hccl.EPtr, "null root info")
	}
	p, ok := b.procFor(rank)
	if !ok {
		return 0, hccl.Errorf("Hccl"+op, hccl.EPara, "rank %d, the cluster has %d processes", rank, len(b.c.procs))
	}
	data := append([]byte(nil), root[:]...)
	if cfg != nil {
		data = append(data, unsafe.Slice((*byte)(unsafe.Pointer(cfg)), unsafe.Sizeof(*cfg))...)
	}
	r, err := p.call(&req{Op: op, U1: n, U2: rank, Bytes: data})
	if err != nil {
		return 0, err
	}
	return b.wrap(p.idx, r.U), nil
}

// CommInitAll forms the communicator of len(devices) ranks with rank i in
// process i (whose serving thread must have devices[i] current), through
// a root info: the multi-process equivalent of one process driving all
// devices.
func (b *Backend) CommInitAll(devices []int32) ([]hccl.CommHandle, error) {
	const op = "HcclCommInitAll"
	if len(devices) == 0 {
		return nil, hccl.Errorf(op, hccl.EPara, "no devices")
	}
	if len(devices) > len(b.c.procs) {
		return nil, hccl.Errorf(op, hccl.EPara, "%d devices, the cluster has %d processes", len(devices), len(b.c.procs))
	}
	seen := map[int32]bool{}
	for _, d := range devices {
		if d < 0 || seen[d] {
			return nil, hccl.Errorf(op, hccl.EPara, "device %d negative or repeated", d)
		}
		seen[d] = true
	}
	root, err := b.GetRootInfo()
	if err != nil {
		return nil, err
	}
	hs := make([]hccl.CommHandle, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for i := range devices {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := b.c.procs[i].call(&req{Op: "CommInitRootInfo", U1: uint32(len(devices)), U2: uint32(i), Bytes: root[:]})
			hs[i], errs[i] = b.wrap(i, r.U), err
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, h := range hs {
				if h != 0 {
					_ = b.CommDestroy(h)
				}
			}
			return nil, hccl.Errorf(op, hccl.ResultOf(err), "rank %d: %v", i, err)
		}
	}
	return hs, nil
}

// CommDestroy is HcclCommDestroy in the owning process.
func (b *Backend) CommDestroy(h hccl.CommHandle) error {
	if h == 0 {
		return nil // as HcclCommDestroy (op_base.cc:3656)
	}
	_, err := b.on("CommDestroy", h, &req{})
	return err
}

// GetRankSize is HcclGetRankSize.
func (b *Backend) GetRankSize(h hccl.CommHandle) (uint32, error) {
	r, err := b.on("GetRankSize", h, &req{})
	return r.U32, err
}

// GetRankId is HcclGetRankId.
func (b *Backend) GetRankId(h hccl.CommHandle) (uint32, error) { //nolint:revive // the C name
	r, err := b.on("GetRankId", h, &req{})
	return r.U32, err
}

// GetCommName is HcclGetCommName.
func (b *Backend) GetCommName(h hccl.CommHandle) (string, error) {
	r, err := b.on("GetCommName", h, &req{})
	return r.Str, err
}

// GetCommAsyncError is HcclGetCommAsyncError.
func (b *Backend) GetCommAsyncError(h hccl.CommHandle) (hccl.Result, error) {
	r, err := b.on("GetCommAsyncError", h, &req{})
	return hccl.Result(r.Result), err
}

// Barrier is HcclBarrier.
func (b *Backend) Barrier(h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("Barrier", h, &req{S: uint64(s)})
	return err
}

// AllReduce is HcclAllReduce.
func (b *Backend) AllReduce(send, recv unsafe.Pointer, count uint64, dt hccl.DataType, op hccl.ReduceOp, h hccl.CommHandle, s acl.StreamHandle) error {
	if count == 0 {
		return nil // checked before the communicator (op_base_host.cc:67)
	}
	_, err := b.on("AllReduce", h, &req{A: addr(send), B: addr(recv), Count: count, DT: int32(dt), ROp: int32(op), S: uint64(s)})
	return err
}

// Broadcast is HcclBroadcast.
func (b *Backend) Broadcast(buf unsafe.Pointer, count uint64, dt hccl.DataType, root uint32, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("Broadcast", h, &req{A: addr(buf), Count: count, DT: int32(dt), U1: root, S: uint64(s)})
	return err
}

// AllGather is HcclAllGather.
func (b *Backend) AllGather(send, recv unsafe.Pointer, sendCount uint64, dt hccl.DataType, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("AllGather", h, &req{A: addr(send), B: addr(recv), Count: sendCount, DT: int32(dt), S: uint64(s)})
	return err
}

// ReduceScatter is HcclReduceScatter.
func (b *Backend) ReduceScatter(send, recv unsafe.Pointer, recvCount uint64, dt hccl.DataType, op hccl.ReduceOp, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("ReduceScatter", h, &req{A: addr(send), B: addr(recv), Count: recvCount, DT: int32(dt), ROp: int32(op), S: uint64(s)})
	return err
}

// AlltoAllV is HcclAlltoAllV.
func (b *Backend) AlltoAllV(send unsafe.Pointer, sendCounts, sdispls []uint64, sendType hccl.DataType,
	recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType hccl.DataType, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("AlltoAllV", h, &req{A: addr(send), B: addr(recv), DT: int32(sendType), DT2: int32(recvType), S: uint64(s),
		Vec: [4][]uint64{sendCounts, sdispls, recvCounts, rdispls}})
	return err
}

// Send is HcclSend.
func (b *Backend) Send(buf unsafe.Pointer, count uint64, dt hccl.DataType, dest uint32, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("Send", h, &req{A: addr(buf), Count: count, DT: int32(dt), U1: dest, S: uint64(s)})
	return err
}

// Recv is HcclRecv.
func (b *Backend) Recv(buf unsafe.Pointer, count uint64, dt hccl.DataType, src uint32, h hccl.CommHandle, s acl.StreamHandle) error {
	_, err := b.on("Recv", h, &req{A: addr(buf), Count: count, DT: int32(dt), U1: src, S: uint64(s)})
	return err
}

// BatchSendRecv is HcclBatchSendRecv.
func (b *Backend) BatchSendRecv(items []hccl.SendRecvItem, h hccl.CommHandle, s acl.StreamHandle) error {
	its := make([]item, len(items))
	for i, x := range items {
		its[i] = item{Type: int32(x.Type), Buf: addr(x.Buf), Count: x.Count, DT: int32(x.DataType), Peer: x.RemoteRank}
	}
	_, err := b.on("BatchSendRecv", h, &req{Items: its, S: uint64(s)})
	return err
}

func descBytes(d *hccl.MemDesc) [][]byte {
	if d == nil {
		return nil
	}
	return [][]byte{d[:]}
}

// RegisterMem is HcclRegisterMem.
func (b *Backend) RegisterMem(h hccl.CommHandle, remoteRank uint32, typ hccl.MemType, a unsafe.Pointer, size uint64) (hccl.MemDesc, error) {
	r, err := b.on("RegisterMem", h, &req{U1: remoteRank, Typ: int32(typ), A: addr(a), Size: size})
	var d hccl.MemDesc
	if len(r.MemDescs) == 1 {
		copy(d[:], r.MemDescs[0])
	}
	return d, err
}

// DeregisterMem is HcclDeregisterMem.
func (b *Backend) DeregisterMem(h hccl.CommHandle, desc *hccl.MemDesc) error {
	_, err := b.on("DeregisterMem", h, &req{MemDescs: descBytes(desc)})
	return err
}

// ExchangeMemDesc is HcclExchangeMemDesc.
func (b *Backend) ExchangeMemDesc(h hccl.CommHandle, remoteRank uint32, local []hccl.MemDesc, timeout int32, remote []hccl.MemDesc) (uint32, error) {
	ds := make([][]byte, len(local))
	for i := range local {
		ds[i] = local[i][:]
	}
	r, err := b.on("ExchangeMemDesc", h, &req{U1: remoteRank, U2: uint32(timeout), MemDescs: ds, Size: uint64(len(remote))})
	for i := range remote {
		if i < len(r.MemDescs) {
			copy(remote[i][:], r.MemDescs[i])
		}
	}
	return r.U32, err
}

// EnableMemAccess is HcclEnableMemAccess.
func (b *Backend) EnableMemAccess(h hccl.CommHandle, remoteDesc *hccl.MemDesc) (hccl.CommMem, error) {
	r, err := b.on("EnableMemAccess", h, &req{MemDescs: descBytes(remoteDesc)})
	return hccl.CommMem{Type: hccl.MemType(r.Mem.Type), Addr: uintptr(r.Mem.Addr), Size: r.Mem.Size}, err
}

// DisableMemAccess is HcclDisableMemAccess.
func (b *Backend) DisableMemAccess(h hccl.CommHandle, remoteDesc *hccl.MemDesc) error {
	_, err := b.on("DisableMemAccess", h, &req{MemDescs: descBytes(remoteDesc)})
	return err
}

// BatchGet is HcclBatchGet.
func (b *Backend) BatchGet(h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, s acl.StreamHandle) error {
	_, err := b.on("BatchGet", h, &req{U1: remoteRank, Descs: wireDescs(descs), S: uint64(s)})
	return err
}

// BatchPut is HcclBatchPut.
func (b *Backend) BatchPut(h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, s acl.StreamHandle) error {
	_, err := b.on("BatchPut", h, &req{U1: remoteRank, Descs: wireDescs(descs), S: uint64(s)})
	return err
}

// CommRegister is HcclCommRegister.
func (b *Backend) CommRegister(h hccl.CommHandle, a unsafe.Pointer, size uint64, flag uint32) (hccl.RegistrationHandle, error) {
	r, err := b.on("CommRegister", h, &req{A: addr(a), Size: size, U1: flag})
	return hccl.RegistrationHandle(r.U), err
}

// CommDeregister is HcclCommDeregister.
func (b *Backend) CommDeregister(h hccl.CommHandle, w hccl.RegistrationHandle) error {
	_, err := b.on("CommDeregister", h, &req{A: uint64(w)})
	return err
}

// CommExchangeMem is HcclCommExchangeMem.
func (b *Backend) CommExchangeMem(h hccl.CommHandle, w hccl.RegistrationHandle, peerRanks []uint32) error {
	_, err := b.on("CommExchangeMem", h, &req{A: uint64(w), Peers: peerRanks})
	return err
}
