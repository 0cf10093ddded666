package engram

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/hccl"
)

// Grad is the gradient of a training fetch's rows (grad_fetched): Rows ×
// Hidden elements of DType, row-major, in Data.
type Grad struct {
	Data   *acl.DeviceBuffer
	Rows   int
	Hidden int
	DType  DType
}

// GradResult is FetchGrad's sparse gradient: K rows of this rank's table.
// Rows (grad_unique, K × Hidden in the storage dtype) and Entries
// (unique_local_entry, K int32 local row numbers, ascending) are device
// buffers the caller closes; both are nil when K is 0.
type GradResult struct {
	Rows, Entries *acl.DeviceBuffer
	K             int
}

// Close frees the result's buffers.
func (g GradResult) Close() error {
	var errs []error
	for _, d := range []*acl.DeviceBuffer{g.Rows, g.Entries} {
		if d != nil {
			errs = append(errs, d.Close())
		}
	}
	return errors.Join(errs...)
}

// Reasons a rank rejects its FetchGrad arguments; every rank learns each
// rank's reason in the first collective, so a bad argument on one rank is
// an error on all of them rather than a hang.
const (
	gradOK int32 = iota
	gradBadDType
	gradBadShape
	gradForeignCtx
	gradBadCtx
	gradPending
)

var gradReason = [...]string{"", "a gradient of the wrong dtype", "a gradient of the wrong shape",
	"a context of another buffer", "a malformed context", "nothing: it has an inference fetch pending"}

// FetchGrad is the backward of FetchTrain (engram_fetch_grad): every rank
// calls it with the gradient of the rows its FetchTrain returned and that
// fetch's context. The gradient rows are put in the fetch's sorted order
// (grad_sorted[i] = grad[perm[i]]), sent back to the ranks that own the
// rows with AlltoAllV (the forward exchange reversed), sorted by local row
// (LSD radix sort, as the seed's kernel does), and duplicates summed in
// float32 — fp16 and bf16 are widened and the sum rounded once. The
// gradient's dtype must be the storage dtype and one of bf16, fp16, fp32
// (the seed's grad kernel knows only those:
// hicann/ops-transformer mc2/engram_fetch/op_kernel/engram_fetch_grad_utils.h,
// ENGRAM_DT_*); its shape must be [tc.T, Hidden]; every context tensor
// must have its exact length (elastic_buffer.py _check_engram_fetch_grad).
// Unlike the seed, the contents of the context are checked too, and the
// ranks must pass contexts of the same fetch. A bad argument, or an
// inference fetch pending on a rank (ErrPending), fails FetchGrad on
// every rank at its first exchange, where the seed's peers would wait
// out the HCCL timeout for the rank that raised.
//
// Synchronisation: FetchGrad returns when the result is complete, as the
// seed's Python wrapper does when it reads num_unique to narrow the
// outputs to K (its one host synchronisation). This implementation, which
// sums on the host, also waits for each exchange.
func (b *Buffer) FetchGrad(ctx context.Context, g Grad, tc *TrainCtx) (GradResult, error) {
	if b == nil {
		return GradResult{}, acl.NilHandle("engram.Buffer.FetchGrad", "buffer")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.destroyed:
		return GradResult{}, fmt.Errorf("%w: engram_fetch_grad cannot be called after destroy", ErrDestroyed)
	case b.comm == nil:
		return GradResult{}, cfgErr("engram_fetch_grad needs a communicator (local mode has no training path)")
	}
	// A pending inference fetch is refused like a bad argument: in the
	// verdict exchange, so the other ranks learn it at once instead of
	// waiting out the HCCL timeout for a rank that never joins (the
	// seed's Python check raises before the rank launches anything).
	var out GradResult
	err := b.dev.Do(func() error {
		var err error
		out, err = b.fetchGrad(ctx, g, tc, b.pending)
		return err
	})
	if err != nil {
		_ = out.Close()
		return GradResult{}, err
	}
	return out, nil
}

// gradCtx is a training context read back to the host: perm, the send
// and receive counts per rank, and the nrecv received global entries.
type gradCtx struct {
	perm, sc, rc, rle []int32
	nrecv             int
}

