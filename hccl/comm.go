package hccl

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Comm is one rank's communicator: the backend that created it, the
// handle, its rank and size, the device it runs on and the stream its
// operations are issued to.
//
// Comm is safe for concurrent use in the sense that its methods do not race
// on Go state and Close may be called from any goroutine; but every rank
// must issue the collectives of a communicator in the same order, so drive
// one Comm from one goroutine (locked to its OS thread when the backend's
// device context is per thread, as ACL's is).
//
// The context of each operation is checked before the call is issued; a
// call in progress is bounded by the backend's timeout (HCCL_E_TIMEOUT),
// not by the context, because a C call cannot be abandoned while it may
// still touch the buffers.
type Comm struct {
	b      Backend
	h      CommHandle
	rank   int
	size   int
	device int32
	stream atomic.Uintptr

	mu     sync.Mutex
	closed bool
}

// CommOption configures a Comm; options are applied once, by the function
// that receives them.
type CommOption func(*commOptions)

type commOptions struct {
	stream    acl.StreamHandle
	streams   []acl.StreamHandle
	device    int32
	deviceSet bool
	cfg       *CommConfig
}

// WithStream issues the communicator's operations to s (default: the null
// stream, 0).
func WithStream(s acl.StreamHandle) CommOption { return func(o *commOptions) { o.stream = s } }

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
	o := collect(opts)
	if nRanks < 0 || rank < 0 || uint64(nRanks) > 1<<32-1 || uint64(rank) > 1<<32-1 {
		return nil, Errorf("HcclCommInitRootInfo", EPara, "nRanks %d, rank %d", nRanks, rank)
	}
	var h CommHandle
	var err error
	if o.cfg != nil {
		h, err = b.CommInitRootInfoConfig(uint32(nRanks), root, uint32(rank), o.cfg)
	} else {
		h, err = b.CommInitRootInfo(uint32(nRanks), root, uint32(rank))
	}
	if err != nil {
		return nil, err
	}
	return wrapNew(b, h, o)
}

// InitClusterInfo joins rank of the communicator described by a rank table
// file.
func InitClusterInfo(b Backend, rankTablePath string, rank int, opts ...CommOption) (*Comm, error) {
	if rank < 0 || uint64(rank) > 1<<32-1 {
		return nil, Errorf("HcclCommInitClusterInfo", EPara, "rank %d", rank)
	}
	h, err := b.CommInitClusterInfo(rankTablePath, uint32(rank))
	if err != nil {
		return nil, err
	}
	return wrapNew(b, h, collect(opts))
}

// InitAll creates one communicator per device in a single call (rank i runs
// on devices[i]). Hand each Comm to the goroutine that drives that rank.
func InitAll(b Backend, devices []int32, opts ...CommOption) ([]*Comm, error) {
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
	c := &Comm{b: b, h: h, rank: int(rank), size: int(size), device: o.device}
	if !o.deviceSet {
		c.device = -1
	}
	c.stream.Store(uintptr(o.stream))
	return c, nil
}

// Backend returns the backend the communicator belongs to.
func (c *Comm) Backend() Backend { return c.b }

// Handle returns the C handle (valid until Close).
func (c *Comm) Handle() CommHandle { return c.h }

// Rank is this rank's id in [0, Size).
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks.
func (c *Comm) Size() int { return c.size }

// Device is the device the rank runs on, -1 when unknown.
func (c *Comm) Device() int32 { return c.device }

// Stream is the stream operations are issued to.
func (c *Comm) Stream() acl.StreamHandle { return acl.StreamHandle(c.stream.Load()) }

// SetStream changes the stream of later operations.
func (c *Comm) SetStream(s acl.StreamHandle) { c.stream.Store(uintptr(s)) }

// Name returns the communicator name (HcclGetCommName).
func (c *Comm) Name() (string, error) {
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
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return Errorf(op, EPara, "communicator closed")
	}
	return nil
}

func (c *Comm) pre(ctx context.Context, op string) error {
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return c.live(op)
}

// Barrier blocks until every rank reached it.
func (c *Comm) Barrier(ctx context.Context) error {
	if err := c.pre(ctx, "HcclBarrier"); err != nil {
		return err
	}
	return c.b.Barrier(c.h, c.Stream())
}

// AllReduce reduces count elements of send over all ranks with op and
// leaves the result in recv on every rank (send may equal recv).
func (c *Comm) AllReduce(ctx context.Context, send, recv unsafe.Pointer, count uint64, dt DataType, op ReduceOp) error {
	if err := c.pre(ctx, "HcclAllReduce"); err != nil {
		return err
	}
	return c.b.AllReduce(send, recv, count, dt, op, c.h, c.Stream())
}

