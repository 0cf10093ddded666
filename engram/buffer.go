package engram

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Buffer is one rank's Engram table and its fetch state (ElasticBuffer's
// engram part). Write, Fetch, Wait and Destroy may be called from any
// goroutine; one fetch is in flight at a time. Write and Destroy are
// collective in sliced mode: every rank calls them.
type Buffer struct {
	comm   *hccl.Comm // nil in local mode
	dev    *acl.Device
	cfg    Config
	w      int
	rank   int
	rb     int64 // row bytes
	sfb    int64 // scale-factor bytes per row
	hook   sendQueues
	global int64 // W·E

	mu        sync.Mutex
	destroyed bool
	written   bool
	zeroCopy  bool
	capacity  int64           // window bytes (copy mode)
	window    *acl.HostBuffer // copy mode: the pinned window
	reg       *acl.HostRegistration
	table     unsafe.Pointer // host address of the registered table
	tableLen  int64
	userRows  []byte // zero copy: the caller's storage, kept alive
	win       *hccl.Window
	sf        *acl.DeviceBuffer // caller's scale-factor table (never freed here)

	pending  bool
	gen      uint64
	trainSeq uint64 // training fetches started; names each TrainCtx
	cur      fetchState
	p        plan
	descs    []hccl.OneSideOpDesc
	cache    *hotCache // nil without Config.CacheRows
	missIdx  []int32   // with a cache: the indices planned (all but hits)
	missTok  []int32   // and their tokens
	wires    []uint32
	// Host staging of the training path, reused across calls (b.mu
	// held): copies from the device, rows to copy to it, summed rows.
	hostIn, hostOut, hostSum []byte
}

// hostBytes returns n bytes of *p, growing it when short; the contents
// are whatever the last use left.
func hostBytes(p *[]byte, n int64) []byte {
	if int64(cap(*p)) < n {
		*p = make([]byte, n)
	}
	return (*p)[:n]
}

// sendQueues is the optional hook of a backend that models the device's
// per-channel send queues (the HCCL fallback does): BatchGetPosted is
// BatchGet with one wire word per descriptor (channel << PostChannelShift
// | PostSignal | PostDrain | PostCommit), accounted per (peer, channel)
// against the queue depth; DrainSendQueues is the wait kernel's drain of
// every channel. An overflow or a drain no completion can satisfy fails
// the stream. Backends without it get plain BatchGet calls.
type sendQueues interface {
	BatchGetPosted(c hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, posts []uint32, s acl.StreamHandle) error
	DrainSendQueues(c hccl.CommHandle, s acl.StreamHandle) error
}

// New creates a Buffer on dev. comm is the communicator of sliced mode
// (its size W in [2, 1024]); nil is local mode, where HCCL is not used. A
// communicator of one rank is refused: the seed makes group=None "the
// only entry to local full-vocab inference" and a group's sliced mode
// needs a peer, so a one-rank group is a mistake to report rather than a
// silent switch of mode. The config is checked as the seed's constructor,
// write and tiling check it: a training config (MaxTokensPerRank > 0)
// needs a communicator and no copy window. In sliced mode New fails with
// ErrNotSupported when the backend lacks the HCCL one-sided service.
func New(comm *hccl.Comm, dev *acl.Device, cfg Config) (*Buffer, error) {
	if dev == nil {
		return nil, cfgErr("nil device")
	}
	w, rank := 1, 0
	if comm != nil {
		if comm.Size() < MinRanks {
			return nil, cfgErr("a communicator of %d rank: sliced mode needs %d to %d ranks; pass no communicator (nil) for local mode",
				comm.Size(), MinRanks, MaxRanks)
		}
		w, rank = comm.Size(), comm.Rank()
	}
	if err := cfg.check(w); err != nil {
		return nil, err
	}
	b := &Buffer{dev: dev, cfg: cfg, w: w, rank: rank, rb: cfg.RowBytes(), sfb: cfg.SFRowBytes(),
		global: int64(w) * cfg.EntriesPerRank}
	if w > 1 {
		b.comm = comm
		if name, err := comm.Name(); err == nil && name == "" {
			return nil, cfgErr("communicator has an empty name")
		}
		// A zero descriptor is never enabled: a backend with the
		// one-sided service answers "not found" or "invalid", one without
		// it "not supported".
		if err := comm.Backend().DisableMemAccess(comm.Handle(), &hccl.MemDesc{}); errors.Is(err, hccl.ErrNotSupported) {
			return nil, fmt.Errorf("%w: the HCCL backend %q lacks the one-sided service: %w", ErrNotSupported, comm.Backend().Name(), err)
		}
		b.hook, _ = comm.Backend().(sendQueues)
		if cfg.CacheRows > 0 {
			c, err := newHotCache(dev, cfg.CacheRows, b.rb)
			if err != nil {
				return nil, err
			}
			b.cache = c
		}
	}
	return b, nil
}

