package hcclsim

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Sim implements hccl.Backend. Every method checks its arguments as
// docs/misuse.md (section HCCL) says, converts the result to an
// *hccl.Error naming the C function, and otherwise delegates to the
// communicator and its transport.
var _ hccl.Backend = (*Sim)(nil)

// herr converts an internal error to the *hccl.Error of op.
func herr(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *simError
	if errors.As(err, &se) {
		return &hccl.Error{Op: op, Code: hccl.Result(se.code), Msg: se.msg}
	}
	var he *hccl.Error
	if errors.As(err, &he) {
		return &hccl.Error{Op: op, Code: he.Code, Msg: he.Msg}
	}
	return &hccl.Error{Op: op, Code: hccl.EInternal, Msg: err.Error()}
}

// Name returns "fallback".
func (s *Sim) Name() string { return "fallback" }

// GetRootInfo starts a rendezvous on a loopback port and returns a root
// info naming it; ranks in this process and in other processes join with
// CommInitRootInfo.
func (s *Sim) GetRootInfo() (hccl.RootInfo, error) {
	b, err := s.getRootInfo()
	return hccl.RootInfo(b), herr("HcclGetRootInfo", err)
}

// CommInitRootInfo joins rank `rank` of nRanks; it blocks until all ranks
// have joined or the connect timeout.
func (s *Sim) CommInitRootInfo(nRanks uint32, root *hccl.RootInfo, rank uint32) (hccl.CommHandle, error) {
	return s.initRoot("HcclCommInitRootInfo", nRanks, root, rank, nil)
}

// CommInitRootInfoConfig is CommInitRootInfo with a configuration: its
// communicator name, execution timeout (seconds) and buffer size (MB) are
// honoured; other fields are accepted and ignored.
func (s *Sim) CommInitRootInfoConfig(nRanks uint32, root *hccl.RootInfo, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if cfg == nil {
		return 0, hccl.Errorf("HcclCommInitRootInfoConfig", hccl.EPtr, "null config")
	}
	return s.initRoot("HcclCommInitRootInfoConfig", nRanks, root, rank, cfg)
}

func (s *Sim) initRoot(op string, nRanks uint32, root *hccl.RootInfo, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	if root == nil {
		return 0, hccl.Errorf(op, hccl.EPtr, "null root info")
	}
	if nRanks == 0 || rank >= nRanks {
		return 0, hccl.Errorf(op, hccl.EPara, "rank %d of %d", rank, nRanks)
	}
	if s.envErr != nil {
		return 0, herr(op, s.envErr)
	}
	name, timeout, stage, err := s.config(op, cfg)
	if err != nil {
		return 0, err
	}
	dev, err := s.env.currentDevice()
	if err != nil {
		return 0, hccl.Errorf(op, hccl.ERuntime, "no current device on this thread: %v", err)
	}
	// Without a name in the config a communicator is named after its root
	// info (the device uses the root info's identifier), so reusing a root
	// info for a second communicator on one device is the same clash.
	if ri, ok := decodeRootInfo(root[:]); name == "" && ok {
		name = defaultCommName(ri.id)
	}
	// Communicator names are unique per device (ob:1747-1753): checked
	// before joining, so the peers time out rather than form a world
	// with a rank that failed.
	if name != "" && s.nameTaken(dev, name) {
		return 0, hccl.Errorf(op, hccl.EPara, "device %d already has a communicator named %q", dev, name)
	}
	c, err := s.joinWorld(int(nRanks), int(rank), root[:], dev, name, timeout, stage)
	if err != nil {
		return 0, herr(op, err)
	}
	if c.name == "" {
		c.name = defaultCommName(c.world)
	}
	return hccl.CommHandle(s.register(c)), nil
}

// defaultCommName is the name of a root-info communicator whose config
// names none.
func defaultCommName(world [16]byte) string { return fmt.Sprintf("hcclsim_%x", world[:8]) }

