package engram

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Output is where a fetch puts its result: Rows of at least T × RowBytes
// bytes and, with scale factors, SF of at least T × SFRowBytes bytes, both
// device memory of the buffer's device.
type Output struct {
	Rows *acl.DeviceBuffer
	SF   *acl.DeviceBuffer
}

// Result is a completed fetch: Rows holds the T fetched rows [T, Hidden]
// packed, SF their scale factors [T, packs] (nil without), Zeroed the
// number of out-of-range indices whose rows are zeros (IndexZeroFill).
// With Fetch the buffers belong to the caller, who closes them.
type Result struct {
	Rows   *acl.DeviceBuffer
	SF     *acl.DeviceBuffer
	T      int
	Zeroed int
}

// Pending is a fetch in flight (the callable engram_fetch returns). A
// plain value; Wait it once.
type Pending struct {
	b   *Buffer
	gen uint64
}

type fetchState struct {
	stream      *acl.Stream
	out         Output
	owned       bool // Fetch allocated out
	t           int
	bad         int
	badPos      int32
	badIdx      int32
	zeroed      int
	issueOK     bool
	admitQueued bool // the cache's admission copies are on the stream
}

// Fetch starts gathering the rows of indices (global row numbers) into new
// device buffers on stream s and returns the pending handle; the rows are
// valid after Pending.Wait. The indices are read at the call. T = 0 and
// E = 0 work. One fetch may be pending per buffer.
func (b *Buffer) Fetch(indices []int32, s *acl.Stream) (Pending, error) {
	return b.fetch(indices, Output{}, true, s)
}

// FetchInto is Fetch into caller-owned device buffers, which the steady
// state of a serving loop reuses.
func (b *Buffer) FetchInto(indices []int32, out Output, s *acl.Stream) (Pending, error) {
	return b.fetch(indices, out, false, s)
}

func (b *Buffer) fetch(indices []int32, out Output, alloc bool, s *acl.Stream) (Pending, error) {
	if b == nil {
		return Pending{}, acl.NilHandle("engram.Buffer.Fetch", "buffer")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.destroyed:
		return Pending{}, fmt.Errorf("%w: engram_fetch cannot be called after destroy", ErrDestroyed)
	case !b.written:
		return Pending{}, fmt.Errorf("%w: engram_fetch needs engram_write to be called first", ErrNotWritten)
	case b.pending:
		return Pending{}, fmt.Errorf("%w: cannot call engram_fetch while previous fetch callback is pending; call it first", ErrPending)
	case s == nil:
		return Pending{}, cfgErr("nil stream")
	}
	t := len(indices)
	if alloc {
		var err error
		if out, err = b.allocOutput(t); err != nil {
			return Pending{}, err
		}
	} else if err := b.checkOutput(out, t); err != nil {
		return Pending{}, err
	}
	b.cur = fetchState{stream: s, out: out, owned: alloc, t: t}
	if b.cache != nil {
		b.planCached(indices)
	} else {
		b.cfg.Engine.plan(&b.p, indices, b.w, b.rank, b.cfg.EntriesPerRank, b.rb)
	}
	if len(b.p.bad) > 0 {
		b.cur.bad = len(b.p.bad)
		b.cur.badPos = b.p.bad[0]
		b.cur.badIdx = indices[b.p.bad[0]]
	}
	if err := b.issue(indices, s); err != nil {
		// Whatever was queued must finish before the outputs may be
		// freed; the stream's own failure, if any, is the caller's to see.
		_ = s.Synchronize()
		b.freeOwned()
		return Pending{}, err
	}
	b.pending = true
	b.gen++
	return Pending{b: b, gen: b.gen}, nil
}

// planCached plans a fetch with the hot-row cache: cached remote rows are
// hits, copied from the cache; the kernel's plan covers the rest, and its
// tokens are mapped back to the fetch's.
func (b *Buffer) planCached(indices []int32) {
	e := b.cfg.EntriesPerRank
	if !b.cache.use() {
		// The cache does not pay on this traffic (hotCache's bypass).
		b.cfg.Engine.plan(&b.p, indices, b.w, b.rank, e, b.rb)
		b.cache.bypassed(len(b.p.posts))
		return
	}
	lo, hi := int64(b.rank)*e, int64(b.rank+1)*e
	b.missIdx, b.missTok = b.cache.lookup(indices, lo, hi, b.global, b.missIdx[:0], b.missTok[:0])
	b.cfg.Engine.plan(&b.p, b.missIdx, b.w, b.rank, e, b.rb)
	for i := range b.p.posts {
		b.p.posts[i].Token = b.missTok[b.p.posts[i].Token]
	}
	for _, s := range [][]int32{b.p.local, b.p.bad} {
		for i, tok := range s {
			s[i] = b.missTok[tok]
		}
	}
}