// checkGrad is this rank's own verdict on its arguments, and the context
// tensors read back when they are well formed.
func (b *Buffer) checkGrad(rt acl.Backend, g Grad, tc *TrainCtx) (gradCtx, int32, error) {
	var x gradCtx
	w, nmax := b.w, b.cfg.MaxTokensPerRank
	switch d := b.cfg.DType; {
	case g.DType != d:
		return x, gradBadDType, cfgErr("grad dtype must match storage dtype (%v), got %v", d, g.DType)
	case d != BF16 && d != FP16 && d != FP32:
		return x, gradBadDType, cfgErr("the gradient path supports bf16, fp16 and fp32 storage, not %v", d)
	}
	if tc == nil || tc.owner != b {
		return x, gradForeignCtx, cfgErr("the fetch context was not made by this buffer's FetchTrain")
	}
	if g.Rows != tc.T {
		return x, gradBadShape, cfgErr("grad row count (%d) must match the number of tokens fetched in the forward pass (%d)", g.Rows, tc.T)
	}
	if g.Hidden != b.cfg.Hidden {
		return x, gradBadShape, cfgErr("grad hidden size (%d) must match storage hidden size (%d)", g.Hidden, b.cfg.Hidden)
	}
	need := int64(g.Rows) * b.rb
	if g.Data == nil && need > 0 || g.Data != nil && int64(g.Data.Size()) < need {
		return x, gradBadShape, cfgErr("grad buffer holds fewer than %d×%d %v elements", g.Rows, g.Hidden, g.DType)
	}
	read := make([][]int32, 5)
	for i, t := range []struct {
		name string
		d    *acl.DeviceBuffer
		n    int
	}{{"perm", tc.Perm, tc.T}, {"send_counts", tc.SendCounts, 8 * w}, {"recv_counts", tc.RecvCounts, w},
		{"recv_local_entry", tc.RecvLocalEntry, nmax * w}, {"num_recv", tc.NumRecv, 1}} {
		if t.d == nil || t.d.Size() != uintptr(max(4*t.n, 1)) {
			got := -1
			if t.d != nil {
				got = int(t.d.Size() / 4)
			}
			return x, gradBadCtx, cfgErr("fetch_ctx.%s length (%d) must be %d", t.name, got, t.n)
		}
		raw := make([]byte, 4*t.n)
		if t.n > 0 {
			if err := rt.Memcpy(unsafe.Pointer(&raw[0]), uintptr(len(raw)), t.d.Ptr(), uintptr(len(raw)), acl.MemcpyDeviceToHost); err != nil {
				return x, gradBadCtx, err
			}
		}
		read[i] = bytesI32(raw)
	}
	perm, sc8, rc, rle := read[0], read[1], read[2], read[3]
	sc := make([]int32, w)
	nrecv := 0
	valid := 0
	for r := range sc {
		sc[r] = sc8[8*r]
		if sc[r] < 0 || int(sc[r]) > tc.T-valid {
			return x, gradBadCtx, cfgErr("fetch_ctx.send_counts[%d] = %d does not fit in T = %d", 8*r, sc[r], tc.T)
		}
		valid += int(sc[r])
	}
	seen := make([]bool, tc.T)
	for i, p := range perm[:valid] {
		if p < 0 || int(p) >= tc.T || seen[p] {
			return x, gradBadCtx, cfgErr("fetch_ctx.perm[%d] = %d is not a distinct token of [0, %d)", i, p, tc.T)
		}
		seen[p] = true
	}
	for r, c := range rc {
		if c < 0 || int(c) > nmax*w-nrecv {
			return x, gradBadCtx, cfgErr("fetch_ctx.recv_counts[%d] = %d does not fit in %d entries", r, c, nmax*w)
		}
		nrecv += int(c)
	}
	if int(read[4][0]) != nrecv {
		return x, gradBadCtx, cfgErr("fetch_ctx.num_recv (%d) is not the sum of recv_counts (%d)", read[4][0], nrecv)
	}
	lo, e := int64(b.rank)*b.cfg.EntriesPerRank, b.cfg.EntriesPerRank
	for i, g := range rle[:nrecv] {
		if int64(g) < lo || int64(g) >= lo+e {
			return x, gradBadCtx, cfgErr("fetch_ctx.recv_local_entry[%d] = %d is not a row of rank %d", i, g, b.rank)
		}
	}
	return gradCtx{perm: perm, sc: sc, rc: rc, rle: rle[:nrecv], nrecv: nrecv}, gradOK, nil
}