// nameTaken reports whether a live communicator on dev has the name.
func (s *Sim) nameTaken(dev int32, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comms {
		if c.dev == dev && c.name == name {
			return true
		}
	}
	return false
}

// config reads the fields of cfg the simulator honours: the name, the
// exec timeout and the buffer size (the staging bytes of a multi-process
// rank).
func (s *Sim) config(op string, cfg *hccl.CommConfig) (name string, timeout time.Duration, stage int, err error) {
	timeout, stage = s.opts.ExecTimeout, s.opts.BufferBytes
	if cfg == nil {
		return "", timeout, stage, nil
	}
	size, magic, version := cfg.Header()
	if magic != hccl.CommConfigMagic || version == 0 || size < uint64(unsafe.Offsetof(cfg.ExecTimeOut)+4) {
		return "", 0, 0, hccl.Errorf(op, hccl.EPara, "config header size %d magic %#x version %d: not initialised with HcclCommConfigInit", size, magic, version)
	}
	// hcclBufferSize overrides HCCL_BUFFSIZE for this communicator; not
	// set follows the variable, below 1 MB is HCCL_E_PARA (hcomm legacy
	// comm_config.cc:247-270, HCCL_CCL_COMM_BUFFER_MIN 1). The staging
	// area takes it capped at 64 MiB, as it takes the variable.
	switch b := cfg.BufferSize; {
	case b == hccl.ConfigNotSet:
	case b < 1:
		return "", 0, 0, hccl.Errorf(op, hccl.EPara, "hcclBufferSize %d MB: want at least 1", b)
	default:
		stage = stageBytes(int(min(b, 64)))
	}
	// hcclExecTimeOut overrides HCCL_EXEC_TIMEOUT for this communicator;
	// like the variable, 0 means never (HCCL_EXEC_TIMEOUT.md, "以通信域粒度的配置为准").
	switch {
	case cfg.ExecTimeOut == 0:
		timeout = never
	case cfg.ExecTimeOut > 0:
		timeout = time.Duration(cfg.ExecTimeOut) * time.Second
	}
	return cfg.Name(), timeout, stage, nil
}

// CommInitAll creates one communicator per device, all ranks in this
// process.
func (s *Sim) CommInitAll(devices []int32) ([]hccl.CommHandle, error) {
	if s == nil {
		return nil, hccl.NilHandle("HcclCommInitAll", "hcclsim.Sim")
	}
	const op = "HcclCommInitAll"
	if s.envErr != nil {
		return nil, herr(op, s.envErr)
	}
	if len(devices) == 0 {
		return nil, hccl.Errorf(op, hccl.EPara, "no devices")
	}
	seen := map[int32]bool{}
	for _, d := range devices {
		if d < 0 || int(d) >= s.env.deviceCount() {
			return nil, hccl.Errorf(op, hccl.EPara, "device %d of %d", d, s.env.deviceCount())
		}
		if seen[d] {
			return nil, hccl.Errorf(op, hccl.EPara, "device %d listed twice", d)
		}
		seen[d] = true
	}
	id := newWorldID()
	w := newLocalWorld(len(devices))
	name := fmt.Sprintf("hcclsim_all_%x", id[:8])
	hs := make([]hccl.CommHandle, len(devices))
	for r, d := range devices {
		c := s.newComm(w, id, len(devices), r, d, name, s.opts.ExecTimeout)
		w.comms[r] = c
		hs[r] = hccl.CommHandle(s.register(c))
	}
	return hs, nil
}

// CommDestroy releases a communicator; queued work finishes first.
func (s *Sim) CommDestroy(h hccl.CommHandle) error {
	if h == 0 {
		return nil // op_base.cc:3656: "An empty comm given, skip destroy"
	}
	return herr("HcclCommDestroy", s.destroy(uintptr(h)))
}

func (s *Sim) comm(op string, h hccl.CommHandle) (*comm, error) {
	c, err := s.lookup(uintptr(h))
	if err != nil {
		return nil, herr(op, err)
	}
	return c, nil
}

