package engram

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// TrainCtx is the context of a training fetch (EngramFetchCtx), int32
// device tensors with the seed's layouts (engram_fetch_train_arch35.h,
// ops-transformer 02af4d9f):
//   - Perm (T): Perm[i] is the token of sorted slot i (indices sorted by
//     owner rank, stably); slots past the valid indices are 0.
//   - SendCounts (W·8): the count of indices this rank sent to rank r at
//     int32 index r·8 (a 32-byte stride), the rest 0.
//   - RecvCounts (W): the count each rank sent to this one.
//   - RecvLocalEntry (MaxTokensPerRank·W): the global indices received,
//     grouped by source rank in rank order, then zeros.
//   - NumRecv (1): how many were received.
//
// The Buffer does not own it: Close frees the tensors.
type TrainCtx struct {
	Perm, SendCounts, RecvCounts, RecvLocalEntry, NumRecv *acl.DeviceBuffer
	T                                                     int

	// owner and seq name the fetch that made the context, so FetchGrad
	// can reject a context of another Buffer or, across ranks, contexts
	// of different fetches.
	owner *Buffer
	seq   uint64
}

// Close frees the context's tensors.
func (c *TrainCtx) Close() error {
	if c == nil {
		return nil
	}
	var first error
	for _, b := range []*acl.DeviceBuffer{c.Perm, c.SendCounts, c.RecvCounts, c.RecvLocalEntry, c.NumRecv} {
		if b != nil {
			if err := b.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// FetchTrain is the training fetch (engram_fetch with with_grad): every
// rank passes the same number of indices T ≤ MaxTokensPerRank and calls
// it. The indices are bucket-sorted by owner rank (stable), counts and
// indices are exchanged with AlltoAllV on the buffer's communicator, each
// owner gathers the requested rows from its table and sends them back
// (AlltoAllV), and the rows are unsorted into the result
// (fetched[perm[i]] = recv[i]). Out-of-range indices follow the index
// policy on every rank: IndexError fails the fetch on every rank before
// any data moves; IndexZeroFill drops them from the exchange and zeroes
// their rows (the seed's kernel instead copies uninitialised memory into
// row 0). With scale factors (fp8 storage), Result.SF holds each token's,
// gathered from the replicated sf table as the inference fetch does (a
// dropped token's are zeros). A mismatched T or an inference fetch pending on a rank
// (ErrPending) fails the fetch on every rank at its first exchange. The
// work runs on the communicator's stream and FetchTrain
// returns when it is complete (the seed's callable waits the same way).
//
// The hot-row cache (Config.CacheRows) serves inference fetches only. A
// training fetch must still exchange every index (the context's layouts,
// and FetchGrad's routing of gradients to the owners, are the seed's
// exactly), so a hit would save only the row's bytes in the return
// exchange; and training updates precisely the rows it fetched (the
// gradients go to their owners, whose optimizer rewrites them), so a
// cached copy is stale after the step that read it. Keeping it exact would
// take an invalidation from every owner after every update, one more
// exchange per step, which costs more than the bytes it saves.
func (b *Buffer) FetchTrain(ctx context.Context, indices []int32) (Result, *TrainCtx, error) {
	if b == nil {
		return Result{}, nil, acl.NilHandle("engram.Buffer.FetchTrain", "buffer")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.destroyed:
		return Result{}, nil, fmt.Errorf("%w: engram_fetch cannot be called after destroy", ErrDestroyed)
	case b.comm == nil:
		return Result{}, nil, cfgErr("the training fetch needs a communicator (local mode has no training path)")
	case b.cfg.MaxTokensPerRank <= 0:
		return Result{}, nil, cfgErr("the training fetch needs MaxTokensPerRank > 0, got %d", b.cfg.MaxTokensPerRank)
	case !b.written:
		return Result{}, nil, fmt.Errorf("%w: engram_fetch needs engram_write to be called first", ErrNotWritten)
	}
	// A pending inference fetch is refused in the first exchange, so the
	// other ranks learn it at once rather than after the HCCL timeout
	// (the seed's Python check raises before the rank joins).
	t := len(indices)
	b.trainSeq++
	var res Result
	var tc *TrainCtx
	err := b.dev.Do(func() error {
		var err error
		res, tc, err = b.fetchTrain(ctx, indices, b.pending)
		return err
	})
	if err != nil {
		if res.Rows != nil {
			_ = res.Rows.Close()
		}
		if res.SF != nil {
			_ = res.SF.Close()
		}
		if tc != nil {
			_ = tc.Close()
		}
		return Result{}, nil, err
	}
	res.T = t
	tc.owner, tc.seq = b, b.trainSeq
	return res, tc, nil
}

// scratch is a device buffer of at least one byte (collectives want a
// valid address even for zero elements), freed by the caller.
func (b *Buffer) scratch(n int64) (*acl.DeviceBuffer, error) {
	return b.dev.Malloc(uintptr(max(n, 1)), acl.MemMallocHugeFirst)
}

func i32bytes(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

func bytesI32(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// fetchTrain runs with the device's context bound (Device.Do): raw
// backend calls only, plus the communicator's collectives.
func (b *Buffer) fetchTrain(ctx context.Context, indices []int32, pending bool) (Result, *TrainCtx, error) {
	w, rb, e := b.w, b.rb, b.cfg.EntriesPerRank
	rt := b.dev.Runtime().Backend()
	cs := b.comm.Stream()
	sync := func() error { return rt.SynchronizeStream(cs) }
	var tmp []*acl.DeviceBuffer
	defer func() {
		for _, d := range tmp {
			_ = d.Close()
		}
	}()
	dbuf := func(data []byte, _ int64) (*acl.DeviceBuffer, error) { return b.toDevice(rt, data) }
	host := func(d *acl.DeviceBuffer, n int64) ([]byte, error) { return b.toHost(rt, d, n) }
	t := len(indices)
	// 1. Every rank learns every rank's T, first out-of-range index and
	// whether it has an inference fetch pending, so a mismatch, a bad
	// index or a pending fetch fails the fetch on every rank alike.
	firstBad, badPos := int32(0), int32(-1)
	for i, g := range indices {
		if g < 0 || int64(g) >= b.global {
			firstBad, badPos = g, int32(i)
			break
		}
	}
	busy := int32(0)
	if pending {
		busy = 1
	}
	info, err := dbuf(i32bytes([]int32{int32(min(t, 1<<31-1)), badPos, firstBad, busy}), 16)
	if err != nil {
		return Result{}, nil, err
	}
	infos, err := b.scratch(int64(16 * w))
	if err != nil {
		_ = info.Close()
		return Result{}, nil, err
	}
	tmp = append(tmp, info, infos)
	if err := b.comm.AllGather(ctx, info.Ptr(), infos.Ptr(), 4, hccl.Int32); err != nil {
		return Result{}, nil, err
	}
	if err := sync(); err != nil {
		return Result{}, nil, err
	}
	raw, err := host(infos, int64(16*w))
	if err != nil {
		return Result{}, nil, err
	}
	all := bytesI32(raw)
	for r := 0; r < w; r++ {
		switch {
		case all[4*r+3] != 0 && r == b.rank:
			return Result{}, nil, fmt.Errorf("%w: cannot call engram_fetch while previous fetch callback is pending; call it first", ErrPending)
		case all[4*r+3] != 0:
			return Result{}, nil, fmt.Errorf("%w: rank %d has an inference fetch pending", ErrPending, r)
		}
	}
	for r := 0; r < w; r++ {
		if int(all[4*r]) != t {
			return Result{}, nil, cfgErr("the training fetch needs the same number of indices on every rank: rank %d has %d, rank %d has %d", b.rank, t, r, all[4*r])
		}
	}
	if t > b.cfg.MaxTokensPerRank {
		return Result{}, nil, cfgErr("%d indices exceed MaxTokensPerRank %d", t, b.cfg.MaxTokensPerRank)
	}
	if b.cfg.Policy == IndexError {
		for r := 0; r < w; r++ {
			if all[4*r+1] >= 0 {
				return Result{}, nil, fmt.Errorf("%w: rank %d: index %d at position %d is outside [0, %d)", ErrIndex, r, all[4*r+2], all[4*r+1], b.global)
			}
		}
	}
	// 2. Stable bucket sort by owner rank; out-of-range indices dropped.
	send := make([]int32, w)
	for _, g := range indices {
		if g >= 0 && int64(g) < b.global {
			send[int64(g)/e]++
		}
	}
	sdispl := make([]int32, w+1)
	for r := 0; r < w; r++ {
		sdispl[r+1] = sdispl[r] + send[r]
	}
	valid := int(sdispl[w])
	perm := make([]int32, t)
	sorted := make([]int32, valid)
	next := append([]int32(nil), sdispl[:w]...)
	var dropped []int32
	for i, g := range indices {
		if g < 0 || int64(g) >= b.global {
			dropped = append(dropped, int32(i))
			continue
		}
		r := int64(g) / e
		perm[next[r]], sorted[next[r]] = int32(i), g
		next[r]++
	}
	// 3. Counts: AlltoAllV of one int32 per peer.
	ones := make([]uint64, w)
	seq := make([]uint64, w)
	for r := range ones {
		ones[r], seq[r] = 1, uint64(r)
	}
	sc, err := dbuf(i32bytes(send), int64(4*w))
	if err != nil {
		return Result{}, nil, err
	}
	rcBuf, err := b.scratch(int64(4 * w))
	if err != nil {
		_ = sc.Close()
		return Result{}, nil, err
	}
	tmp = append(tmp, sc, rcBuf)
	if err := b.comm.AlltoAllV(ctx, sc.Ptr(), ones, seq, hccl.Int32, rcBuf.Ptr(), ones, seq, hccl.Int32); err != nil {
		return Result{}, nil, err
	}
	if err := sync(); err != nil {
		return Result{}, nil, err
	}
	raw, err = host(rcBuf, int64(4*w))
	if err != nil {
		return Result{}, nil, err
	}
	recv := bytesI32(raw)
	scounts, sdisp, rcounts, rdisp := make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)
	total := uint64(0)
	for r := 0; r < w; r++ {
		if recv[r] < 0 || int(recv[r]) > b.cfg.MaxTokensPerRank {
			return Result{}, nil, fmt.Errorf("%w: rank %d announced %d indices for this rank, outside [0, %d]", ErrConfig, r, recv[r], b.cfg.MaxTokensPerRank)
		}
		scounts[r], sdisp[r] = uint64(send[r]), uint64(sdispl[r])
		rcounts[r], rdisp[r] = uint64(recv[r]), total
		total += uint64(recv[r])
	}
	// 4. Indices: AlltoAllV of the sorted indices.
	si, err := dbuf(i32bytes(sorted), int64(4*valid))
	if err != nil {
		return Result{}, nil, err
	}
	ri, err := b.scratch(int64(4 * total))
	if err != nil {
		_ = si.Close()
		return Result{}, nil, err
	}
	tmp = append(tmp, si, ri)
	if err := b.comm.AlltoAllV(ctx, si.Ptr(), scounts, sdisp, hccl.Int32, ri.Ptr(), rcounts, rdisp, hccl.Int32); err != nil {
		return Result{}, nil, err
	}
	if err := sync(); err != nil {
		return Result{}, nil, err
	}
	raw, err = host(ri, int64(4*total))
	if err != nil {
		return Result{}, nil, err
	}
	entries := bytesI32(raw)
	// 5. Gather the requested rows from this rank's table. An entry
	// outside this rank's range cannot come from a valid peer.
	sendRows, err := b.scratch(int64(total) * rb)
	if err != nil {
		return Result{}, nil, err
	}
	tmp = append(tmp, sendRows)
	lo := int64(b.rank) * e
	b.descs = b.descs[:0]
	base := uintptr(b.table)
	for i, g := range entries {
		if int64(g) < lo || int64(g) >= lo+e {
			return Result{}, nil, fmt.Errorf("engram: received entry %d (%d) is not a row of rank %d", i, g, b.rank)
		}
		b.descs = append(b.descs, hccl.OneSideOpDesc{LocalAddr: unsafe.Add(sendRows.Ptr(), int64(i)*rb),
			RemoteAddr: base + uintptr((int64(g)-lo)*rb), Count: uint64(rb), DataType: hccl.Uint8})
	}
	// Local copies: HCCL refuses a BatchGet addressed to the own rank.
	if err := localCopies(b.dev.Runtime().Backend(), b.comm.Backend(), b.comm.Handle(), b.descs, b.table, acl.MemcpyHostToDevice, cs); err != nil {
		return Result{}, nil, err
	}
	// 6. Rows back to the requesters.
	recvRows, err := b.scratch(int64(valid) * rb)
	if err != nil {
		return Result{}, nil, err
	}
	tmp = append(tmp, recvRows)
	scale := func(v []uint64) []uint64 {
		out := make([]uint64, len(v))
		for i, x := range v {
			out[i] = x * uint64(rb)
		}
		return out
	}
	if err := b.comm.AlltoAllV(ctx, sendRows.Ptr(), scale(rcounts), scale(rdisp), hccl.Uint8,
		recvRows.Ptr(), scale(scounts), scale(sdisp), hccl.Uint8); err != nil {
		return Result{}, nil, err
	}
	// 7. Unsort: fetched[perm[i]] = recv[i]; dropped rows are zeros.
	var res Result
	if t > 0 {
		if res.Rows, err = b.dev.Malloc(uintptr(int64(t)*rb), acl.MemMallocHugeFirst); err != nil {
			return Result{}, nil, err
		}
	}
	// Scale factors: every rank holds the whole sf table, so each token's
	// are gathered here from its global index (as the inference fetch's
	// GatherSf); a dropped token's are zeros.
	if b.sfb > 0 && t > 0 {
		if res.SF, err = b.dev.Malloc(uintptr(int64(t)*b.sfb), acl.MemMallocHugeFirst); err != nil {
			return res, nil, err
		}
		if err := b.issueSF(rt, indices, res.SF.Ptr(), cs); err != nil {
			return res, nil, err
		}
		if err := zeroRuns(rt, dropped, res.SF.Ptr(), b.sfb, cs); err != nil {
			return res, nil, err
		}
	}
	// On the host: two bulk copies instead of one per row; dropped rows
	// stay zero.
	if err := sync(); err != nil {
		return res, nil, err
	}
	raw, err = host(recvRows, int64(valid)*rb)
	if err != nil {
		return res, nil, err
	}
	res.Zeroed = len(dropped)
	if t > 0 {
		fetched := hostBytes(&b.hostOut, int64(t)*rb)
		for i := 0; i < valid; i++ {
			copy(fetched[int64(perm[i])*rb:int64(perm[i]+1)*rb], raw[int64(i)*rb:])
		}
		for _, i := range dropped {
			clear(fetched[int64(i)*rb : int64(i+1)*rb])
		}
		if err := rt.Memcpy(res.Rows.Ptr(), res.Rows.Size(), unsafe.Pointer(&fetched[0]), uintptr(len(fetched)), acl.MemcpyHostToDevice); err != nil {
			return res, nil, err
		}
	}
	// The context tensors, in the seed's layouts.
	for i := valid; i < t; i++ {
		perm[i] = 0
	}
	sc8 := make([]int32, 8*w)
	for r := 0; r < w; r++ {
		sc8[8*r] = send[r]
	}
	rle := make([]int32, b.cfg.MaxTokensPerRank*w)
	copy(rle, entries)
	tc := &TrainCtx{T: t}
	for _, x := range []struct {
		dst **acl.DeviceBuffer
		v   []int32
	}{{&tc.Perm, perm}, {&tc.SendCounts, sc8}, {&tc.RecvCounts, recv}, {&tc.RecvLocalEntry, rle}, {&tc.NumRecv, []int32{int32(total)}}} {
		d, err := dbuf(i32bytes(x.v), int64(4*len(x.v)))
		if err != nil {
			return res, tc, err
		}
		*x.dst = d
	}
	return res, tc, nil
}
