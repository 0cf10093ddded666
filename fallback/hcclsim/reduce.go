package hcclsim

import (
	"unsafe"

	"github.com/ascend-go/cann/floatx"
)

// Reductions over raw device bytes.
//
// reduceBlocks computes, element by element, op(srcs[0], srcs[1], …) in rank
// order and writes the result to every slice in dsts. Work proceeds in
// blocks small enough to stay in L1: the block's result is built in a
// scratch buffer and copied out only after every source block has been
// read, so a destination may alias a source (in-place collectives).
//
// Integer types wrap on overflow like two's-complement C. float16 and
// bfloat16 are widened to float32, accumulated over all ranks in float32 and
// rounded once (to nearest even) at the end. MAX and MIN on floats
// propagate NaN: if any input is NaN the result is NaN. int128 and the
// 8-bit float types are not reduced (HCCL_E_NOT_SUPPORT, as on the device;
// see dtype.reducible).

// blockBytes bounds the scratch of one block (the accumulator and one
// decoded source fit in L1 together).
const blockBytes = 8 << 10

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// reducer holds the scratch of one reducing goroutine; it is not safe for
// concurrent use, each worker owns one.
type reducer struct {
	acc [blockBytes / 8]uint64  // accumulator, viewed as the element type (8-byte aligned)
	f32 [blockBytes / 4]float32 // narrow floats: the float32 accumulator
	tmp [blockBytes / 4]float32 // narrow floats: one decoded source
	out [blockBytes]byte        // narrow floats: the encoded result

	dp, sp     []unsafe.Pointer // vector kernels: destination and source addresses
	subD, subS [][]byte         // sub: the ranges before and after a kernel's chunks
}

// reduceBlocks is the entry point; see the file comment. All slices must
// have the same length, a multiple of dt's size; dt must be reducible.
func (r *reducer) reduceBlocks(dt dtype, op redOp, dsts [][]byte, srcs [][]byte) {
	switch dt {
	case dtInt8:
		reduceNum[int8](r, op, dsts, srcs)
	case dtUint8:
		reduceNum[uint8](r, op, dsts, srcs)
	case dtInt16:
		reduceNum[int16](r, op, dsts, srcs)
	case dtUint16:
		reduceNum[uint16](r, op, dsts, srcs)
	case dtInt32:
		reduceNum[int32](r, op, dsts, srcs)
	case dtUint32:
		reduceNum[uint32](r, op, dsts, srcs)
	case dtInt64:
		reduceNum[int64](r, op, dsts, srcs)
	case dtUint64:
		reduceNum[uint64](r, op, dsts, srcs)
	case dtFP32:
		reduceNum[float32](r, op, dsts, srcs)
	case dtFP64:
		reduceNum[float64](r, op, dsts, srcs)
	case dtFP16, dtBF16:
		if !r.narrowVector(dt, op, dsts, srcs) {
			dec, enc := narrowCodec(dt)
			r.reduceNarrow(2, dec, enc, op, dsts, srcs)
		}
	}
}

// narrowCodec returns the float32 conversions of float16 or bfloat16.
func narrowCodec(dt dtype) (dec func([]float32, []byte) int, enc func([]byte, []float32) int) {
	if dt == dtFP16 {
		return floatx.DecodeF16, floatx.EncodeF16
	}
	return floatx.DecodeBF16, floatx.EncodeBF16
}

// narrowVector runs a bfloat16 or float16 reduction through a vector
// kernel: whole 64-byte chunks in the kernel, the rest in reduceNarrow.
// Large outputs bypass the cache (from the destinations' first 32-byte
// boundary, which must be the same for all); small ones stay in it. It
// reports false, doing nothing, when no kernel applies or a destination
// overlaps a source without being it.
func (r *reducer) narrowVector(dt dtype, op redOp, dsts, srcs [][]byte) bool {
	total := len(srcs[0])
	if total < 64 || !disjointOrSame(dsts, srcs) {
		return false
	}
	head, nt := 0, false
	if total >= ntBytes {
		head, nt = alignedHead(dsts, 2)
	}
	k := narrowKernel(dt, op, nt)
	if k == nil {
		return false
	}
	body := (total - head) / 64 * 64
	if body == 0 {
		return false
	}
	r.runKernel(k, dsts, srcs, head, body)
	for _, rg := range [2][2]int{{0, head}, {head + body, total}} {
		if rg[0] == rg[1] {
			continue
		}
		d, s := r.sub(dsts, srcs, rg[0], rg[1])
		dec, enc := narrowCodec(dt)
		r.reduceNarrow(2, dec, enc, op, d, s)
	}
	return true
}