// GetRankSize is HcclGetRankSize.
func (s *Sim) GetRankSize(h hccl.CommHandle) (uint32, error) {
	c, err := s.comm("HcclGetRankSize", h)
	if err != nil {
		return 0, err
	}
	return uint32(c.n), nil
}

// GetRankId is HcclGetRankId.
func (s *Sim) GetRankId(h hccl.CommHandle) (uint32, error) { //nolint:revive // the C name
	c, err := s.comm("HcclGetRankId", h)
	if err != nil {
		return 0, err
	}
	return uint32(c.rank), nil
}

// GetCommName is HcclGetCommName.
func (s *Sim) GetCommName(h hccl.CommHandle) (string, error) {
	c, err := s.comm("HcclGetCommName", h)
	if err != nil {
		return "", err
	}
	return c.name, nil
}

// GetCommAsyncError reports the first failure of asynchronous work on the
// communicator (HCCL_SUCCESS if none).
func (s *Sim) GetCommAsyncError(h hccl.CommHandle) (hccl.Result, error) {
	c, err := s.comm("HcclGetCommAsyncError", h)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return hccl.Result(c.asyncErr), nil
}

// maxCount is the largest element count HCCL accepts (SYS_MAX_COUNT,
// hcomm legacy pub_inc/hccl_common.h:64; param_check.cc:150-158,
// HcomCheckCount: larger is HCCL_E_PARA).
const maxCount = 0x7FFFFFFFF

// elemBytes checks dt and count and returns count × the element size. An
// undefined data type is HCCL_E_NOT_SUPPORT (param_check.cc:281-291,
// HcomCheckDataType).
func elemBytes(op string, count uint64, dt hccl.DataType) (uint64, error) {
	d := dtype(dt)
	if dt < 0 || d.size() == 0 {
		return 0, hccl.Errorf(op, hccl.ENotSupport, "undefined data type %d", int32(dt))
	}
	if count > maxCount {
		return 0, hccl.Errorf(op, hccl.EPara, "count %d is above the largest HCCL accepts (%#x)", count, uint64(maxCount))
	}
	return count * d.size(), nil
}

// reduceArgs checks the operation and data type of a reduction: an
// undefined operation is HCCL_E_NOT_SUPPORT (param_check.cc:307-325,
// HcomCheckReductionOp), as is a type HCCL does not reduce with it.
func reduceArgs(op string, dt hccl.DataType, rop hccl.ReduceOp) error {
	if !rop.Valid() {
		return hccl.Errorf(op, hccl.ENotSupport, "undefined reduce op %d", int32(rop))
	}
	d := dtype(dt)
	if dt < 0 || d.size() == 0 {
		return hccl.Errorf(op, hccl.ENotSupport, "undefined data type %d", int32(dt))
	}
	if !d.reducibleBy(redOp(rop)) {
		return hccl.Errorf(op, hccl.ENotSupport, "%v cannot be reduced with %v", dt, redOp(rop))
	}
	return nil
}

// stream checks the stream argument of an operation: null is HCCL_E_PTR
// (op_base_host.cc:79-82, CHK_PTR_NULL(stream)).
func stream(op string, st acl.StreamHandle) error {
	if st == 0 {
		return hccl.Errorf(op, hccl.EPtr, "null stream")
	}
	return nil
}

// buffer checks a buffer argument at the call: non-null when it holds
// data, and inside device memory of the rank's device.
func (c *comm) buffer(op, what string, p unsafe.Pointer, n uint64) error {
	if n == 0 {
		return nil
	}
	if p == nil {
		return hccl.Errorf(op, hccl.EPtr, "null %s with %d bytes", what, n)
	}
	if _, err := c.view(p, n); err != nil {
		return herr(op, err)
	}
	return nil
}

// Barrier is HcclBarrier.
func (s *Sim) Barrier(h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclBarrier"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, &opDesc{Kind: kindBarrier}, nil, nil, 0, 0))
}

