package hccl

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Comm is one rank's communicator: the backend that created it, the
// handle, its rank and size, the device it runs on and the stream its
// operations are issued to.
//
// On an acl.Stream (OnStream, UseStream) a Comm binds that stream's device
// context itself for every call, as acl.Device does, so any goroutine may
// drive it; the *Mem methods take acl device memory, keep it open while
// the call uses it and make its Close wait for the queued work. With a raw
// stream handle (WithStream) the caller binds the context (a goroutine
// locked to its OS thread) and passes raw pointers.
//
// Contexts: each operation checks its context first. On an acl.Stream a
// context with a deadline or cancel also ends the wait for peers (a
// communicator's formation, a barrier, a collective some rank has not
// called): the operation returns an *Error with code HCCL_E_TIMEOUT whose
// Err is ctx.Err(), so errors.Is matches both. The abandoned call finishes
// in the backend (it cannot be torn out of C while it may touch the
// buffers): it keeps the buffers it uses open, and the next operation of
// the Comm waits for it. With a raw stream a call in progress is bounded
// by the backend's timeout (HCCL_E_TIMEOUT) only.
//
// Comm is safe for concurrent use in the sense that its methods do not
// race on Go state and Close may be called from any goroutine; but every
// rank must issue the collectives of a communicator in the same order, so
// drive one Comm from one goroutine at a time.
type Comm struct {
	b      Backend
	h      CommHandle
	rank   int
	size   int
	device int32
	stream atomic.Uintptr
	astrm  atomic.Pointer[acl.Stream] // set by OnStream / UseStream

	// turn is held by the operation in the backend: an operation the
	// caller's context abandoned keeps it until the backend returns, so
	// the next one cannot overtake it (every rank must issue in order).
	turn chan struct{}

	mu     sync.Mutex
	closed bool
}

// CommOption configures a Comm; options are applied once, by the function
// that receives them.
type CommOption func(*commOptions)

type commOptions struct {
	astrm     *acl.Stream
	stream    acl.StreamHandle
	streams   []acl.StreamHandle
	device    int32
	deviceSet bool
	cfg       *CommConfig
}

// WithStream issues the communicator's operations to s (default: the null
// stream, 0).
func WithStream(s acl.StreamHandle) CommOption { return func(o *commOptions) { o.stream = s } }

// OnStream issues the communicator's operations to s and binds s's device
// context for every call, including the communicator's formation (so the
// rank runs on s's device).
func OnStream(s *acl.Stream) CommOption {
	return func(o *commOptions) {
		o.astrm, o.stream = s, s.Handle()
		o.device, o.deviceSet = s.Device().ID(), true
	}
}

// WithStreams gives InitAll one stream per communicator, in device order.
func WithStreams(s []acl.StreamHandle) CommOption { return func(o *commOptions) { o.streams = s } }

// WithDevice records the device the rank runs on (InitAll sets it from its
// device list).
func WithDevice(d int32) CommOption {
	return func(o *commOptions) { o.device, o.deviceSet = d, true }
}

// WithConfig initialises through HcclCommInitRootInfoConfig with cfg.
func WithConfig(cfg *CommConfig) CommOption { return func(o *commOptions) { o.cfg = cfg } }