// Broadcast copies count elements of buf on root to buf on every rank.
func (c *Comm) Broadcast(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, root int) error {
	if err := c.pre(ctx, "HcclBroadcast"); err != nil {
		return err
	}
	r, err := c.peer("HcclBroadcast", root)
	if err != nil {
		return err
	}
	return c.b.Broadcast(buf, count, dt, r, c.h, c.Stream())
}

// AllGather concatenates sendCount elements from every rank, in rank
// order, into recv (Size × sendCount elements) on every rank.
func (c *Comm) AllGather(ctx context.Context, send, recv unsafe.Pointer, sendCount uint64, dt DataType) error {
	if err := c.pre(ctx, "HcclAllGather"); err != nil {
		return err
	}
	return c.b.AllGather(send, recv, sendCount, dt, c.h, c.Stream())
}

// ReduceScatter reduces Size × recvCount elements of send over all ranks
// and leaves block r of the result in recv of rank r.
func (c *Comm) ReduceScatter(ctx context.Context, send, recv unsafe.Pointer, recvCount uint64, dt DataType, op ReduceOp) error {
	if err := c.pre(ctx, "HcclReduceScatter"); err != nil {
		return err
	}
	return c.b.ReduceScatter(send, recv, recvCount, dt, op, c.h, c.Stream())
}

// AlltoAllV sends sendCounts[j] elements at send+sdispls[j] to rank j and
// receives recvCounts[i] elements from rank i at recv+rdispls[i] (counts
// and displacements in elements; each slice has Size entries).
func (c *Comm) AlltoAllV(ctx context.Context, send unsafe.Pointer, sendCounts, sdispls []uint64, sendType DataType,
	recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType DataType) error {
	if err := c.pre(ctx, "HcclAlltoAllV"); err != nil {
		return err
	}
	for _, s := range [][]uint64{sendCounts, sdispls, recvCounts, rdispls} {
		if len(s) != c.size {
			return Errorf("HcclAlltoAllV", EPara, "count/displacement slice of %d entries for %d ranks", len(s), c.size)
		}
	}
	return c.b.AlltoAllV(send, sendCounts, sdispls, sendType, recv, recvCounts, rdispls, recvType, c.h, c.Stream())
}

// Send sends count elements of buf to rank dest; it pairs with dest's Recv.
func (c *Comm) Send(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, dest int) error {
	if err := c.pre(ctx, "HcclSend"); err != nil {
		return err
	}
	r, err := c.peer("HcclSend", dest)
	if err != nil {
		return err
	}
	return c.b.Send(buf, count, dt, r, c.h, c.Stream())
}

// Recv receives count elements from rank src into buf.
func (c *Comm) Recv(ctx context.Context, buf unsafe.Pointer, count uint64, dt DataType, src int) error {
	if err := c.pre(ctx, "HcclRecv"); err != nil {
		return err
	}
	r, err := c.peer("HcclRecv", src)
	if err != nil {
		return err
	}
	return c.b.Recv(buf, count, dt, r, c.h, c.Stream())
}

// BatchSendRecv issues a set of sends and receives at once, so that
// patterns such as rings cannot deadlock.
func (c *Comm) BatchSendRecv(ctx context.Context, items []SendRecvItem) error {
	if err := c.pre(ctx, "HcclBatchSendRecv"); err != nil {
		return err
	}
	return c.b.BatchSendRecv(items, c.h, c.Stream())
}

// BatchGet reads every descriptor's range of peer memory into local memory.
func (c *Comm) BatchGet(ctx context.Context, peer int, descs []OneSideOpDesc) error {
	if err := c.pre(ctx, "HcclBatchGet"); err != nil {
		return err
	}
	r, err := c.peer("HcclBatchGet", peer)
	if err != nil {
		return err
	}
	return c.b.BatchGet(c.h, r, descs, c.Stream())
}

// BatchPut writes every descriptor's local range into peer memory.
func (c *Comm) BatchPut(ctx context.Context, peer int, descs []OneSideOpDesc) error {
	if err := c.pre(ctx, "HcclBatchPut"); err != nil {
		return err
	}
	r, err := c.peer("HcclBatchPut", peer)
	if err != nil {
		return err
	}
	return c.b.BatchPut(c.h, r, descs, c.Stream())
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
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.b.CommDestroy(c.h)
}