func (b *Buffer) fetchGrad(ctx context.Context, g Grad, tc *TrainCtx, pending bool) (GradResult, error) {
	w, rb := b.w, b.rb
	rt := b.dev.Runtime().Backend()
	cs := b.comm.Stream()
	var tmp []*acl.DeviceBuffer
	defer func() {
		for _, d := range tmp {
			_ = d.Close()
		}
	}()
	x, code, ownErr := b.checkGrad(rt, g, tc)
	if pending {
		x, code = gradCtx{}, gradPending
		ownErr = fmt.Errorf("%w: engram_fetch_grad must be called after the callable returned by engram_fetch", ErrPending)
	}
	perm, sc, rc, entries, nrecv := x.perm, x.sc, x.rc, x.rle, x.nrecv
	// 1. Every rank learns every rank's verdict, fetch and counts, so any
	// bad argument or mismatch fails FetchGrad on every rank alike.
	row := 2 + 2*w
	mine := make([]int32, row)
	mine[0] = code
	if tc != nil {
		mine[1] = int32(tc.seq & math.MaxInt32)
	}
	copy(mine[2:], sc)
	copy(mine[2+w:], rc)
	in, err := b.toDevice(rt, i32bytes(mine))
	if err != nil {
		return GradResult{}, err
	}
	tmp = append(tmp, in)
	all, err := b.scratch(int64(4 * row * w))
	if err != nil {
		return GradResult{}, err
	}
	tmp = append(tmp, all)
	if err := b.comm.AllGather(ctx, in.Ptr(), all.Ptr(), uint64(row), hccl.Int32); err != nil {
		return GradResult{}, err
	}
	if err := rt.SynchronizeStream(cs); err != nil {
		return GradResult{}, err
	}
	raw, err := b.toHost(rt, all, int64(4*row*w))
	if err != nil {
		return GradResult{}, err
	}
	v := bytesI32(raw)
	if ownErr != nil {
		return GradResult{}, ownErr
	}
	for r := 0; r < w; r++ {
		if c := v[r*row]; c != gradOK {
			reason := "bad arguments"
			if int(c) < len(gradReason) && c > 0 {
				reason = gradReason[c]
			}
			if c == gradPending {
				return GradResult{}, fmt.Errorf("%w: engram_fetch_grad: rank %d has an inference fetch pending", ErrPending, r)
			}
			return GradResult{}, cfgErr("engram_fetch_grad: rank %d passed %s", r, reason)
		}
	}
	for r := 0; r < w; r++ {
		if v[r*row+1] != mine[1] {
			return GradResult{}, cfgErr("engram_fetch_grad: the ranks passed contexts of different fetches (rank %d: fetch %d, rank %d: fetch %d)", b.rank, mine[1], r, v[r*row+1])
		}
		for s := 0; s < w; s++ {
			if sent, got := v[r*row+2+s], v[s*row+2+w+r]; sent != got {
				return GradResult{}, cfgErr("engram_fetch_grad: the contexts disagree: rank %d sent %d rows to rank %d, which received %d", r, sent, s, got)
			}
		}
	}
	// 2. grad_sorted[i] = grad[perm[i]], then the reverse exchange.
	valid := 0
	for _, c := range sc {
		valid += int(c)
	}
	// Permuted on the host: two bulk copies instead of one per row.
	graw, err := b.toHost(rt, g.Data, int64(g.Rows)*rb)
	if err != nil {
		return GradResult{}, err
	}
	sortedRaw := hostBytes(&b.hostOut, int64(valid)*rb)
	for i := 0; i < valid; i++ {
		copy(sortedRaw[int64(i)*rb:int64(i+1)*rb], graw[int64(perm[i])*rb:])
	}
	sorted, err := b.toDevice(rt, sortedRaw)
	if err != nil {
		return GradResult{}, err
	}
	tmp = append(tmp, sorted)
	recv, err := b.scratch(int64(nrecv) * rb)
	if err != nil {
		return GradResult{}, err
	}
	tmp = append(tmp, recv)
	scount, sdisp := rowCounts(sc, rb)
	rcount, rdisp := rowCounts(rc, rb)
	if err := b.comm.AlltoAllV(ctx, sorted.Ptr(), scount, sdisp, hccl.Uint8, recv.Ptr(), rcount, rdisp, hccl.Uint8); err != nil {
		return GradResult{}, err
	}
	if err := rt.SynchronizeStream(cs); err != nil {
		return GradResult{}, err
	}
	if nrecv == 0 {
		return GradResult{}, nil // the seed: num_recv == 0 → num_unique = 0
	}
	rows, err := b.toHost(rt, recv, int64(nrecv)*rb)
	if err != nil {
		return GradResult{}, err
	}
	// 3. Sort by local row, sum duplicates in fp32.
	lo := int32(int64(b.rank) * b.cfg.EntriesPerRank)
	keys := make([]uint32, nrecv)
	for i, g := range entries {
		keys[i] = uint32(g - lo)
	}
	order := radixSort(keys, uint32(b.cfg.EntriesPerRank-1))
	sum, uniq := reduceRows(&b.hostSum, rows, keys, order, b.cfg.Hidden, b.cfg.DType)
	var out GradResult
	out.K = len(uniq)
	if out.Rows, err = b.toDevice(rt, sum); err != nil {
		return out, err
	}
	if out.Entries, err = b.toDevice(rt, i32bytes(uniq)); err != nil {
		return out, err
	}
	return out, nil
}