// AllReduce is HcclAllReduce.
func (s *Sim) AllReduce(send, recv unsafe.Pointer, count uint64, dt hccl.DataType, rop hccl.ReduceOp, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclAllReduce"
	// op_base_host.cc:67-83: count 0 succeeds before anything is checked;
	// then comm, buffers and stream must not be null.
	if count == 0 {
		return nil
	}
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if err := reduceArgs(op, dt, rop); err != nil {
		return err
	}
	n, err := elemBytes(op, count, dt)
	if err != nil {
		return err
	}
	if err := c.buffer(op, "send buffer", send, n); err != nil {
		return err
	}
	if err := c.buffer(op, "receive buffer", recv, n); err != nil {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	d := &opDesc{Kind: kindAllReduce, Count: count, DT: dtype(dt), Op: redOp(rop)}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, d, send, recv, n, n))
}

// Broadcast is HcclBroadcast.
func (s *Sim) Broadcast(buf unsafe.Pointer, count uint64, dt hccl.DataType, root uint32, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclBroadcast"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if int(root) >= c.n {
		return hccl.Errorf(op, hccl.EPara, "root %d of %d ranks", root, c.n)
	}
	n, err := elemBytes(op, count, dt)
	if err != nil || count == 0 {
		return err
	}
	if err := c.buffer(op, "buffer", buf, n); err != nil {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	d := &opDesc{Kind: kindBroadcast, Count: count, DT: dtype(dt), Root: root}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, d, buf, buf, n, n))
}

// AllGather is HcclAllGather.
func (s *Sim) AllGather(send, recv unsafe.Pointer, sendCount uint64, dt hccl.DataType, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclAllGather"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	n, err := elemBytes(op, sendCount, dt)
	if err != nil || sendCount == 0 {
		return err
	}
	if n > (1<<63)/uint64(c.n) {
		return hccl.Errorf(op, hccl.EPara, "count %d × %d ranks overflows", sendCount, c.n)
	}
	if err := c.buffer(op, "send buffer", send, n); err != nil {
		return err
	}
	if err := c.buffer(op, "receive buffer", recv, n*uint64(c.n)); err != nil {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	d := &opDesc{Kind: kindAllGather, Count: sendCount, DT: dtype(dt)}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, d, send, recv, n, n*uint64(c.n)))
}

// ReduceScatter is HcclReduceScatter.
func (s *Sim) ReduceScatter(send, recv unsafe.Pointer, recvCount uint64, dt hccl.DataType, rop hccl.ReduceOp, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclReduceScatter"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if err := reduceArgs(op, dt, rop); err != nil {
		return err
	}
	n, err := elemBytes(op, recvCount, dt)
	if err != nil || recvCount == 0 {
		return err
	}
	if n > (1<<63)/uint64(c.n) {
		return hccl.Errorf(op, hccl.EPara, "count %d × %d ranks overflows", recvCount, c.n)
	}
	if err := c.buffer(op, "send buffer", send, n*uint64(c.n)); err != nil {
		return err
	}
	if err := c.buffer(op, "receive buffer", recv, n); err != nil {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	d := &opDesc{Kind: kindReduceScatter, Count: recvCount, DT: dtype(dt), Op: redOp(rop)}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, d, send, recv, n*uint64(c.n), n))
}