func collect(opts []CommOption) commOptions {
	var o commOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// InitRootInfo joins rank of an nRanks communicator described by root (the
// bytes rank 0 got from GetRootInfo). It blocks until every rank joined.
func InitRootInfo(b Backend, root *RootInfo, nRanks, rank int, opts ...CommOption) (*Comm, error) {
	return InitRootInfoContext(context.Background(), b, root, nRanks, rank, opts...)
}

// InitRootInfoContext is InitRootInfo whose wait for the other ranks also
// ends when ctx does, on a Comm created OnStream (see Comm for what a
// context ends): the result is then an HCCL_E_TIMEOUT *Error wrapping
// ctx.Err(), and a communicator the backend forms later is destroyed.
func InitRootInfoContext(ctx context.Context, b Backend, root *RootInfo, nRanks, rank int, opts ...CommOption) (*Comm, error) {
	if b == nil {
		return nil, NilHandle("HcclCommInitRootInfo", "backend")
	}
	const op = "HcclCommInitRootInfo"
	o := collect(opts)
	if err := ctxDone(op, ctx); err != nil {
		return nil, err
	}
	if nRanks < 0 || rank < 0 || uint64(nRanks) > 1<<32-1 || uint64(rank) > 1<<32-1 {
		return nil, Errorf(op, EPara, "nRanks %d, rank %d", nRanks, rank)
	}
	return form(ctx, op, b, o, func() (CommHandle, error) {
		if o.cfg != nil {
			return b.CommInitRootInfoConfig(uint32(nRanks), root, uint32(rank), o.cfg)
		}
		return b.CommInitRootInfo(uint32(nRanks), root, uint32(rank))
	})
}

// form creates a communicator through mk and wraps it: directly with a raw
// stream, else under the acl.Stream's device context, abandoned (and the
// late handle destroyed) when ctx ends first.
func form(ctx context.Context, op string, b Backend, o commOptions, mk func() (CommHandle, error)) (*Comm, error) {
	if o.astrm == nil {
		h, err := mk()
		if err != nil {
			return nil, err
		}
		return wrapNew(b, h, o)
	}
	dev := o.astrm.Device()
	type result struct {
		c   *Comm
		err error
	}
	run := func() (r result) {
		bindErr := dev.Do(func() error {
			var h CommHandle
			if h, r.err = mk(); r.err == nil {
				r.c, r.err = wrapNew(b, h, o)
			}
			return nil
		})
		if bindErr != nil {
			r.err = bindErr
		}
		return r
	}
	if ctx == nil || ctx.Done() == nil {
		r := run()
		return r.c, r.err
	}
	done := make(chan result, 1)
	go func() { done <- run() }()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		select {
		case r := <-done:
			return r.c, r.err
		default:
		}
		go func() {
			if r := <-done; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, ctxError(op, ctx)
	}
}

// InitClusterInfo joins rank of the communicator described by a rank table
// file. With WithConfig it calls HcclCommInitClusterInfoConfig, which a
// backend offers through ClusterInfoConfigBackend (an error matching
// ErrNotSupported otherwise).
func InitClusterInfo(b Backend, rankTablePath string, rank int, opts ...CommOption) (*Comm, error) {
	o := collect(opts)
	op := "HcclCommInitClusterInfo"
	if o.cfg != nil {
		op = "HcclCommInitClusterInfoConfig"
	}
	if b == nil {
		return nil, NilHandle(op, "backend")
	}
	if rank < 0 || uint64(rank) > 1<<32-1 {
		return nil, Errorf(op, EPara, "rank %d", rank)
	}
	return form(context.Background(), op, b, o, func() (CommHandle, error) {
		if o.cfg != nil {
			cb, ok := b.(ClusterInfoConfigBackend)
			if !ok {
				return 0, Errorf(op, ENotSupport, "backend %s has no HcclCommInitClusterInfoConfig", b.Name())
			}
			return cb.CommInitClusterInfoConfig(rankTablePath, uint32(rank), o.cfg)
		}
		return b.CommInitClusterInfo(rankTablePath, uint32(rank))
	})
}

// InitAll creates one communicator per device in a single call (rank i runs
// on devices[i]). Hand each Comm to the goroutine that drives that rank.
func InitAll(b Backend, devices []int32, opts ...CommOption) ([]*Comm, error) {
	if b == nil {
		return nil, NilHandle("HcclCommInitAll", "backend")
	}
	o := collect(opts)
	if o.streams != nil && len(o.streams) != len(devices) {
		return nil, Errorf("HcclCommInitAll", EPara, "%d streams for %d devices", len(o.streams), len(devices))
	}
	hs, err := b.CommInitAll(devices)
	if err != nil {
		return nil, err
	}
	out := make([]*Comm, len(hs))
	for i, h := range hs {
		oi := o
		oi.device, oi.deviceSet = devices[i], true
		if o.streams != nil {
			oi.stream = o.streams[i]
		}
		c, err := wrapNew(b, h, oi)
		if err != nil {
			for _, d := range hs[i:] {
				_ = b.CommDestroy(d)
			}
			for _, d := range out[:i] {
				_ = d.Close()
			}
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// Wrap adopts a handle created elsewhere; Close will destroy it.
func Wrap(b Backend, h CommHandle, opts ...CommOption) (*Comm, error) {
	if b == nil {
		return nil, NilHandle("hccl.Wrap", "backend")
	}
	return wrap(b, h, collect(opts))
}

// wrapNew is wrap for a handle this package created: on failure the handle
// is destroyed rather than leaked.
func wrapNew(b Backend, h CommHandle, o commOptions) (*Comm, error) {
	c, err := wrap(b, h, o)
	if err != nil {
		_ = b.CommDestroy(h)
	}
	return c, err
}

func wrap(b Backend, h CommHandle, o commOptions) (*Comm, error) {
	size, err := b.GetRankSize(h)
	if err != nil {
		return nil, err
	}
	rank, err := b.GetRankId(h)
	if err != nil {
		return nil, err
	}
	c := &Comm{b: b, h: h, rank: int(rank), size: int(size), device: o.device, turn: make(chan struct{}, 1)}
	c.astrm.Store(o.astrm)
	if !o.deviceSet {
		c.device = -1
	}
	c.stream.Store(uintptr(o.stream))
	return c, nil
}

// Backend returns the backend the communicator belongs to.
func (c *Comm) Backend() Backend {
	if c == nil {
		return nil
	}
	return c.b
}

// Handle returns the C handle (valid until Close).
func (c *Comm) Handle() CommHandle {
	if c == nil {
		return 0
	}
	return c.h
}

// Rank is this rank's id in [0, Size).
func (c *Comm) Rank() int {
	if c == nil {
		return -1
	}
	return c.rank
}

// Size is the number of ranks.
func (c *Comm) Size() int {
	if c == nil {
		return 0
	}
	return c.size
}

// Device is the device the rank runs on, -1 when unknown.
func (c *Comm) Device() int32 {
	if c == nil {
		return -1
	}
	return c.device
}

// Stream is the stream operations are issued to.
func (c *Comm) Stream() acl.StreamHandle {
	if c == nil {
		return 0
	}
	return acl.StreamHandle(c.stream.Load())
}

// SetStream changes the stream of later operations to a raw handle; the
// caller binds the device context from then on.
func (c *Comm) SetStream(s acl.StreamHandle) {
	if c == nil {
		return
	}
	c.astrm.Store(nil)
	c.stream.Store(uintptr(s))
}

// UseStream issues later operations to s, binding its device context.
func (c *Comm) UseStream(s *acl.Stream) {
	if c == nil {
		return
	}
	c.astrm.Store(s)
	c.stream.Store(uintptr(s.Handle()))
}

// ACLStream is the acl.Stream operations are issued to, nil when the
// Comm has a raw stream handle.
func (c *Comm) ACLStream() *acl.Stream {
	if c == nil {
		return nil
	}
	return c.astrm.Load()
}

// Name returns the communicator name (HcclGetCommName).
func (c *Comm) Name() (string, error) {
	if c == nil {
		return "", NilHandle("HcclGetCommName", "communicator")
	}
	if err := c.live("HcclGetCommName"); err != nil {
		return "", err
	}
	return c.b.GetCommName(c.h)
}

// AsyncError returns the error an asynchronous operation left on the
// communicator, nil if none.
func (c *Comm) AsyncError() error {
	if err := c.live("HcclGetCommAsyncError"); err != nil {
		return err
	}
	r, err := c.b.GetCommAsyncError(c.h)
	if err != nil {
		return err
	}
	return r.Err("HcclGetCommAsyncError")
}

// live fails once the communicator is closed, so a closed Comm never hands
// a stale handle to the backend.
func (c *Comm) live(op string) error {
	if c == nil {
		return NilHandle(op, "communicator")
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return Errorf(op, EPara, "communicator closed")
	}
	return nil
}

func (c *Comm) pre(ctx context.Context, op string) error {
	if err := ctxDone(op, ctx); err != nil {
		return err
	}
	return c.live(op)
}

// ctxDone fails when ctx has already ended.
func ctxDone(op string, ctx context.Context) error {
	if ctx != nil && ctx.Err() != nil {
		return ctxError(op, ctx)
	}
	return nil
}

// ctxError is the error of a wait the caller's context ended: the code a
// wait for peers that gives up has (HCCL_E_TIMEOUT), wrapping ctx.Err().
func ctxError(op string, ctx context.Context) *Error {
	err := ctx.Err()
	return &Error{Op: op, Code: ETimeout, Msg: "the caller's context ended the wait: " + err.Error(), Err: err}
}

// callArgs are the arguments of one backend call that issueCall makes.
// The operations pass them by value with a function that captures
// nothing, not as a closure over them: issueCall may hand the call to a
// goroutine (a context that can end), so a closure would escape to the
// heap, an allocation per collective of a training step's loop.
type callArgs struct {
	send, recv unsafe.Pointer
	count      uint64
	dt, dt2    DataType
	rop        ReduceOp
	rank       uint32
	counts     [4][]uint64 // AlltoAllV: send counts, send displacements, receive counts, receive displacements
	items      []SendRecvItem
	descs      []OneSideOpDesc
	fn         func(acl.StreamHandle) error // issue's closure
}

// issue is issueCall of a closure, for the calls off the hot path.
func (c *Comm) issue(ctx context.Context, op string, fn func(acl.StreamHandle) error, use ...acl.Memory) error {
	return c.issueCall(ctx, op, callArgs{fn: fn}, func(_ *Comm, a callArgs, s acl.StreamHandle) error { return a.fn(s) }, use...)
}

// issueCall makes one backend call, call(c, a, stream), that queues work
// on the Comm's stream: on a raw stream directly, on an acl.Stream through
// Stream.Do (device context bound, use kept open and waited for by its
// Close), in turn, and given up when ctx ends first (see Comm).
func (c *Comm) issueCall(ctx context.Context, op string, a callArgs, call func(*Comm, callArgs, acl.StreamHandle) error, use ...acl.Memory) error {
	if err := c.pre(ctx, op); err != nil {
		return err
	}
	as := c.astrm.Load()
	if as == nil {
		if len(use) > 0 {
			return Errorf(op, EPara, "acl memory needs a communicator on an acl.Stream (OnStream or UseStream)")
		}
		return call(c, a, c.Stream())
	}
	if ctx == nil || ctx.Done() == nil {
		c.turn <- struct{}{}
		defer func() { <-c.turn }()
		return as.Do(func(s acl.StreamHandle) error { return call(c, a, s) }, use...)
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return ctxError(op, ctx)
	}
	done := make(chan error, 1)
	ga := a // the goroutine's copy: only this path puts the arguments on the heap
	go func() {
		defer func() { <-c.turn }()
		done <- as.Do(func(s acl.StreamHandle) error { return call(c, ga, s) }, use...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		default:
		}
		return ctxError(op, ctx)
	}
}

// Wait blocks until the work issued to the Comm's acl.Stream has completed
// and returns the stream's error (a failed collective is reported here,
// as on the device). A context that ends first gives an HCCL_E_TIMEOUT
// *Error wrapping ctx.Err(); the work is not cancelled. A Comm on a raw
// stream has nothing to wait with: synchronize that stream instead.
func (c *Comm) Wait(ctx context.Context) error {
	if c == nil {
		return NilHandle("Comm.Wait", "communicator")
	}
	const op = "Comm.Wait"
	as := c.astrm.Load()
	if as == nil {
		return Errorf(op, EPara, "the communicator has a raw stream: synchronize it through its backend")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	err := as.Wait(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctxError(op, ctx)
	}
	return err
}

// Barrier blocks until every rank reached it.
func (c *Comm) Barrier(ctx context.Context) error {
	return c.issueCall(ctx, "HcclBarrier", callArgs{}, func(c *Comm, _ callArgs, s acl.StreamHandle) error { return c.b.Barrier(c.h, s) })
}

// AllReduce reduces count elements of send over all ranks with op and
// leaves the result in recv on every rank (send may equal recv).
func (c *Comm) AllReduce(ctx context.Context, send, recv unsafe.Pointer, count uint64, dt DataType, op ReduceOp) error {
	return c.issueCall(ctx, "HcclAllReduce", callArgs{send: send, recv: recv, count: count, dt: dt, rop: op},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.AllReduce(a.send, a.recv, a.count, a.dt, a.rop, c.h, s)
		})
}

// Broadcast copies count elements of buf on root to buf on every rank.
func (c *Comm) Broadcast(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, root int) error {
	r, err := c.peer("HcclBroadcast", root)
	if err != nil {
		return err
	}
	return c.issueCall(ctx, "HcclBroadcast", callArgs{send: buf, count: count, dt: dt, rank: r},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.Broadcast(a.send, a.count, a.dt, a.rank, c.h, s)
		})
}

// AllGather concatenates sendCount elements from every rank, in rank
// order, into recv (Size × sendCount elements) on every rank.
func (c *Comm) AllGather(ctx context.Context, send, recv unsafe.Pointer, sendCount uint64, dt DataType) error {
	return c.issueCall(ctx, "HcclAllGather", callArgs{send: send, recv: recv, count: sendCount, dt: dt},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.AllGather(a.send, a.recv, a.count, a.dt, c.h, s)
		})
}

// ReduceScatter reduces Size × recvCount elements of send over all ranks
// and leaves block r of the result in recv of rank r.
func (c *Comm) ReduceScatter(ctx context.Context, send, recv unsafe.Pointer, recvCount uint64, dt DataType, op ReduceOp) error {
	return c.issueCall(ctx, "HcclReduceScatter", callArgs{send: send, recv: recv, count: recvCount, dt: dt, rop: op},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.ReduceScatter(a.send, a.recv, a.count, a.dt, a.rop, c.h, s)
		})
}

// AlltoAllV sends sendCounts[j] elements at send+sdispls[j] to rank j and
// receives recvCounts[i] elements from rank i at recv+rdispls[i] (counts
// and displacements in elements; each slice has Size entries).
func (c *Comm) AlltoAllV(ctx context.Context, send unsafe.Pointer, sendCounts, sdispls []uint64, sendType DataType,
	recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType DataType) error {
	if c == nil {
		return NilHandle("HcclAlltoAllV", "communicator")
	}
	for _, s := range [][]uint64{sendCounts, sdispls, recvCounts, rdispls} {
		if len(s) != c.size {
			return Errorf("HcclAlltoAllV", EPara, "count/displacement slice of %d entries for %d ranks", len(s), c.size)
		}
	}
	a := callArgs{send: send, recv: recv, dt: sendType, dt2: recvType, counts: [4][]uint64{sendCounts, sdispls, recvCounts, rdispls}}
	return c.issueCall(ctx, "HcclAlltoAllV", a, func(c *Comm, a callArgs, s acl.StreamHandle) error {
		return c.b.AlltoAllV(a.send, a.counts[0], a.counts[1], a.dt, a.recv, a.counts[2], a.counts[3], a.dt2, c.h, s)
	})
}

// Send sends count elements of buf to rank dest; it pairs with dest's Recv.
func (c *Comm) Send(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, dest int) error {
	r, err := c.peer("HcclSend", dest)
	if err != nil {
		return err
	}
	return c.issueCall(ctx, "HcclSend", callArgs{send: buf, count: count, dt: dt, rank: r},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.Send(a.send, a.count, a.dt, a.rank, c.h, s)
		})
}