func (b *Buffer) allocOutput(t int) (Output, error) {
	var out Output
	if t == 0 {
		return out, nil
	}
	var err error
	if b.rb > 0 {
		if out.Rows, err = b.dev.Malloc(uintptr(int64(t)*b.rb), acl.MemMallocHugeFirst); err != nil {
			return out, err
		}
	}
	if b.sfb > 0 {
		if out.SF, err = b.dev.Malloc(uintptr(int64(t)*b.sfb), acl.MemMallocHugeFirst); err != nil {
			_ = out.Rows.Close()
			return Output{}, err
		}
	}
	return out, nil
}

func (b *Buffer) checkOutput(out Output, t int) error {
	if t == 0 {
		return nil
	}
	if out.Rows == nil || int64(out.Rows.Size()) < int64(t)*b.rb {
		have := int64(-1)
		if out.Rows != nil {
			have = int64(out.Rows.Size())
		}
		return cfgErr("output rows buffer of %d bytes, need %d indices × %d bytes = %d", have, t, b.rb, int64(t)*b.rb)
	}
	if b.sfb > 0 && (out.SF == nil || int64(out.SF.Size()) < int64(t)*b.sfb) {
		have := int64(-1)
		if out.SF != nil {
			have = int64(out.SF.Size())
		}
		return cfgErr("output sf buffer of %d bytes, need %d indices × %d bytes = %d", have, t, b.sfb, int64(t)*b.sfb)
	}
	if b.sfb == 0 && out.SF != nil {
		return cfgErr("an output sf buffer was given but the config has no scale factors")
	}
	return nil
}

func (b *Buffer) freeOwned() {
	if b.cur.owned {
		if b.cur.out.Rows != nil {
			_ = b.cur.out.Rows.Close()
		}
		if b.cur.out.SF != nil {
			_ = b.cur.out.SF.Close()
		}
	}
	b.cur = fetchState{}
}

// issue queues the planned work on s: own rows copied locally, remote rows
// read one-sidedly (one BatchGet per peer, posted per (core, channel) as
// planned), scale factors gathered from the device table, out-of-range
// rows zeroed under IndexZeroFill.
func (b *Buffer) issue(indices []int32, s *acl.Stream) error {
	if b.cur.t == 0 {
		return nil
	}
	rt := b.dev.Runtime().Backend()
	sh := s.Handle()
	rows := b.cur.out.Rows.Ptr()
	return b.dev.Do(func() error {
		if err := b.issueRows(rt, indices, rows, sh); err != nil {
			return err
		}
		if b.sfb > 0 {
			if err := b.issueSF(rt, indices, b.cur.out.SF.Ptr(), sh); err != nil {
				return err
			}
		}
		if b.cfg.Policy == IndexZeroFill && len(b.p.bad) > 0 {
			b.cur.zeroed = len(b.p.bad)
			if err := zeroRuns(rt, b.p.bad, rows, b.rb, sh); err != nil {
				return err
			}
			if b.sfb > 0 {
				return zeroRuns(rt, b.p.bad, b.cur.out.SF.Ptr(), b.sfb, sh)
			}
		}
		return nil
	})
}

func (b *Buffer) issueRows(rt acl.Backend, indices []int32, rows unsafe.Pointer, sh acl.StreamHandle) error {
	rb, e := b.rb, b.cfg.EntriesPerRank
	if b.comm == nil {
		// Local mode: the kernel's UB relay copies each row from the
		// mapped table; here an async host-to-device copy per run of
		// consecutive rows.
		return copyRuns(b.p.local, indices, func(tok, g int32, n int64) error {
			return rt.MemcpyAsync(unsafe.Add(rows, int64(tok)*rb), uintptr(n*rb),
				unsafe.Add(b.table, int64(g)*rb), uintptr(n*rb), acl.MemcpyHostToDevice, sh)
		})
	}
	be, h := b.comm.Backend(), b.comm.Handle()
	if b.cache != nil {
		if err := b.cache.issueHits(rt, be, h, rows, sh); err != nil {
			return err
		}
	}
	// Own rows: copied locally (never an own-rank BatchGet, which HCCL
	// refuses).
	if len(b.p.local) > 0 {
		base := uintptr(b.table)
		b.descs = b.descs[:0]
		for _, tok := range b.p.local {
			row := int64(indices[tok]) - int64(b.rank)*e
			b.descs = append(b.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(rows, int64(tok)*rb),
				RemoteAddr: base + uintptr(row*rb), Count: uint64(rb), DataType: hccl.Uint8})
		}
		if err := localCopies(rt, be, h, b.descs, b.table, acl.MemcpyHostToDevice, sh); err != nil {
			return err
		}
	}
	// Remote rows: one BatchGet per peer and at most 256 posts, cut at
	// the kernel's batch commits (batchEnd).
	b.p.groupByPeer(b.w)
	for peer := 0; peer < b.w; peer++ {
		ps := b.p.posts[b.p.byPeer[peer]:b.p.byPeer[peer+1]]
		if len(ps) == 0 {
			continue
		}
		base := b.win.PeerMem(peer).Addr
		b.descs, b.wires = b.descs[:0], b.wires[:0]
		for _, x := range ps {
			b.descs = append(b.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(rows, int64(x.Token)*rb),
				RemoteAddr: base + uintptr(int64(x.Row)*rb), Count: uint64(rb), DataType: hccl.Uint8})
			b.wires = append(b.wires, x.wire())
		}
		for lo := 0; lo < len(ps); {
			hi := batchEnd(ps, lo)
			var err error
			if b.hook != nil {
				err = b.hook.BatchGetPosted(h, uint32(peer), b.descs[lo:hi], b.wires[lo:hi], sh)
			} else {
				err = be.BatchGet(h, uint32(peer), b.descs[lo:hi], sh)
			}
			if err != nil {
				return err
			}
			lo = hi
		}
	}
	return nil
}