// AlltoAllV is HcclAlltoAllV. Send and receive types that differ, or
// counts that disagree with the peers', fail every rank with HCCL_E_PARA
// (the agreement check); slices shorter than the rank size fail this rank
// at once.
func (s *Sim) AlltoAllV(send unsafe.Pointer, sendCounts, sdispls []uint64, sendType hccl.DataType,
	recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType hccl.DataType, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclAlltoAllV"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if _, err := elemBytes(op, 0, sendType); err != nil {
		return err
	}
	if _, err := elemBytes(op, 0, recvType); err != nil {
		return err
	}
	if len(sendCounts) < c.n || len(sdispls) < c.n || len(recvCounts) < c.n || len(rdispls) < c.n {
		return hccl.Errorf(op, hccl.EPara, "count/displacement slices of %d/%d/%d/%d entries for %d ranks",
			len(sendCounts), len(sdispls), len(recvCounts), len(rdispls), c.n)
	}
	d := opDesc{Kind: kindAlltoAllV, DT: dtype(sendType), RecvDT: dtype(recvType)}
	var sendBytes, recvBytes uint64
	{
		// HCCL takes the counts at the call: check a copy the caller
		// cannot change (runCollective copies it again for the data
		// phase). On the stack for up to 16 ranks, so that a small
		// AlltoAllV allocates nothing.
		var small [4 * 16]uint64
		cp := small[:]
		if 4*c.n > len(small) {
			cp = make([]uint64, 4*c.n)
		}
		part := func(k int, src []uint64) []uint64 {
			p := cp[k*c.n : (k+1)*c.n : (k+1)*c.n]
			copy(p, src)
			return p
		}
		d.SendCounts, d.SDispls = part(0, sendCounts), part(1, sdispls)
		d.RecvCounts, d.RDispls = part(2, recvCounts), part(3, rdispls)
		esz := dtype(sendType).size()
		extent := func(counts, displs []uint64) (uint64, bool) {
			var hi uint64
			for i := range counts {
				if counts[i] == 0 {
					continue
				}
				e := displs[i] + counts[i]
				if e < displs[i] || e > (1<<63)/esz {
					return 0, false
				}
				hi = max(hi, e)
			}
			return hi * esz, true
		}
		var ok1, ok2 bool
		sendBytes, ok1 = extent(d.SendCounts, d.SDispls)
		recvBytes, ok2 = extent(d.RecvCounts, d.RDispls)
		if !ok1 || !ok2 {
			return hccl.Errorf(op, hccl.EPara, "counts and displacements overflow")
		}
		if err := c.buffer(op, "send buffer", send, sendBytes); err != nil {
			return err
		}
		if err := c.buffer(op, "receive buffer", recv, recvBytes); err != nil {
			return err
		}
		// param_check.cc:163-165 (HcomCheckAlltoAllVExternalMem): one
		// buffer for both directions is HCCL_E_PARA.
		if send != nil && send == recv {
			return hccl.Errorf(op, hccl.EPara, "send and receive buffer are the same (%p)", send)
		}
	}
	if err := stream(op, st); err != nil {
		return err
	}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runCollective(st, &d, send, recv, sendBytes, recvBytes))
}

// Send is HcclSend: it pairs with the destination's Recv (in call order)
// and queues the transfer on the stream.
func (s *Sim) Send(buf unsafe.Pointer, count uint64, dt hccl.DataType, dest uint32, h hccl.CommHandle, st acl.StreamHandle) error {
	return s.sendRecv("HcclSend", true, buf, count, dt, dest, h, st)
}

// Recv is HcclRecv.
func (s *Sim) Recv(buf unsafe.Pointer, count uint64, dt hccl.DataType, src uint32, h hccl.CommHandle, st acl.StreamHandle) error {
	return s.sendRecv("HcclRecv", false, buf, count, dt, src, h, st)
}

func (s *Sim) sendRecv(op string, send bool, buf unsafe.Pointer, count uint64, dt hccl.DataType, peer uint32, h hccl.CommHandle, st acl.StreamHandle) error {
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	it, err := c.p2pArg(op, send, buf, count, dt, peer)
	if err != nil || count == 0 {
		return err
	}
	if err := stream(op, st); err != nil {
		return err
	}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	return herr(op, c.runP2P(st, []p2pItem{it}))
}

