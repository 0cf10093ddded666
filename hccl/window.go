package hccl

import (
	"context"
	"errors"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// LocalMem is memory this rank registered for one peer (HcclRegisterMem).
// Its descriptor goes to the peer through ExchangeMemDesc. Safe for
// concurrent use; Close (HcclDeregisterMem) is idempotent.
type LocalMem struct {
	c    *Comm
	peer int
	addr unsafe.Pointer
	size uint64
	typ  MemType
	desc MemDesc

	once sync.Once
	err  error
}

// RegisterMem registers [addr, addr+size) of memory type typ for access by
// rank peer.
func (c *Comm) RegisterMem(peer int, typ MemType, addr unsafe.Pointer, size uint64) (*LocalMem, error) {
	if err := c.live("HcclRegisterMem"); err != nil {
		return nil, err
	}
	r, err := c.peer("HcclRegisterMem", peer)
	if err != nil {
		return nil, err
	}
	d, err := c.b.RegisterMem(c.h, r, typ, addr, size)
	if err != nil {
		return nil, err
	}
	return &LocalMem{c: c, peer: peer, addr: addr, size: size, typ: typ, desc: d}, nil
}

// RegisterMemory is RegisterMem of acl memory: an *acl.DeviceBuffer
// (HCCL_MEM_TYPE_DEVICE) or an *acl.HostBuffer (HCCL_MEM_TYPE_HOST), whole.
// The registration does not keep the memory open: close the LocalMem (and
// let the peers finish with it) before the memory.
func (c *Comm) RegisterMemory(peer int, m acl.Memory) (*LocalMem, error) {
	typ, err := memType("HcclRegisterMem", m)
	if err != nil {
		return nil, err
	}
	return c.RegisterMem(peer, typ, m.Ptr(), uint64(m.Size()))
}

// memType is the HCCL memory type of acl memory.
func memType(op string, m acl.Memory) (MemType, error) {
	switch m.(type) {
	case *acl.DeviceBuffer:
		return MemDevice, nil
	case *acl.HostBuffer:
		return MemHost, nil
	case nil:
		return 0, Errorf(op, EPtr, "nil memory")
	}
	return 0, Errorf(op, EPara, "%T is neither an *acl.DeviceBuffer nor an *acl.HostBuffer", m)
}

// Desc returns the descriptor to send to the peer.
func (m *LocalMem) Desc() MemDesc {
	if m == nil {
		return MemDesc{}
	}
	return m.desc
}

// Peer is the rank the memory was registered for.
func (m *LocalMem) Peer() int {
	if m == nil {
		return -1
	}
	return m.peer
}

// Addr and Size give the registered range.
func (m *LocalMem) Addr() unsafe.Pointer {
	if m == nil {
		return nil
	}
	return m.addr
}

// Size is the registered length in bytes.
func (m *LocalMem) Size() uint64 {
	if m == nil {
		return 0
	}
	return m.size
}

// Close deregisters the memory; peers that enabled it get HCCL_E_REMOTE on
// later access.
func (m *LocalMem) Close() error {
	if m == nil {
		return nil
	}
	m.once.Do(func() {
		d := m.desc
		m.err = m.c.b.DeregisterMem(m.c.h, &d)
	})
	return m.err
}

// ExchangeMemDesc sends local to peer and returns the descriptors the peer
// sends back (at most max). Both ranks must call it for each other.
func (c *Comm) ExchangeMemDesc(ctx context.Context, peer int, local []MemDesc, max int) ([]MemDesc, error) {
	if err := c.pre(ctx, "HcclExchangeMemDesc"); err != nil {
		return nil, err
	}
	r, err := c.peer("HcclExchangeMemDesc", peer)
	if err != nil {
		return nil, err
	}
	if max < 0 {
		return nil, Errorf("HcclExchangeMemDesc", EPara, "capacity %d", max)
	}
	remote := make([]MemDesc, max)
	n, err := c.b.ExchangeMemDesc(c.h, r, local, 0, remote)
	if err != nil {
		return nil, err
	}
	if int(n) > max {
		// The device does not check the capacity (transport_mem.cc:
		// 175-199) and writes the rest past the end of the array.
		return nil, Errorf("HcclExchangeMemDesc", EPara, "rank %d sent %d descriptors for a capacity of %d", peer, n, max)
	}
	return remote[:n], nil
}

// RemoteMem is access to a peer's registered memory (HcclEnableMemAccess).
// Safe for concurrent use; Close (HcclDisableMemAccess) is idempotent.
type RemoteMem struct {
	c    *Comm
	desc MemDesc
	mem  CommMem

	once sync.Once
	err  error
}

// EnableMemAccess enables access to the memory a peer's descriptor names.
func (c *Comm) EnableMemAccess(desc MemDesc) (*RemoteMem, error) {
	if err := c.live("HcclEnableMemAccess"); err != nil {
		return nil, err
	}
	mem, err := c.b.EnableMemAccess(c.h, &desc)
	if err != nil {
		return nil, err
	}
	return &RemoteMem{c: c, desc: desc, mem: mem}, nil
}

// Mem is the peer memory (address in the peer's space, size, type).
func (m *RemoteMem) Mem() CommMem {
	if m == nil {
		return CommMem{}
	}
	return m.mem
}

// Close disables the access.
func (m *RemoteMem) Close() error {
	if m == nil {
		return nil
	}
	m.once.Do(func() {
		d := m.desc
		m.err = m.c.b.DisableMemAccess(m.c.h, &d)
	})
	return m.err
}

// Transfer is one range moved between this rank and a Window peer: Count
// elements of DataType between Local and byte Offset of the peer's window
// (fetched into Local by Get, stored from Local by Put). A plain value.
type Transfer struct {
	Local    unsafe.Pointer
	Offset   uint64
	Count    uint64
	DataType DataType
}

// Window is a buffer every rank of a communicator registered for every
// other rank, with access enabled both ways: rank r can BatchGet from and
// BatchPut to the windows of all peers by offset. OpenWindow is collective.
// Get and Put are safe for concurrent use; Close is idempotent.
type Window struct {
	c      *Comm
	mem    acl.Memory // the window's memory when opened from acl memory, else nil
	addr   unsafe.Pointer
	size   uint64
	local  []*LocalMem  // by peer, nil for self
	remote []*RemoteMem // by peer, nil for self

	pool sync.Pool // *[]OneSideOpDesc scratch, so Get does not allocate

	mu     sync.Mutex
	closed bool
	err    error
}

// OpenWindow registers [addr, addr+size) of memory type typ for every peer,
// exchanges descriptors with every peer (in ascending rank order, which
// cannot deadlock) and enables access to every peer's window. Every rank
// must call it; window sizes may differ between ranks.
func (c *Comm) OpenWindow(ctx context.Context, typ MemType, addr unsafe.Pointer, size uint64) (*Window, error) {
	if c == nil {
		return nil, NilHandle("HcclCommRegister", "communicator")
	}
	w := &Window{c: c, addr: addr, size: size, local: make([]*LocalMem, c.size), remote: make([]*RemoteMem, c.size)}
	if err := w.open(ctx, typ); err != nil {
		_ = w.Close() // undo what was set up; the first error is the one to report
		return nil, err
	}
	return w, nil
}

func (w *Window) open(ctx context.Context, typ MemType) error {
	c := w.c
	var err error
	for p := 0; p < c.size; p++ {
		if p == c.rank {
			continue
		}
		if w.local[p], err = c.RegisterMem(p, typ, w.addr, w.size); err != nil {
			return err
		}
	}
	for p := 0; p < c.size; p++ {
		if p == c.rank {
			continue
		}
		got, err := c.ExchangeMemDesc(ctx, p, []MemDesc{w.local[p].Desc()}, 1)
		if err != nil {
			return err
		}
		if len(got) != 1 {
			return Errorf("HcclExchangeMemDesc", EInternal, "rank %d sent %d descriptors, want 1", p, len(got))
		}
		if w.remote[p], err = c.EnableMemAccess(got[0]); err != nil {
			return err
		}
	}
	return nil
}

// OpenWindowMemory is OpenWindow over acl memory, whole: an
// *acl.DeviceBuffer or an *acl.HostBuffer. Get and Put keep it open while
// they queue work, and its Close waits for that work (acl.Stream.Do); the
// Comm must be on an acl.Stream (OnStream or UseStream).
func (c *Comm) OpenWindowMemory(ctx context.Context, m acl.Memory) (*Window, error) {
	typ, err := memType("OpenWindow", m)
	if err != nil {
		return nil, err
	}
	if c.ACLStream() == nil {
		return nil, Errorf("OpenWindow", EPara, "acl memory needs a communicator on an acl.Stream (OnStream or UseStream)")
	}
	w := &Window{c: c, mem: m, addr: m.Ptr(), size: uint64(m.Size()), local: make([]*LocalMem, c.size), remote: make([]*RemoteMem, c.size)}
	if err := w.open(ctx, typ); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// Comm returns the communicator of the window.
func (w *Window) Comm() *Comm {
	if w == nil {
		return nil
	}
	return w.c
}

// Size is this rank's window length in bytes.
func (w *Window) Size() uint64 {
	if w == nil {
		return 0
	}
	return w.size
}

// Addr is this rank's window.
func (w *Window) Addr() unsafe.Pointer {
	if w == nil {
		return nil
	}
	return w.addr
}

// PeerSize is the window length of rank peer: this rank's own for self, 0
// for an unknown rank.
func (w *Window) PeerSize(peer int) uint64 {
	if w == nil {
		return 0
	}
	if peer < 0 || peer >= len(w.remote) {
		return 0
	}
	return w.peerMem(peer).Size
}

// PeerMem is the window of rank peer as a one-sided address range (the
// RemoteAddr base of a OneSideOpDesc): an enabled peer's memory, this
// rank's own window for self (to copy from locally: a one-sided batch to
// the own rank is HCCL_E_PARA), the zero CommMem for an unknown rank. Callers that post descriptors themselves (one
// BatchGet per peer, each on a stream of their choosing) use it.
func (w *Window) PeerMem(peer int) CommMem {
	if w == nil {
		return CommMem{}
	}
	if peer < 0 || peer >= len(w.remote) {
		return CommMem{}
	}
	return w.peerMem(peer)
}

// peerMem is the window of rank peer as a one-sided address range: the
// enabled remote memory of a peer, or this rank's own window.
func (w *Window) peerMem(peer int) CommMem {
	if peer == w.c.rank {
		return CommMem{Addr: uintptr(w.addr), Size: w.size}
	}
	if r := w.remote[peer]; r != nil {
		return r.mem
	}
	return CommMem{}
}

// Get reads every range from peer's window: BatchGets of at most
// MaxOneSideDescs ranges each. Ranges are checked against the peer's
// window size first, with HCCL_E_PARA; so is peer = this rank (HCCL
// refuses a one-sided batch addressed to the caller's own rank: copy the
// own window locally).
func (w *Window) Get(ctx context.Context, peer int, reads []Transfer) error {
	if w == nil {
		return NilHandle("Window.Get", "window")
	}
	return w.transfer(ctx, "HcclBatchGet", peer, nil, reads, w.c.b.BatchGet)
}

// Put writes every range into peer's window (BatchPuts of at most
// MaxOneSideDescs ranges).
func (w *Window) Put(ctx context.Context, peer int, writes []Transfer) error {
	if w == nil {
		return NilHandle("Window.Put", "window")
	}
	return w.transfer(ctx, "HcclBatchPut", peer, nil, writes, w.c.b.BatchPut)
}

// GetMem is Get into acl memory: every read's Local range lies inside
// local (else HCCL_E_PARA), which stays open while the reads are queued
// and whose Close waits for them.
func (w *Window) GetMem(ctx context.Context, peer int, local acl.Memory, reads []Transfer) error {
	if w == nil {
		return NilHandle("Window.GetMem", "window")
	}
	return w.transfer(ctx, "HcclBatchGet", peer, local, reads, w.c.b.BatchGet)
}

// PutMem is Put from acl memory (see GetMem).
func (w *Window) PutMem(ctx context.Context, peer int, local acl.Memory, writes []Transfer) error {
	if w == nil {
		return NilHandle("Window.PutMem", "window")
	}
	return w.transfer(ctx, "HcclBatchPut", peer, local, writes, w.c.b.BatchPut)
}

func (w *Window) transfer(ctx context.Context, op string, peer int, local acl.Memory, rs []Transfer,
	call func(CommHandle, uint32, []OneSideOpDesc, acl.StreamHandle) error) error {
	if err := w.c.pre(ctx, op); err != nil {
		return err
	}
	if peer < 0 || peer >= w.c.size || peer == w.c.rank {
		return Errorf(op, EPara, "peer %d of %d (self %d): a one-sided batch needs another rank", peer, w.c.size, w.c.rank)
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return Errorf(op, EPara, "window closed")
	}
	mem := w.peerMem(peer)
	sp, _ := w.pool.Get().(*[]OneSideOpDesc)
	if sp == nil {
		sp = new([]OneSideOpDesc)
	}
	descs := (*sp)[:0]
	defer func() {
		clear(descs) // drop the local pointers before pooling
		*sp = descs[:0]
		w.pool.Put(sp)
	}()
	for i, r := range rs {
		n := r.Count * uint64(r.DataType.Size())
		if !r.DataType.Valid() || r.Offset > mem.Size || n > mem.Size-r.Offset || (r.Count != 0 && n/r.Count != uint64(r.DataType.Size())) {
			return Errorf(op, EPara, "range %d: offset %d, %d × %v outside the %d-byte window of rank %d",
				i, r.Offset, r.Count, r.DataType, mem.Size, peer)
		}
		if local != nil && !inside(local, r.Local, n) {
			return Errorf(op, EPara, "range %d: local [%p, +%d) is not inside the %d bytes at %p", i, r.Local, n, local.Size(), local.Ptr())
		}
		descs = append(descs, OneSideOpDesc{LocalAddr: r.Local, RemoteAddr: mem.Addr + uintptr(r.Offset), Count: r.Count, DataType: r.DataType})
	}
	var use [2]acl.Memory
	k := 0
	for _, m := range []acl.Memory{w.mem, local} {
		if m != nil {
			use[k] = m
			k++
		}
	}
	for lo := 0; lo < len(descs); lo += MaxOneSideDescs {
		batch := descs[lo:min(len(descs), lo+MaxOneSideDescs)]
		if err := w.c.issue(ctx, op, func(s acl.StreamHandle) error { return call(w.c.h, uint32(peer), batch, s) }, use[:k]...); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether [p, p+n) lies inside m.
func inside(m acl.Memory, p unsafe.Pointer, n uint64) bool {
	lo, a := uintptr(m.Ptr()), uintptr(p)
	return lo != 0 && a >= lo && uint64(a-lo) <= uint64(m.Size()) && n <= uint64(m.Size())-uint64(a-lo)
}

// Close disables access to the peers' windows and deregisters this rank's
// window. It does not synchronise with peers: call it after a Barrier once
// no rank uses the window any more.
func (w *Window) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	w.closed = true
	var errs []error
	for _, r := range w.remote {
		if r != nil {
			errs = append(errs, r.Close())
		}
	}
	for _, l := range w.local {
		if l != nil {
			errs = append(errs, l.Close())
		}
	}
	w.err = errors.Join(errs...)
	return w.err
}

// Registration is a buffer registered with the communicator
// (HcclCommRegister), so collectives can use it in place once exchanged
// with the peers. Safe for concurrent use; Close is idempotent.
type Registration struct {
	c    *Comm
	h    RegistrationHandle
	once sync.Once
	err  error
}

// Register registers [addr, addr+size) with the communicator.
func (c *Comm) Register(addr unsafe.Pointer, size uint64) (*Registration, error) {
	if err := c.live("HcclCommRegister"); err != nil {
		return nil, err
	}
	h, err := c.b.CommRegister(c.h, addr, size, 0)
	if err != nil {
		return nil, err
	}
	return &Registration{c: c, h: h}, nil
}

// Handle is the window handle.
func (r *Registration) Handle() RegistrationHandle {
	if r == nil {
		return 0
	}
	return r.h
}

// Exchange exchanges the registration with peers (HcclCommExchangeMem);
// every listed peer must exchange with this rank too.
func (r *Registration) Exchange(ctx context.Context, peers []int) error {
	if r == nil {
		return NilHandle("HcclCommExchangeMem", "registration")
	}
	if err := r.c.pre(ctx, "HcclCommExchangeMem"); err != nil {
		return err
	}
	ps := make([]uint32, len(peers))
	for i, p := range peers {
		u, err := r.c.peer("HcclCommExchangeMem", p)
		if err != nil {
			return err
		}
		ps[i] = u
	}
	return r.c.b.CommExchangeMem(r.c.h, r.h, ps)
}

// Close deregisters the buffer.
func (r *Registration) Close() error {
	if r == nil {
		return nil
	}
	r.once.Do(func() { r.err = r.c.b.CommDeregister(r.c.h, r.h) })
	return r.err
}