// Recv receives count elements from rank src into buf.
func (c *Comm) Recv(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, src int) error {
	r, err := c.peer("HcclRecv", src)
	if err != nil {
		return err
	}
	return c.issueCall(ctx, "HcclRecv", callArgs{recv: buf, count: count, dt: dt, rank: r},
		func(c *Comm, a callArgs, s acl.StreamHandle) error {
			return c.b.Recv(a.recv, a.count, a.dt, a.rank, c.h, s)
		})
}

// BatchSendRecv issues a set of sends and receives at once, so that
// patterns such as rings cannot deadlock.
func (c *Comm) BatchSendRecv(ctx context.Context, items []SendRecvItem) error {
	return c.issueCall(ctx, "HcclBatchSendRecv", callArgs{items: items},
		func(c *Comm, a callArgs, s acl.StreamHandle) error { return c.b.BatchSendRecv(a.items, c.h, s) })
}

// BatchGet reads every descriptor's range of peer memory into local memory.
func (c *Comm) BatchGet(ctx context.Context, peer int, descs []OneSideOpDesc) error {
	r, err := c.peer("HcclBatchGet", peer)
	if err != nil {
		return err
	}
	return c.issueCall(ctx, "HcclBatchGet", callArgs{rank: r, descs: descs},
		func(c *Comm, a callArgs, s acl.StreamHandle) error { return c.b.BatchGet(c.h, a.rank, a.descs, s) })
}