// p2pArg checks one send or receive.
func (c *comm) p2pArg(op string, send bool, buf unsafe.Pointer, count uint64, dt hccl.DataType, peer uint32) (p2pItem, error) {
	if int(peer) >= c.n || int(peer) == c.rank {
		return p2pItem{}, hccl.Errorf(op, hccl.EPara, "peer rank %d (this rank %d of %d)", peer, c.rank, c.n)
	}
	n, err := elemBytes(op, count, dt)
	if err != nil {
		return p2pItem{}, err
	}
	if err := c.buffer(op, "buffer", buf, n); err != nil {
		return p2pItem{}, err
	}
	return p2pItem{send: send, peer: int(peer), count: count, dt: dtype(dt), ptr: buf}, nil
}

// selfArg checks a BatchSendRecv item naming this rank.
func (c *comm) selfArg(op string, send bool, buf unsafe.Pointer, count uint64, dt hccl.DataType) (p2pItem, error) {
	n, err := elemBytes(op, count, dt)
	if err != nil {
		return p2pItem{}, err
	}
	if err := c.buffer(op, "buffer", buf, n); err != nil {
		return p2pItem{}, err
	}
	return p2pItem{send: send, peer: c.rank, count: count, dt: dtype(dt), ptr: buf}, nil
}

// BatchSendRecv is HcclBatchSendRecv: every item pairs with its peer's
// call at once, so the order of items never deadlocks. Items naming this
// rank pair among themselves, the k-th send with the k-th receive, and
// run as a local copy; an unmatched one is HCCL_E_PARA
// (coll_batch_send_recv_executor.cc:118-150).
func (s *Sim) BatchSendRecv(items []hccl.SendRecvItem, h hccl.CommHandle, st acl.StreamHandle) error {
	const op = "HcclBatchSendRecv"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	var its, selfSend, selfRecv []p2pItem
	for i, x := range items {
		if x.Type != hccl.SendType && x.Type != hccl.RecvType {
			return hccl.Errorf(op, hccl.EPara, "item %d: send/recv type %d", i, x.Type)
		}
		self := int(x.RemoteRank) == c.rank
		var it p2pItem
		if self {
			it, err = c.selfArg(op, x.Type == hccl.SendType, x.Buf, x.Count, x.DataType)
		} else {
			it, err = c.p2pArg(op, x.Type == hccl.SendType, x.Buf, x.Count, x.DataType, x.RemoteRank)
		}
		if err != nil {
			return err
		}
		if x.Count == 0 {
			continue
		}
		switch {
		case self:
			if it.send {
				selfSend = append(selfSend, it)
			} else {
				selfRecv = append(selfRecv, it)
			}
		default:
			its = append(its, it)
		}
	}
	if len(selfSend) != len(selfRecv) {
		return hccl.Errorf(op, hccl.EPara, "%d sends to this rank and %d receives from it: every one needs its partner", len(selfSend), len(selfRecv))
	}
	for k := range selfSend {
		a, b := selfSend[k], selfRecv[k]
		if a.count != b.count || a.dt != b.dt {
			return hccl.Errorf(op, hccl.EPara, "send %d to this rank of %d × %v, receive of %d × %v", k, a.count, a.dt, b.count, b.dt)
		}
	}
	if len(its) == 0 && len(selfSend) == 0 {
		return nil
	}
	if err := stream(op, st); err != nil {
		return err
	}
	if err := c.cclBuffer(op); err != nil {
		return err
	}
	if len(selfSend) > 0 {
		g := newGate[struct{}]()
		err := enqueueGated(c, st, g, func(struct{}) error {
			for k := range selfSend {
				a, b := selfSend[k], selfRecv[k]
				n := a.count * a.dt.size()
				src, err := c.view(a.ptr, n)
				if err != nil {
					return err
				}
				dst, err := c.view(b.ptr, n)
				if err != nil {
					return err
				}
				copy(dst, src)
			}
			return nil
		})
		if err != nil {
			return herr(op, err)
		}
		g.open(struct{}{}, nil)
	}
	if len(its) == 0 {
		return nil
	}
	return herr(op, c.runP2P(st, its))
}