// Config returns the buffer's config (with the default engine filled in).
func (b *Buffer) Config() Config {
	if b == nil {
		return Config{}
	}
	return b.cfg
}

// WorldSize is W (1 in local mode).
func (b *Buffer) WorldSize() int {
	if b == nil {
		return 0
	}
	return b.w
}

// Rank is this rank's index (0 in local mode).
func (b *Buffer) Rank() int {
	if b == nil {
		return -1
	}
	return b.rank
}

// Storage is what Write stores: this rank's slice of the table.
type Storage struct {
	// Rows holds EntriesPerRank rows of RowBytes each, packed. In zero-copy
	// mode it must stay alive, unchanged in address and size, until
	// Destroy; it should be memory outside the Go heap (mmap, MallocHost).
	Rows []byte
	// ZeroCopy registers Rows in place instead of copying them into the
	// internal window: no copy, later in-place updates are visible to
	// fetches, registration failure is an error.
	ZeroCopy bool
	// SF is the device scale-factor table: the full table replicated on
	// every rank, W·E rows of SFPacks × SFType bytes. Required exactly when
	// the config has scale factors.
	SF *acl.DeviceBuffer
}

// Write stores this rank's slice (engram_write), fenced by a barrier of
// all ranks before and after. Copy mode copies Rows into the pinned
// window (created on the first write: MallocHost, host registration,
// HCCL memory registration); the caller may free Rows afterwards and
// later changes to it are invisible until written again. Zero-copy mode
// registers Rows in place; a later write with another address or size,
// or a switch of mode, is refused.
func (b *Buffer) Write(ctx context.Context, st Storage) error {
	if b == nil {
		return acl.NilHandle("engram.Buffer.Write", "buffer")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.destroyed:
		return fmt.Errorf("%w: engram_write cannot be called after destroy", ErrDestroyed)
	case b.pending:
		return fmt.Errorf("%w: cannot call engram_write while a fetch is pending; wait for it first", ErrPending)
	}
	e := b.cfg.EntriesPerRank
	if want := e * b.rb; int64(len(st.Rows)) != want {
		return cfgErr("storage of %d bytes is not %d entries × %d-byte rows (%d bytes)", len(st.Rows), e, b.rb, want)
	}
	if err := b.checkSF(st.SF); err != nil {
		return err
	}
	n := int64(len(st.Rows))
	if b.cfg.Training() && !st.ZeroCopy {
		return cfgErr("a training buffer (MaxTokensPerRank %d) takes zero-copy storage only: with_grad does not accept zero_copy=False", b.cfg.MaxTokensPerRank)
	}
	if b.written && b.zeroCopy != st.ZeroCopy {
		return fmt.Errorf("%w: engram storage was written with zero_copy=%v; switching to zero_copy=%v is not allowed", ErrStorage, b.zeroCopy, st.ZeroCopy)
	}
	if st.ZeroCopy && b.written && n > 0 && (unsafe.Pointer(unsafe.SliceData(st.Rows)) != b.table || n != b.tableLen) {
		return fmt.Errorf("%w: engram storage is already initialized from a different address (%p, %d bytes; registered %p, %d bytes)",
			ErrStorage, unsafe.SliceData(st.Rows), n, b.table, b.tableLen)
	}
	if !st.ZeroCopy {
		capacity := b.cfg.Capacity
		if b.window != nil {
			capacity = b.capacity
		} else if b.w == 1 && capacity == 0 {
			capacity = alignUp(n, CapacityAlign)
		}
		if n > capacity {
			return cfgErr("storage size %d bytes exceeds buffer capacity %d bytes", n, capacity)
		}
		b.capacity = capacity
	}
	if err := b.barrier(ctx); err != nil {
		return err
	}
	if b.cache != nil {
		b.cache.reset() // every rank's slice may change
	}
	if !b.written && n > 0 {
		if err := b.setup(ctx, st); err != nil {
			b.release()
			return err
		}
	}
	if !st.ZeroCopy && n > 0 {
		dst := unsafe.Slice((*byte)(b.table), b.tableLen)
		for off := int64(0); off < n; off += MaxCopyChunk {
			copy(dst[off:min(n, off+MaxCopyChunk)], st.Rows[off:min(n, off+MaxCopyChunk)])
		}
	}
	if err := b.barrier(ctx); err != nil {
		return err
	}
	b.sf = st.SF
	b.written, b.zeroCopy = true, st.ZeroCopy
	return nil
}