// BatchPut writes every descriptor's local range into peer memory.
func (c *Comm) BatchPut(ctx context.Context, peer int, descs []OneSideOpDesc) error {
	r, err := c.peer("HcclBatchPut", peer)
	if err != nil {
		return err
	}
	return c.issueCall(ctx, "HcclBatchPut", callArgs{rank: r, descs: descs},
		func(c *Comm, a callArgs, s acl.StreamHandle) error { return c.b.BatchPut(c.h, a.rank, a.descs, s) })
}

// peer converts a rank argument; out-of-range values reach the backend as
// an out-of-range uint32 so that the backend reports them with its code.
func (c *Comm) peer(op string, r int) (uint32, error) {
	if r < 0 || uint64(r) > 1<<32-1 {
		return 0, Errorf(op, EPara, "rank %d", r)
	}
	return uint32(r), nil
}

// Close destroys the communicator (HcclCommDestroy), releasing what it
// holds. It is idempotent: later calls return nil.
func (c *Comm) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	if as := c.astrm.Load(); as != nil {
		// Bound to the rank's device; unbound if that Device is closed.
		var err error
		if bindErr := as.Device().Do(func() error { err = c.b.CommDestroy(c.h); return nil }); bindErr == nil {
			return err
		}
	}
	return c.b.CommDestroy(c.h)
}
