package hcclsim

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// One-sided service and buffer windows of hccl.Backend.

// RegisterMem registers [addr, addr+size) for access by remoteRank and
// returns its descriptor, with the checks of HcclRegisterMem in its order
// (hcomm legacy tree, one_sided_service/one_sided_service_adapt.cc:
// 145-198): a null address is HCCL_E_PTR; the caller's own rank succeeds
// and registers nothing; a memory type other than device or host, size 0,
// or more than 64 GB of device / 1 TB of host memory is HCCL_E_PARA; a
// remote rank out of range is HCCL_E_NOT_FOUND (the service's rank table
// lookup, hccl_one_sided_service.cc:94, throws out_of_range).
func (s *Sim) RegisterMem(h hccl.CommHandle, remoteRank uint32, typ hccl.MemType, addr unsafe.Pointer, size uint64) (hccl.MemDesc, error) {
	const op = "HcclRegisterMem"
	c, err := s.comm(op, h)
	if err != nil {
		return hccl.MemDesc{}, err
	}
	switch {
	case addr == nil:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPtr, "null address")
	case int(remoteRank) == c.rank:
		return hccl.MemDesc{}, nil
	case !typ.Valid():
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "memory type %d", typ)
	case size == 0:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "size 0")
	case typ == hccl.MemDevice && size > maxRegDevice:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "%d bytes of device memory: at most 64 GB", size)
	case typ == hccl.MemHost && size > maxRegHost:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "%d bytes of host memory: at most 1 TB", size)
	case int(remoteRank) >= c.n:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.ENotFound, "remote rank %d of %d", remoteRank, c.n)
	}
	kind := memDevice
	if typ == hccl.MemHost {
		kind = memHost
	}
	if _, err := s.env.view(c.dev, kind, addr, size); err != nil {
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "[%p, +%d) is not %v memory of this rank: %v", addr, size, typ, err)
	}
	c.os.mu.Lock()
	c.os.nextID++
	r := &registration{kind: kind, info: memDescInfo{world: c.world, owner: c.rank, peer: int(remoteRank),
		id: c.os.nextID, typ: int32(typ), addr: uintptr(addr), size: size}}
	c.os.mu.Unlock()
	if err := c.tr.publishReg(c, r, true); err != nil {
		return hccl.MemDesc{}, herr(op, err)
	}
	c.os.mu.Lock()
	c.os.regs[r.info.id] = r
	c.os.mu.Unlock()
	return hccl.MemDesc(r.info.encode()), nil
}

// DeregisterMem withdraws a registration; peers that enabled it get
// HCCL_E_REMOTE on later access. A descriptor this communicator does not
// hold is HCCL_E_NOT_FOUND while nothing is registered and
// HCCL_E_INTERNAL otherwise, as the device's service decides
// (hccl_one_sided_service.cc:232-235 registedMemCnt_ == 0, 245-247 the
// descriptor not found).
func (s *Sim) DeregisterMem(h hccl.CommHandle, desc *hccl.MemDesc) error {
	const op = "HcclDeregisterMem"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if desc == nil {
		return hccl.Errorf(op, hccl.EPtr, "null descriptor")
	}
	m, ok := decodeMemDesc(desc[:])
	c.os.mu.Lock()
	r := c.os.regs[m.id]
	if !ok || m.world != c.world || m.owner != c.rank || r == nil {
		none := len(c.os.regs) == 0
		c.os.mu.Unlock()
		if none {
			return hccl.Errorf(op, hccl.ENotFound, "nothing is registered on this communicator")
		}
		return hccl.Errorf(op, hccl.EInternal, "the descriptor is not a registration this communicator holds")
	}
	delete(c.os.regs, m.id)
	c.os.mu.Unlock()
	return herr(op, c.tr.publishReg(c, r, false))
}