// issueSF gathers each fetched row's scale factors: sf_table + g·sfBytes
// to fetched_sf (dst) + token·sfBytes (GatherSf), device to device. Every
// rank holds the whole table, so no rank is asked.
func (b *Buffer) issueSF(rt acl.Backend, indices []int32, dst unsafe.Pointer, sh acl.StreamHandle) error {
	sfb, src := b.sfb, b.sf.Ptr()
	for i, g := range indices {
		if g < 0 || int64(g) >= b.global {
			continue
		}
		if err := rt.MemcpyAsync(unsafe.Add(dst, int64(i)*sfb), uintptr(sfb), unsafe.Add(src, int64(g)*sfb), uintptr(sfb),
			acl.MemcpyDeviceToDevice, sh); err != nil {
			return err
		}
	}
	return nil
}

// copyRuns calls f once per run of tokens that are consecutive and whose
// rows are consecutive.
func copyRuns(toks, indices []int32, f func(tok, g int32, n int64) error) error {
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[j-1]+1 && indices[toks[j]] == indices[toks[j-1]]+1 {
			j++
		}
		if err := f(toks[i], indices[toks[i]], int64(j-i)); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// zeroRuns zeroes the rows of the given tokens (ascending), one memset
// per run of consecutive tokens.
func zeroRuns(rt acl.Backend, toks []int32, base unsafe.Pointer, stride int64, sh acl.StreamHandle) error {
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[j-1]+1 {
			j++
		}
		n := uintptr(int64(j-i) * stride)
		if err := rt.MemsetAsync(unsafe.Add(base, int64(toks[i])*stride), n, 0, n, sh); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Wait is EngramFetchWait: it drains the channels the fetch used,
// synchronises the stream (bounded by ctx: on ctx's end it returns
// ctx.Err() and the fetch stays pending) and yields the rows. A failure
// of the queued work (an HCCL or ACL error of the stream) is returned and
// ends the fetch. Under IndexError an out-of-range index fails it with
// ErrIndex naming the first bad index and its position.
func (p Pending) Wait(ctx context.Context) (Result, error) {
	b := p.b
	if b == nil {
		return Result{}, fmt.Errorf("%w: zero Pending", ErrStale)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.pending || b.gen != p.gen {
		return Result{}, fmt.Errorf("%w: the fetch was already waited for", ErrStale)
	}
	st := b.cur
	if b.hook != nil && !st.issueOK && st.t > 0 {
		err := b.dev.Do(func() error { return b.hook.DrainSendQueues(b.comm.Handle(), st.stream.Handle()) })
		if err != nil {
			b.pending = false
			_ = st.stream.Synchronize()
			b.freeOwned()
			return Result{}, err
		}
		b.cur.issueOK = true // drained once, even if the wait is retried
	}
	if b.cache != nil && !st.admitQueued && st.t > 0 && !(st.bad > 0 && b.cfg.Policy == IndexError) {
		// Queued after the reads and their drain; the wait below covers it.
		err := b.dev.Do(func() error {
			return b.cache.admit(b.dev.Runtime().Backend(), b.comm.Backend(), b.comm.Handle(), st.out.Rows.Ptr(), st.stream.Handle())
		})
		if err != nil {
			b.pending = false
			_ = st.stream.Synchronize()
			b.freeOwned()
			return Result{}, err
		}
		b.cur.admitQueued = true // once, even if the wait is retried
	}
	if err := st.stream.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return Result{}, err
		}
		b.pending = false
		if b.cache != nil {
			b.cache.dropAdmitted() // copied from a failed fetch
		}
		b.freeOwned()
		return Result{}, fmt.Errorf("engram: fetch of %d rows failed: %w", st.t, err)
	}
	b.pending = false
	if st.bad > 0 && b.cfg.Policy == IndexError {
		b.freeOwned()
		return Result{}, fmt.Errorf("%w: index %d at position %d is outside [0, %d) (%d of %d indices out of range)",
			ErrIndex, st.badIdx, st.badPos, b.global, st.bad, st.t)
	}
	b.cur = fetchState{}
	return Result{Rows: st.out.Rows, SF: st.out.SF, T: st.t, Zeroed: st.zeroed}, nil
}
