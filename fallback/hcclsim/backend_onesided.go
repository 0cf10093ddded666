package hcclsim

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// One-sided service and buffer windows of hccl.Backend.

// RegisterMem registers [addr, addr+size) for access by remoteRank and
// returns its descriptor. Registering for the caller's own rank succeeds
// and registers nothing (as HCCL).
func (s *Sim) RegisterMem(h hccl.CommHandle, remoteRank uint32, typ hccl.MemType, addr unsafe.Pointer, size uint64) (hccl.MemDesc, error) {
	const op = "HcclRegisterMem"
	c, err := s.comm(op, h)
	if err != nil {
		return hccl.MemDesc{}, err
	}
	switch {
	case int(remoteRank) >= c.n:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "remote rank %d of %d", remoteRank, c.n)
	case !typ.Valid():
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "memory type %d", typ)
	case size == 0:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPara, "size 0")
	case addr == nil:
		return hccl.MemDesc{}, hccl.Errorf(op, hccl.EPtr, "null address")
	case int(remoteRank) == c.rank:
		return hccl.MemDesc{}, nil
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
// HCCL_E_REMOTE on later access.
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
		c.os.mu.Unlock()
		return hccl.Errorf(op, hccl.ENotFound, "the descriptor is not a registration this communicator holds")
	}
	delete(c.os.regs, m.id)
	c.os.mu.Unlock()
	return herr(op, c.tr.publishReg(c, r, false))
}

// ExchangeMemDesc sends local to remoteRank and receives that peer's
// descriptors into remote. Both ranks call it naming each other; the calls
// pair in call order. timeout is ignored (HCCL reserves it): the
// communicator's execution timeout applies.
func (s *Sim) ExchangeMemDesc(h hccl.CommHandle, remoteRank uint32, local []hccl.MemDesc, timeout int32, remote []hccl.MemDesc) (uint32, error) {
	const op = "HcclExchangeMemDesc"
	c, err := s.comm(op, h)
	if err != nil {
		return 0, err
	}
	if int(remoteRank) >= c.n {
		return 0, hccl.Errorf(op, hccl.EPara, "remote rank %d of %d", remoteRank, c.n)
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
		return 0, nil
	}
	peer := int(remoteRank)
	offer := pairOffer{Payload: make([][]byte, 0, len(local))}
	var bad error
	c.os.mu.Lock()
	for i := range local {
		m, ok := decodeMemDesc(local[i][:])
		if !ok || m.world != c.world || m.owner != c.rank || m.peer != peer || c.os.regs[m.id] == nil {
			bad = hccl.Errorf(op, hccl.EPara, "descriptor %d is not memory this rank registered for rank %d", i, peer)
			break
		}
		offer.Payload = append(offer.Payload, local[i][:64])
	}
	c.os.mu.Unlock()
	if bad != nil {
		return 0, bad // before any rendezvous
	}
	res, err := c.tr.pair(c, pairXchg, peer, c.rank < peer, offer, wait)
	if err != nil {
		return 0, herr(op, err)
	}
	if len(res.peer.Payload) > len(remote) {
		return 0, hccl.Errorf(op, hccl.EPara, "rank %d sent %d descriptors, capacity %d", peer, len(res.peer.Payload), len(remote))
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	for i, p := range res.peer.Payload {
		m, ok := decodeMemDesc(p)
		if !ok || m.world != c.world || m.owner != peer || m.peer != c.rank {
			return 0, hccl.Errorf(op, hccl.EInternal, "rank %d sent a malformed descriptor", peer)
		}
		c.os.received[m.key()] = m
		remote[i] = hccl.MemDesc(m.encode())
	}
	return uint32(len(res.peer.Payload)), nil
}

// EnableMemAccess turns a descriptor a peer sent by ExchangeMemDesc into
// access, returning the peer memory it names.
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
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EPara, "not a peer's descriptor addressed to this rank on this communicator")
	}
	c.os.mu.Lock()
	_, got := c.os.received[m.key()]
	_, on := c.os.enabled[m.key()]
	c.os.mu.Unlock()
	if !got {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EPara, "descriptor of rank %d was never received by ExchangeMemDesc", m.owner)
	}
	if on {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.EPara, "access to rank %d's memory %#x is already enabled", m.owner, m.addr)
	}
	if !c.tr.ownerHas(c, m.owner, m.id) {
		return hccl.CommMem{}, hccl.Errorf(op, hccl.ENotFound, "rank %d has deregistered memory %#x", m.owner, m.addr)
	}
	c.os.mu.Lock()
	c.os.enabled[m.key()] = m
	c.os.mu.Unlock()
	return hccl.CommMem{Type: hccl.MemType(m.typ), Addr: m.addr, Size: m.size}, nil
}