// sub returns bytes [lo, hi) of every destination and source, in slices
// the reducer reuses (valid until its next call).
func (r *reducer) sub(dsts, srcs [][]byte, lo, hi int) (d, s [][]byte) {
	r.subD, r.subS = r.subD[:0], r.subS[:0]
	for _, b := range dsts {
		r.subD = append(r.subD, b[lo:hi])
	}
	for _, b := range srcs {
		r.subS = append(r.subS, b[lo:hi])
	}
	return r.subD, r.subS
}

// runKernel applies k to bytes [off, off+n) of every buffer.
func (r *reducer) runKernel(k kernS, dsts, srcs [][]byte, off, n int) {
	r.dp, r.sp = r.dp[:0], r.sp[:0]
	for _, d := range dsts {
		r.dp = append(r.dp, unsafe.Pointer(&d[off]))
	}
	for _, s := range srcs {
		r.sp = append(r.sp, unsafe.Pointer(&s[off]))
	}
	k(&r.dp[0], &r.sp[0], len(r.dp), len(r.sp), n)
	clear(r.dp) // keep no memory reachable past the call
	clear(r.sp)
}

// disjointOrSame reports whether every destination either is a source
// (same memory, same length) or overlaps none: what the vector kernels,
// which read a chunk of every source before writing it anywhere, need.
func disjointOrSame(dsts, srcs [][]byte) bool {
	for _, d := range dsts {
		for _, s := range srcs {
			if overlap(d, s) && !same(d, s) {
				return false
			}
		}
	}
	return true
}

// asSlice reinterprets device bytes as elements of T. Device memory lives
// outside the Go heap and holds no pointers, so the view is sound; amd64 and
// arm64 allow the unaligned loads a user offset may cause.
func asSlice[T number](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

func reduceNum[T number](r *reducer, op redOp, dsts, srcs [][]byte) {
	var z T
	esz := int(unsafe.Sizeof(z))
	total := len(srcs[0])
	if total >= ntBytes {
		if k := vecKernel[T](op, true); k != nil && streamReduce[T](r, k, op, dsts, srcs) {
			return
		}
	}
	step := blockBytes / esz * esz
	// Large outputs: accumulate each block in the L1 scratch and stream it
	// to every destination with non-temporal stores, so memory sees each
	// source read once and each output written once (no read for
	// ownership). Small outputs: accumulate straight into one destination
	// when that is safe (it aliases no source still to be read after the
	// first combine) and store a second destination in the last combine,
	// so the results stay in the cache for whoever reads them next.
	d0, d1 := accTargets(dsts, srcs)
	if total >= ntBytes && hasAVX2 {
		d0, d1 = -1, -1
	}
	var acc []T
	if d0 < 0 {
		acc = asSlice[T](unsafe.Slice((*byte)(unsafe.Pointer(&r.acc[0])), len(r.acc)*8))
	}
	for off := 0; off < total; off += step {
		end := min(off+step, total)
		var a, b []T
		if d0 >= 0 {
			a = asSlice[T](dsts[d0][off:end])
		} else {
			a = acc[:(end-off)/esz]
		}
		if d1 >= 0 {
			b = asSlice[T](dsts[d1][off:end])
		}
		s0 := asSlice[T](srcs[0][off:end])
		if len(srcs) == 1 {
			copy(a, s0)
			copy(b, s0)
		} else {
			last := len(srcs) - 1
			combine2(r, op, a, pickOut(b, last == 1), s0, asSlice[T](srcs[1][off:end]))
			for k := 2; k <= last; k++ {
				combine2(r, op, a, pickOut(b, k == last), a, asSlice[T](srcs[k][off:end]))
			}
		}
		ab := unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), end-off)
		for k, d := range dsts {
			if k != d0 && k != d1 && (d0 >= 0 || !storeNT(d[off:end], ab)) {
				copy(d[off:end], ab)
			}
		}
	}
}

// ntBytes is the output size from which reductions bypass the cache.
const ntBytes = 1 << 20

// streamReduce runs a large reduction through the streaming kernel k,
// which reads every source once and writes every destination once in a
// single pass; the bytes before the destinations' first 32-byte boundary
// and after the last whole 128-byte chunk take the blockwise path. It
// reports false, doing nothing, when k cannot be used: destinations at
// different offsets from a boundary, or a destination that overlaps a
// source without being it.
func streamReduce[T number](r *reducer, k kernS, op redOp, dsts, srcs [][]byte) bool {
	var z T
	esz := int(unsafe.Sizeof(z))
	total := len(srcs[0])
	if !disjointOrSame(dsts, srcs) {
		return false
	}
	head, ok := alignedHead(dsts, esz)
	if !ok || total-head < 128 {
		return false
	}
	body := (total - head) / 128 * 128
	r.runKernel(k, dsts, srcs, head, body)
	reduceRange[T](r, op, dsts, srcs, 0, head)
	reduceRange[T](r, op, dsts, srcs, head+body, total)
	return true
}