// ExchangeMemDesc sends local to remoteRank and receives that peer's
// descriptors into remote. Both ranks call it naming each other; the calls
// pair in call order, and the pairing is the one-sided connection to the
// peer that EnableMemAccess and BatchGet/BatchPut need. As on the device
// (transport_mem.cc:110-201) the sender sends whatever it is given; the
// receiver fails with HCCL_E_INTERNAL when a descriptor it received is not
// addressed to it (:128-142). The device does not check remote's capacity
// (:175-199 receives actualNum descriptors into the array): here the
// descriptors that fit are stored and the count is the peer's; with
// Options.Pedantic the call fails with HCCL_E_PARA instead.
func (s *Sim) ExchangeMemDesc(h hccl.CommHandle, remoteRank uint32, local []hccl.MemDesc, timeout int32, remote []hccl.MemDesc) (uint32, error) {
	const op = "HcclExchangeMemDesc"
	c, err := s.comm(op, h)
	if err != nil {
		return 0, err
	}
	// timeout is in seconds: 0 is HCCL_CONNECT_TIMEOUT, -1 never, -2 and
	// below HCCL_E_PARA (one_sided_service_adapt.cc:277-290).
	wait := c.connect
	switch {
	case timeout <= -2:
		return 0, hccl.Errorf(op, hccl.EPara, "timeout %d s: want -1 (never) or at least 0", timeout)
	case timeout == -1:
		wait = never
	case timeout > 0:
		wait = time.Duration(timeout) * time.Second
	}
	if int(remoteRank) == c.rank {
		return 0, nil // one_sided_service_adapt.cc:306-312
	}
	if int(remoteRank) >= c.n {
		// SetupRemoteRankInfo (hccl_one_sided_service.cc:273-278).
		return 0, hccl.Errorf(op, hccl.ENotFound, "remote rank %d of %d", remoteRank, c.n)
	}
	peer := int(remoteRank)
	offer := pairOffer{Payload: make([][]byte, len(local))}
	for i := range local {
		offer.Payload[i] = local[i][:64]
	}
	res, err := c.tr.pair(c, pairXchg, peer, c.rank < peer, offer, wait)
	if err != nil {
		return 0, herr(op, err)
	}
	c.os.mu.Lock()
	c.os.conns[peer] = true // created before the descriptors move (hccl_one_sided_service.cc:430-437)
	c.os.mu.Unlock()
	got := res.peer.Payload
	for i, p := range got {
		m, ok := decodeMemDesc(p)
		if !ok || m.world != c.world || m.owner != peer || m.peer != c.rank {
			return 0, hccl.Errorf(op, hccl.EInternal, "descriptor %d from rank %d is not memory registered for this rank (rank %d) on this communicator", i, peer, c.rank)
		}
		if i < len(remote) {
			remote[i] = hccl.MemDesc(m.encode())
		}
	}
	if len(got) > len(remote) && s.opts.Pedantic {
		return 0, hccl.Errorf(op, hccl.EPara, "pedantic: rank %d sent %d descriptors, capacity %d; the device does not check the capacity and would have written %d descriptors past the end of remote",
			peer, len(got), len(remote), len(got)-len(remote))
	}
	return uint32(len(got)), nil
}

// EnableMemAccess turns a descriptor a peer sent into access, returning
// the peer memory it names. It needs the connection an ExchangeMemDesc
// with the owner made (hccl_one_sided_service.cc:455-463: HCCL_E_INTERNAL
// without it); bytes that are not a peer's descriptor addressed to this
// rank are HCCL_E_INTERNAL too (hccl_one_sided_conn.cc:257-258). Enabling
// the same descriptor again succeeds and counts up (:259-271).
func (s *Sim) EnableMemAccess(h hccl.CommHandle, remoteDesc *hccl.MemDesc) (hccl.CommMem, error) {
	const op = "HcclEnableMemAccess"
	c, err := s.comm(op, h)
	if err != nil {
		return hccl.CommMem{}, err
	}
	if remoteDesc == nil {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EPtr, "null descriptor")
	}
	m, ok := decodeMemDesc(remoteDesc[:])
	if !ok || m.world != c.world || m.peer != c.rank || m.owner == c.rank || m.owner < 0 || m.owner >= c.n {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EInternal, "not a peer's descriptor addressed to this rank on this communicator")
	}
	mem := hccl.CommMem{Type: hccl.MemType(m.typ), Addr: m.addr, Size: m.size}
	c.os.mu.Lock()
	conn := c.os.conns[m.owner]
	if e := c.os.enabled[m.key()]; e != nil && conn {
		e.refs++
		c.os.mu.Unlock()
		return mem, nil
	}
	c.os.mu.Unlock()
	if !conn {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EInternal, "no connection to rank %d: exchange descriptors with it first (HcclExchangeMemDesc)", m.owner)
	}
	if !c.tr.ownerHas(c, m.owner, m.id) {
		// The owner's deregistration destroyed the memory's IPC name
		// (local_ipc_rma_buffer_impl.cc:140, mem_name_repository.cc:268-308),
		// so the import fails: aclrtIpcMemImportByKey → HCCL_E_RUNTIME
		// (hccl_mem.cc:369-378, adapter_rts.cc:1338-1359), thrown and
		// caught as runtime_error → HCCL_E_RUNTIME (exception_handler.cc).
		return hccl.CommMem{}, hccl.Errorf(op, hccl.ERuntime, "rank %d has deregistered memory %#x: importing it fails", m.owner, m.addr)
	}
	c.os.mu.Lock()
	if e := c.os.enabled[m.key()]; e != nil {
		e.refs++
	} else {
		c.os.enabled[m.key()] = &enabledMem{info: m, refs: 1}
	}
	c.os.mu.Unlock()
	return mem, nil
}