// rowCounts turns row counts into AlltoAllV byte counts and displacements.
func rowCounts(c []int32, rb int64) (counts, displs []uint64) {
	counts, displs = make([]uint64, len(c)), make([]uint64, len(c))
	off := uint64(0)
	for r, n := range c {
		counts[r], displs[r] = uint64(n)*uint64(rb), off
		off += counts[r]
	}
	return counts, displs
}

// radixSort returns the positions of keys in ascending key order, stable:
// an LSD radix sort on bytes, with as many passes as maxKey has bytes
// (the seed sorts the same way: op_kernel engram_fetch_grad_sort.h,
// HISTOGRAM_BINS = 256).
func radixSort(keys []uint32, maxKey uint32) []int32 {
	n := len(keys)
	order, next := make([]int32, n), make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	for shift := uint(0); shift < 32 && maxKey>>shift != 0; shift += 8 {
		var count [257]int
		for _, p := range order {
			count[(keys[p]>>shift)&0xff+1]++
		}
		for d := 1; d < 257; d++ {
			count[d] += count[d-1]
		}
		for _, p := range order {
			d := (keys[p] >> shift) & 0xff
			next[count[d]] = p
			count[d]++
		}
		order, next = next, order
	}
	return order
}

// reduceRows sums the rows of equal keys, in sorted order, in float32
// (fp16/bf16 widened), rounding each sum once to dt. It returns the sums
// (K rows, in *dst's memory) and the distinct keys ascending.
func reduceRows(dst *[]byte, rows []byte, keys []uint32, order []int32, hidden int, dt DType) ([]byte, []int32) {
	rb := hidden * dt.Size()
	k := 0
	for i, p := range order {
		if i == 0 || keys[p] != keys[order[i-1]] {
			k++
		}
	}
	out := hostBytes(dst, int64(k)*int64(rb))
	uniq := make([]int32, 0, k)
	acc := make([]float32, hidden)
	// One widening and one rounding loop per row, chosen once: a switch
	// per element cost more than the sums.
	var add func(acc []float32, r []byte)
	var store func(o []byte, acc []float32)
	switch dt {
	case FP32:
		add = func(acc []float32, r []byte) {
			for j := range acc {
				acc[j] += math.Float32frombits(binary.LittleEndian.Uint32(r[4*j:]))
			}
		}
		store = func(o []byte, acc []float32) {
			for j, x := range acc {
				binary.LittleEndian.PutUint32(o[4*j:], math.Float32bits(x))
			}
		}
	case FP16:
		add = func(acc []float32, r []byte) {
			for j := range acc {
				acc[j] += floatx.F16ToF32(binary.LittleEndian.Uint16(r[2*j:]))
			}
		}
		store = func(o []byte, acc []float32) {
			for j, x := range acc {
				binary.LittleEndian.PutUint16(o[2*j:], floatx.F32ToF16(x))
			}
		}
	default: // BF16: the only other dtype FetchGrad accepts
		add = func(acc []float32, r []byte) {
			for j := range acc {
				acc[j] += floatx.BF16ToF32(binary.LittleEndian.Uint16(r[2*j:]))
			}
		}
		store = func(o []byte, acc []float32) {
			for j, x := range acc {
				binary.LittleEndian.PutUint16(o[2*j:], floatx.F32ToBF16(x))
			}
		}
	}
	for i, p := range order {
		if i == 0 || keys[p] != keys[order[i-1]] {
			if i > 0 {
				store(out[(len(uniq)-1)*rb:len(uniq)*rb], acc)
				clear(acc)
			}
			uniq = append(uniq, int32(keys[p]))
		}
		add(acc, rows[int(p)*rb:(int(p)+1)*rb])
	}
	if k > 0 {
		store(out[(k-1)*rb:k*rb], acc)
	}
	return out, uniq
}

// toDevice copies data into a new device buffer (at least one byte).
func (b *Buffer) toDevice(rt acl.Backend, data []byte) (*acl.DeviceBuffer, error) {
	d, err := b.scratch(int64(len(data)))
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		if err = rt.Memcpy(d.Ptr(), d.Size(), unsafe.Pointer(&data[0]), uintptr(len(data)), acl.MemcpyHostToDevice); err != nil {
			_ = d.Close()
			return nil, err
		}
	}
	return d, nil
}

// toHost copies the first n bytes of d to the host, into b.hostIn: the
// bytes last until the next toHost.
func (b *Buffer) toHost(rt acl.Backend, d *acl.DeviceBuffer, n int64) ([]byte, error) {
	out := hostBytes(&b.hostIn, n)
	if n == 0 {
		return out, nil
	}
	return out, rt.Memcpy(unsafe.Pointer(&out[0]), uintptr(n), d.Ptr(), uintptr(n), acl.MemcpyDeviceToHost)
}