func (b *Buffer) checkSF(sf *acl.DeviceBuffer) error {
	switch {
	case b.cfg.SFPacks > 0 && sf == nil:
		return cfgErr("the config has %d scale-factor packs per row but the write has no sf table", b.cfg.SFPacks)
	case b.cfg.SFPacks == 0 && sf != nil:
		return cfgErr("an sf table was given but the config has no scale-factor packs")
	case sf == nil:
		return nil
	}
	want := b.global * b.sfb
	if got := int64(sf.Size()); got != want {
		return cfgErr("sf table of %d bytes, want %d rows (W·E) × %d packs × %d bytes = %d", got, b.global, b.cfg.SFPacks, b.cfg.SFType.Size(), want)
	}
	return nil
}

// setup creates the storage of the first write: the pinned window or the
// registration of the caller's rows, then the HCCL window all ranks read.
func (b *Buffer) setup(ctx context.Context, st Storage) error {
	if st.ZeroCopy {
		p := unsafe.Pointer(unsafe.SliceData(st.Rows))
		reg, err := b.dev.RegisterHostV2(p, uint64(len(st.Rows)), acl.HostRegMapped)
		if err != nil {
			return fmt.Errorf("engram: zero-copy registration of the storage failed (no fallback to a copy): %w", err)
		}
		b.reg, b.table, b.tableLen, b.userRows = reg, p, int64(len(st.Rows)), st.Rows
	} else {
		hb, err := b.dev.MallocHost(uintptr(b.capacity))
		if err != nil {
			return err
		}
		b.window = hb
		reg, err := b.dev.RegisterHostV2(hb.Ptr(), uint64(b.capacity), acl.HostRegMapped)
		if err != nil {
			return err
		}
		b.reg, b.table, b.tableLen = reg, hb.Ptr(), b.capacity
	}
	if b.comm == nil {
		return nil
	}
	return b.dev.Do(func() error {
		win, err := b.comm.OpenWindow(ctx, hccl.MemHost, b.table, uint64(b.tableLen))
		b.win = win
		return err
	})
}

// barrier is EngramBarrier: HCCL barrier of all ranks on the
// communicator's stream, synchronised (sliced mode only).
func (b *Buffer) barrier(ctx context.Context) error {
	if b.comm == nil {
		return nil
	}
	return b.dev.Do(func() error {
		if err := b.comm.Barrier(ctx); err != nil {
			return err
		}
		return b.dev.Runtime().Backend().SynchronizeStream(b.comm.Stream())
	})
}

// release frees what the buffer owns (never the caller's storage).
func (b *Buffer) release() error {
	var errs []error
	if b.win != nil {
		errs = append(errs, b.win.Close())
		b.win = nil
	}
	if b.reg != nil {
		errs = append(errs, b.reg.Close())
		b.reg = nil
	}
	if b.window != nil {
		errs = append(errs, b.window.Close())
		b.window = nil
	}
	b.table, b.tableLen, b.userRows = nil, 0, nil
	return errors.Join(errs...)
}

// Destroy waits for a pending fetch, meets the other ranks (sliced mode;
// every rank calls it), then closes the HCCL window, unregisters the host
// memory and frees the pinned window. The caller's storage and sf table
// are never freed. Later calls return nil; fetches and writes after it
// fail with ErrDestroyed.
func (b *Buffer) Destroy() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.destroyed {
		return nil
	}
	b.destroyed = true
	var errs []error
	if b.pending {
		errs = append(errs, b.cur.stream.Synchronize())
		b.pending = false
	}
	if b.written {
		// As the seed: a failed barrier is reported, the memory is
		// released anyway.
		errs = append(errs, b.barrier(context.Background()))
	}
	errs = append(errs, b.release())
	if b.cache != nil {
		errs = append(errs, b.cache.close())
	}
	b.sf = nil
	return errors.Join(errs...)
}

// Close is Destroy, for io.Closer.
func (b *Buffer) Close() error { return b.Destroy() }

// Invalidate drops global rows from this rank's hot-row cache. Write
// empties the cache itself; with ZeroCopy storage, whoever updates rows in
// place must call Invalidate for them on every rank (the owner's storage
// changes under the others' caches, which cannot see it). Not collective;
// a no-op without a cache.
func (b *Buffer) Invalidate(rows ...int32) error {
	if b == nil {
		return acl.NilHandle("engram.Buffer.Invalidate", "buffer")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.destroyed {
		return fmt.Errorf("%w: invalidate after destroy", ErrDestroyed)
	}
	if b.cache != nil {
		b.cache.invalidate(rows)
	}
	return nil
}

// CacheStats returns the hot-row cache's counters (zero without a cache).
func (b *Buffer) CacheStats() CacheStats {
	if b == nil {
		return CacheStats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cache == nil {
		return CacheStats{}
	}
	return b.cache.stats
}