// DisableMemAccess ends one EnableMemAccess of a descriptor; access ends
// with the last. A descriptor not enabled, or one whose owner this rank
// has no connection to, is HCCL_E_INTERNAL (hccl_one_sided_service.cc:
// 509-515, hccl_one_sided_conn.cc:303-304).
func (s *Sim) DisableMemAccess(h hccl.CommHandle, remoteDesc *hccl.MemDesc) error {
	const op = "HcclDisableMemAccess"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if remoteDesc == nil {
		return hccl.Errorf(op, hccl.EPtr, "null descriptor")
	}
	m, ok := decodeMemDesc(remoteDesc[:])
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	e := c.os.enabled[m.key()]
	if !ok || m.world != c.world || e == nil {
		return hccl.Errorf(op, hccl.EInternal, "access to this descriptor is not enabled")
	}
	if e.refs--; e.refs == 0 {
		delete(c.os.enabled, m.key())
	}
	return nil
}

// BatchGet reads peer memory into local buffers (remote → local).
func (s *Sim) BatchGet(h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, st acl.StreamHandle) error {
	return s.oneSided("HcclBatchGet", true, h, remoteRank, descs, st)
}

// BatchPut writes local buffers into peer memory (local → remote).
func (s *Sim) BatchPut(h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, st acl.StreamHandle) error {
	return s.oneSided("HcclBatchPut", false, h, remoteRank, descs, st)
}

// Registration limits (ONE_SIDE_DEVICE_MEM_MAX_SIZE, ONE_SIDE_HOST_MEM_MAX_SIZE,
// one_sided_service_adapt.cc:44-45).
const (
	maxRegDevice = 64 << 30
	maxRegHost   = 1 << 40
)