// DisableMemAccess ends access enabled by EnableMemAccess.
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
	if _, on := c.os.enabled[m.key()]; !ok || m.world != c.world || !on {
		return hccl.Errorf(op, hccl.ENotFound, "access to this descriptor is not enabled")
	}
	delete(c.os.enabled, m.key())
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

// oneSided checks every descriptor at the call (before any byte moves):
// the local buffer, access enabled on this rank, and the owner still
// holding the registration; then it queues the transfers on the stream.
// A batch addressed to the caller's own rank is a local copy: its remote
// addresses must lie in memory the rank registered on this communicator
// (checkOwn), and it never involves the transport.
func (s *Sim) oneSided(op string, get bool, h hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, st acl.StreamHandle) error {
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	if int(remoteRank) >= c.n {
		return hccl.Errorf(op, hccl.EPara, "remote rank %d (this rank %d of %d)", remoteRank, c.rank, c.n)
	}
	peer := int(remoteRank)
	self := peer == c.rank
	xs := getXfers(len(descs))
	queued := false
	defer func() {
		if !queued {
			putXfers(xs)
		}
	}()
	for i, d := range descs {
		n, err := elemBytes(op, d.Count, d.DataType)
		if err != nil {
			if hccl.ResultOf(err) == hccl.ENotSupport {
				// A descriptor's type is checked by the one-sided service,
				// not HcomCheckDataType: HCCL_E_PARA (hccl-vs-source.md).
				return hccl.Errorf(op, hccl.EPara, "descriptor %d: undefined data type %d", i, int32(d.DataType))
			}
			return err
		}
		if n == 0 {
			continue
		}
		if d.LocalAddr == nil {
			return hccl.Errorf(op, hccl.EPtr, "descriptor %d: null local address", i)
		}
		xs = append(xs, xfer{lptr: d.LocalAddr, remote: d.RemoteAddr, n: n})
	}
	if len(xs) == 0 {
		return nil
	}
	if err := c.check(); err != nil {
		return herr(op, err)
	}
	// The checks cost O(1) calls into the NPU and the owner per batch, not
	// per descriptor: small reads come by the thousand.
	if err := c.localViews(xs); err != nil {
		return herr(op, err)
	}
	if self {
		spans := c.os.spansFor(anyPeer)
		for _, x := range xs {
			if err := checkOwn(spans, c.rank, x.remote, x.n); err != nil {
				return herr(op, err)
			}
		}
	} else {
		enabled := c.os.enabledFor(peer)
		spans, err := c.tr.ownerSpans(c, peer)
		if err != nil {
			return herr(op, err)
		}
		for _, x := range xs {
			if err := checkRemote(enabled, peer, x.remote, x.n); err != nil {
				return herr(op, err)
			}
			if err := coveredBy(spans, peer, x.remote, x.n); err != nil {
				return herr(op, err)
			}
		}
	}
	g := newGate[struct{}]()
	err = enqueueGated(c, st, g, func(struct{}) error {
		defer putXfers(xs)
		// Views again: the memory may have been freed since the call.
		if err := c.localViews(xs); err != nil {
			return err
		}
		err := c.exclusive(func() error {
			if self {
				return c.selfCopy(get, xs)
			}
			return c.tr.oneSided(c, peer, get, xs, c.timeout)
		})
		c.fail(err)
		return err
	})
	if err != nil {
		return herr(op, err)
	}
	queued = true // the task returns xs to the pool (a skipped task drops it)
	g.open(struct{}{}, nil)
	return nil
}

// xferPool recycles the transfer lists of one-sided batches: a batch of
// small reads carries thousands of descriptors, and allocating their list
// per call would dominate the cost of the reads.
var xferPool sync.Pool

func getXfers(n int) []xfer {
	if p, ok := xferPool.Get().(*[]xfer); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]xfer, 0, n)
}

func putXfers(xs []xfer) {
	xs = xs[:cap(xs)]
	clear(xs) // drop the views into device memory
	xs = xs[:0]
	xferPool.Put(&xs)
}

// selfCopy runs a batch addressed to the caller's own rank: every remote
// range is resolved against the rank's live registrations (any peer)
// before a byte moves; one deregistered since the call is an error
// completion (HCCL_E_REMOTE), as for a peer's memory.
func (c *comm) selfCopy(get bool, xs []xfer) error {
	return moveResolved(c.os.resolver(c, anyPeer), get, xs)
}