// alignedHead returns how many bytes precede the destinations' first
// 32-byte boundary, where non-temporal stores can start; ok is false when
// the destinations lie at different offsets from a boundary or the head
// is not whole elements of esz bytes.
func alignedHead(dsts [][]byte, esz int) (head int, ok bool) {
	mis := uintptr(unsafe.Pointer(unsafe.SliceData(dsts[0]))) % 32
	for _, d := range dsts {
		if uintptr(unsafe.Pointer(unsafe.SliceData(d)))%32 != mis {
			return 0, false
		}
	}
	head = int((32 - mis) % 32)
	if head%esz != 0 {
		return 0, false
	}
	return head, true
}

// reduceRange reduces bytes [lo, hi) of every slice through reduceNum.
func reduceRange[T number](r *reducer, op redOp, dsts, srcs [][]byte, lo, hi int) {
	if lo < hi {
		d, s := r.sub(dsts, srcs, lo, hi)
		reduceNum[T](r, op, d, s)
	}
}

func pickOut[T number](b []T, last bool) []T {
	if last {
		return b
	}
	return nil
}

// accTargets picks the destination to accumulate in (d0, -1 for the
// scratch) and the one to store alongside in the last combine (d1, -1 for
// none). d0 may share memory with sources 0 or 1 at the same place (read
// before written, element by element) but with no later source.
func accTargets(dsts, srcs [][]byte) (d0, d1 int) {
	d0, d1 = -1, -1
	for k, d := range dsts {
		ok := true
		for j, s := range srcs {
			if overlap(d, s) && (j >= 2 || !same(d, s)) {
				ok = false
				break
			}
		}
		if ok {
			d0 = k
			break
		}
	}
	if d0 < 0 {
		return -1, -1
	}
	for k, d := range dsts {
		if k == d0 || overlap(d, dsts[d0]) {
			continue
		}
		ok := true
		for _, s := range srcs {
			if overlap(d, s) && !same(d, s) {
				ok = false
				break
			}
		}
		if ok {
			return d0, k
		}
	}
	return d0, -1
}

func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// combine2 sets a[i] (and b[i] if b is not nil) = op(x[i], y[i]); a may
// be x. Each op is its own tight loop so the common case (SUM) has no
// per-element branch on the op.
func combine2[T number](r *reducer, op redOp, a, b, x, y []T) {
	x = x[:len(a)]
	y = y[:len(a)]
	if k := simd(r, op, a, b, x, y); k > 0 {
		a, x, y = a[k:], x[k:], y[k:]
		if b != nil {
			b = b[k:]
		}
	}
	switch op {
	case opSum:
		i := 0
		for ; i+4 <= len(a); i += 4 {
			a0 := x[i] + y[i]
			a1 := x[i+1] + y[i+1]
			a2 := x[i+2] + y[i+2]
			a3 := x[i+3] + y[i+3]
			a[i], a[i+1], a[i+2], a[i+3] = a0, a1, a2, a3
		}
		for ; i < len(a); i++ {
			a[i] = x[i] + y[i]
		}
	case opProd:
		for i := range a {
			a[i] = x[i] * y[i]
		}
	case opMax:
		for i := range a {
			u, v := x[i], y[i]
			if v > u || v != v { // v != v: a NaN on either side wins
				u = v
			}
			a[i] = u
		}
	case opMin:
		for i := range a {
			u, v := x[i], y[i]
			if v < u || v != v {
				u = v
			}
			a[i] = u
		}
	}
	if b != nil {
		copy(b, a)
	}
}

// reduceNarrow widens each source block to float32, combines in float32 and
// rounds once into the destination format.
func (r *reducer) reduceNarrow(esz int, dec func([]float32, []byte) int, enc func([]byte, []float32) int,
	op redOp, dsts, srcs [][]byte) {
	total := len(srcs[0])
	step := min(len(r.f32)*esz, len(r.out)/esz*esz)
	for off := 0; off < total; off += step {
		end := min(off+step, total)
		m := (end - off) / esz
		a := r.f32[:m]
		t := r.tmp[:m]
		dec(a, srcs[0][off:end])
		for _, s := range srcs[1:] {
			dec(t, s[off:end])
			combine2(r, op, a, nil, a, t)
		}
		o := r.out[:end-off]
		enc(o, a)
		for _, d := range dsts {
			copy(d[off:end], o)
		}
	}
}