// oneSided makes the checks of HcclBatchParaCheck
// (one_sided_service_adapt.cc:400-429: no descriptors is success, more
// than 256 or a remote rank out of range or equal to the caller's is
// HCCL_E_PARA), needs a connection to the peer
// (hccl_one_sided_service.cc:537-545: HCCL_E_NOT_FOUND without one), then
// takes the descriptors in order as the device's BatchRead/BatchWrite does
// (hccl_one_sided_conn.cc:357-383): an undefined data type is HCCL_E_PARA,
// a remote range not inside enabled memory HCCL_E_INTERNAL. The device
// has queued every descriptor before the bad one, and they move data: so
// here those are queued too and the call returns the error. With
// Options.Pedantic a bad descriptor refuses the whole batch before
// anything is queued.
func (s *Sim) oneSided(op string, get bool, h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, st acl.StreamHandle) error {
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	switch {
	case len(descs) == 0:
		return nil
	case len(descs) > hccl.MaxOneSideDescs:
		return hccl.Errorf(op, hccl.EPara, "%d descriptors: at most %d per batch", len(descs), hccl.MaxOneSideDescs)
	case int(remoteRank) >= c.n:
		return hccl.Errorf(op, hccl.EPara, "remote rank %d (this rank %d of %d)", remoteRank, c.rank, c.n)
	case int(remoteRank) == c.rank:
		return hccl.Errorf(op, hccl.EPara, "remote rank %d is this rank: a one-sided batch needs a peer", remoteRank)
	}
	if err := c.check(); err != nil {
		return herr(op, err)
	}
	peer := int(remoteRank)
	if !c.os.connected(peer) {
		return hccl.Errorf(op, hccl.ENotFound, "no connection to rank %d: exchange descriptors with it first (HcclExchangeMemDesc)", peer)
	}
	t := getOSTask(false)
	if cap(t.xs) < len(descs) {
		// A task new to the free list: its whole capacity at once, not
		// by doublings (a fetch may find the list short when its stream
		// lags behind).
		t.xs = make([]xfer, 0, hccl.MaxOneSideDescs)
	}
	t.xs = t.xs[:0]
	c.os.mu.Lock()
	t.enabled = c.os.enabledSpans(t.enabled[:0], peer)
	c.os.mu.Unlock()
	// The descriptors in the device's order, the first bad one ending the
	// batch: first what needs no memory lookup, then, for the transfers
	// before it, the local buffers and the owner's registrations (a bad
	// one there comes earlier still). The checks cost O(1) calls into the
	// NPU and the owner per batch, not per descriptor (small reads come
	// by the thousand): the owner's spans are taken once, local buffers
	// are checked against the allocations the batch falls in
	// (regions.go), and a descriptor is a few compares. Two tight loops
	// rather than one: the common case inlines into each.
	bad, badErr := len(descs), error(nil)
	eh := 0
	for i := range descs {
		d := &descs[i]
		n, err := elemBytes(op, d.Count, d.DataType)
		if err != nil {
			if hccl.ResultOf(err) == hccl.ENotSupport {
				// SalGetDataTypeSize fails with HCCL_E_PARA
				// (hccl_one_sided_conn.cc:363-366), not HcomCheckDataType.
				err = hccl.Errorf(op, hccl.EPara, "descriptor %d: undefined data type %d", i, int32(d.DataType))
			}
			bad, badErr = i, err
			break
		}
		if !(eh < len(t.enabled) && t.enabled[eh].covers(d.RemoteAddr, n)) {
			if err := checkEnabled(t.enabled, &eh, peer, d.RemoteAddr, n); err != nil {
				bad, badErr = i, herr(op, errf(codeOf(err), "descriptor %d: %s", i, err.(*simError).msg))
				break
			}
		}
		if n == 0 {
			continue
		}
		if d.LocalAddr == nil {
			bad, badErr = i, hccl.Errorf(op, hccl.EPtr, "descriptor %d: null local address", i)
			break
		}
		t.xs = append(t.xs, xfer{lptr: d.LocalAddr, remote: d.RemoteAddr, n: n, desc: i})
	}
	if len(t.xs) > 0 {
		// The owner is asked only for a batch that has something to move.
		t.spans, err = c.tr.ownerSpans(t.spans[:0], c, peer)
		if err != nil {
			putOSTask(t)
			return herr(op, err)
		}
	}
	t.lregs.reset()
	sh := 0
	for k := range t.xs {
		x := &t.xs[k]
		if !t.lregs.hit(uintptr(x.lptr), x.n) {
			if err := c.checkLocal(x, &t.lregs); err != nil {
				bad, badErr = x.desc, herr(op, err)
				t.xs = t.xs[:k]
				break
			}
		}
		if !(sh < len(t.spans) && t.spans[sh].covers(x.remote, x.n)) {
			if err := coveredBy(t.spans, &sh, peer, x.remote, x.n); err != nil {
				bad, badErr = x.desc, herr(op, err)
				t.xs = t.xs[:k]
				break
			}
		}
	}
	if badErr != nil && (s.opts.Pedantic && len(t.xs) > 0) {
		putOSTask(t)
		var moved uint64
		for _, d := range descs[:bad] {
			moved += d.Bytes()
		}
		return pedantic(badErr, fmt.Sprintf("the device queues descriptors one by one and would already have moved descriptors 0..%d (%d bytes) before failing", bad-1, moved))
	}
	if len(t.xs) == 0 {
		putOSTask(t)
		return badErr
	}
	t.s, t.c, t.peer, t.get = s, c, peer, get
	if err := t.enqueue(st); err != nil {
		return herr(op, err)
	}
	return badErr
}

// pedantic marks err (an *hccl.Error) as an Options.Pedantic refusal,
// saying what the device would have done instead.
func pedantic(err error, device string) error {
	var e *hccl.Error
	if errors.As(err, &e) {
		e2 := *e
		e2.Msg = "pedantic: " + e.Msg + "; " + device
		return &e2
	}
	return err
}

// osTask is one queued one-sided batch. Tasks are pooled, with their
// transfer list, span list and the stream task function (a method value
// made once per task, not per batch): a batch of small reads carries
// hundreds of descriptors and an engram fetch issues many batches, so
// allocating per call would dominate the cost of the reads.
type osTask struct {
	s     *Sim
	c     *comm
	peer  int
	get   bool
	local bool // CopyLocal: copies within the rank (localcopy.go)
	xs    []xfer
	spans []span
	// enabled: the peer memory this rank enabled, at the call (scratch)
	enabled []span
	// lregs, sregs: the allocations of the local buffers and of
	// CopyLocal's sources, checked once per batch (scratch, regions.go)
	lregs, sregs regions
	qt           queuedTask
	run          func() error
	// refs: the caller queueing the task and the task itself each drop
	// one when done with it; the last returns it to the free list (the
	// task may run and finish before its enqueue call has returned).
	refs atomic.Int32
}

// release drops one reference; the last returns t to the free list.
func (t *osTask) release() {
	if t.refs.Add(-1) == 0 {
		putOSTask(t)
	}
}