// localViews takes the views of a batch's local buffers. When they all
// fall in one range that is a single live allocation (rows gathered into
// one buffer, the common case), one check covers them all; otherwise each
// is checked on its own.
func (c *comm) localViews(xs []xfer) error {
	lo, hi := ^uintptr(0), uintptr(0)
	for i, x := range xs {
		a := uintptr(x.lptr)
		if x.n > uint64(^uintptr(0)-a) {
			return errf(codePara, "descriptor %d: local address %#x + %d bytes wraps the address space", i, a, x.n)
		}
		lo, hi = min(lo, a), max(hi, a+uintptr(x.n))
	}
	if v, err := c.view(ptrOf(lo), uint64(hi-lo)); err == nil {
		for i := range xs {
			off := uintptr(xs[i].lptr) - lo
			xs[i].local = v[off : off+uintptr(xs[i].n)]
		}
		return nil
	}
	for i := range xs {
		v, err := c.view(xs[i].lptr, xs[i].n)
		if err != nil {
			return err
		}
		xs[i].local = v
	}
	return nil
}

// CommRegister registers a buffer window with the communicator.
func (s *Sim) CommRegister(h hccl.CommHandle, addr unsafe.Pointer, size uint64, flag uint32) (hccl.RegistrationHandle, error) {
	const op = "HcclCommRegister"
	c, err := s.comm(op, h)
	if err != nil {
		return 0, err
	}
	switch {
	case addr == nil:
		return 0, hccl.Errorf(op, hccl.EPtr, "null address")
	case size == 0:
		return 0, hccl.Errorf(op, hccl.EPara, "size 0")
	case flag != 0:
		return 0, hccl.Errorf(op, hccl.EPara, "flag %d (reserved, must be 0)", flag)
	}
	if _, err := c.view(addr, size); err != nil {
		return 0, herr(op, err)
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	c.os.nextWin += 0x40
	w := 0x7000 + c.os.nextWin
	c.os.windows[w] = &window{addr: addr, size: size, peers: map[int][2]uint64{}}
	return hccl.RegistrationHandle(w), nil
}

// CommDeregister releases a window.
func (s *Sim) CommDeregister(h hccl.CommHandle, w hccl.RegistrationHandle) error {
	const op = "HcclCommDeregister"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	if c.os.windows[uintptr(w)] == nil {
		return hccl.Errorf(op, hccl.ENotFound, "window %#x is not registered on this communicator", uintptr(w))
	}
	delete(c.os.windows, uintptr(w))
	return nil
}

// CommExchangeMem exchanges a window with each listed peer (which must
// call it naming this rank); all pairings proceed at once.
func (s *Sim) CommExchangeMem(h hccl.CommHandle, w hccl.RegistrationHandle, peerRanks []uint32) error {
	const op = "HcclCommExchangeMem"
	c, err := s.comm(op, h)
	if err != nil {
		return err
	}
	c.os.mu.Lock()
	win := c.os.windows[uintptr(w)]
	c.os.mu.Unlock()
	if win == nil {
		return hccl.Errorf(op, hccl.ENotFound, "window %#x is not registered on this communicator", uintptr(w))
	}
	for _, p := range peerRanks {
		if int(p) >= c.n || int(p) == c.rank {
			return hccl.Errorf(op, hccl.EPara, "peer %d (this rank %d of %d)", p, c.rank, c.n)
		}
	}
	offer := pairOffer{Count: uint64(uintptr(win.addr)), Payload: [][]byte{le64(win.size)}}
	errs := make([]error, len(peerRanks))
	res := make([]pairResult, len(peerRanks))
	done := make(chan int, len(peerRanks))
	for i, p := range peerRanks {
		go func(i, p int) {
			res[i], errs[i] = c.tr.pair(c, pairWin, p, c.rank < p, offer, c.timeout)
			done <- i
		}(i, int(p))
	}
	for range peerRanks {
		<-done
	}
	for _, e := range errs {
		if e != nil {
			return herr(op, e)
		}
	}
	c.os.mu.Lock()
	defer c.os.mu.Unlock()
	for i, p := range peerRanks {
		size := uint64(0)
		if len(res[i].peer.Payload) == 1 && len(res[i].peer.Payload[0]) == 8 {
			size = leU64(res[i].peer.Payload[0])
		}
		win.peers[int(p)] = [2]uint64{res[i].peer.Count, size}
	}
	return nil
}