// osFree are the free lists of tasks, one for one-sided batches and one
// for local copies (CopyLocal), so that each kind gets back a task whose
// slices already have its capacity: lists rather than a sync.Pool, which
// every garbage collection empties (a fetch would then allocate its tasks
// again). At most osFreeMax are kept per list.
var osFree [2]struct {
	mu   sync.Mutex
	list []*osTask
}

const osFreeMax = 1024

// getOSTask returns a task from the free list of its kind (local: a
// CopyLocal task), or a new one.
func getOSTask(local bool) *osTask {
	f := &osFree[osKind(local)]
	f.mu.Lock()
	if n := len(f.list); n > 0 {
		t := f.list[n-1]
		f.list[n-1] = nil
		f.list = f.list[:n-1]
		f.mu.Unlock()
		t.local = local
		return t
	}
	f.mu.Unlock()
	t := &osTask{local: local}
	t.run = t.exec
	return t
}

func putOSTask(t *osTask) {
	// xs need no clearing: a transfer holds addresses of NPU memory,
	// outside the Go heap.
	t.xs, t.spans, t.enabled = t.xs[:0], t.spans[:0], t.enabled[:0]
	t.lregs.reset()
	t.sregs.reset()
	f := &osFree[osKind(t.local)]
	t.s, t.c, t.local = nil, nil, false
	t.qt = queuedTask{}
	f.mu.Lock()
	if len(f.list) < osFreeMax {
		f.list = append(f.list, t)
	}
	f.mu.Unlock()
}

// osKind is the free list of a task: 1 for local copies, 0 for batches.
func osKind(local bool) int {
	if local {
		return 1
	}
	return 0
}

// enqueue queues the batch on stream st, tracked for destroy. On success
// the task owns t and returns it to the pool when it has run (a task its
// failed stream skips leaves it to the garbage collector).
func (t *osTask) enqueue(st acl.StreamHandle) error {
	c := t.c
	c.trackTask(&t.qt)
	t.refs.Store(2)
	state, err := c.sim.env.enqueue(c.dev, st, t.run)
	if err != nil {
		c.untrack(&t.qt)
		putOSTask(t)
		return errf(codePara, "stream: %v", err)
	}
	c.setSkipped(&t.qt, state)
	t.release()
	return nil
}

// exec is the stream task: the transfers of the batch, checked again
// (the memory may have been freed since the call).
func (t *osTask) exec() error {
	s, c := t.s, t.c
	defer func() {
		c.untrack(&t.qt)
		t.release()
	}()
	if err := c.usable(); err != nil {
		return err
	}
	if t.local {
		return t.copyLocal()
	}
	if err := c.checkLocals(t.xs, &t.lregs); err != nil {
		return err
	}
	var start time.Time
	err := c.exclusive(func() error {
		if m := s.opts.Link; m != nil {
			now, _ := m.clock()
			start = now() // the batch starts moving bytes: the link's time runs from here
		}
		return c.tr.oneSided(c, t.peer, t.get, t.xs, c.timeout)
	})
	if m := s.opts.Link; err == nil && m != nil {
		var n uint64
		for _, x := range t.xs {
			n += x.n
		}
		m.charge(c.rank, t.peer, len(t.xs), n, start) // the copy above ran inside the link's time
	}
	c.fail(err)
	return err
}

// checkLocals checks, when a batch runs, that its local buffers are still
// live device memory of the rank (the memory may have been freed since the
// call): once per allocation the call found them in (g), or buffer by
// buffer when that does not settle it.
func (c *comm) checkLocals(xs []xfer, g *regions) error {
	if g.recheck(c, memDevice) {
		return nil
	}
	g.reset()
	for i := range xs {
		if err := c.checkLocal(&xs[i], g); err != nil {
			return err
		}
	}
	return nil
}

// checkLocal checks that x's local buffer lies in the rank's device
// memory: a compare against the allocations in g when it falls in one of
// them, else one check with the NPU, whose error says what is wrong. x.n
// is not 0.
func (c *comm) checkLocal(x *xfer, g *regions) error {
	a := uintptr(x.lptr)
	if x.n > uint64(^uintptr(0)-a) {
		return errf(codePara, "descriptor %d: local address %#x + %d bytes wraps the address space", x.desc, a, x.n)
	}
	if g.hit(a, x.n) {
		return nil
	}
	if g.lookup(c, memDevice, a, x.n) {
		return nil
	}
	if _, err := c.view(x.lptr, x.n); err != nil {
		return errf(codeOf(err), "descriptor %d: %s", x.desc, err.(*simError).msg)
	}
	g.complete = false // valid, but in no region of g
	return nil
}
