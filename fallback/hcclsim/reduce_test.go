package hcclsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/floatx"
)

var allOps = []redOp{opSum, opProd, opMax, opMin}

var intTypes = []struct {
	dt     dtype
	bits   uint
	signed bool
}{
	{dtInt8, 8, true}, {dtUint8, 8, false}, {dtInt16, 16, true}, {dtUint16, 16, false},
	{dtInt32, 32, true}, {dtUint32, 32, false}, {dtInt64, 64, true}, {dtUint64, 64, false},
}

// randBytes returns n random bytes.
//
// The test-side helpers that touch every byte of megabyte buffers (this,
// the references, fillFinite) are norace: each works on memory only its
// goroutine sees, and under -race a check per byte made them, not the
// kernels under test (which stay instrumented), most of the package's
// time.
//
//go:norace
func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	st := rng.Uint64() // a local stream: drawing touches no shared state
	i := 0
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], splitmix(&st))
	}
	for ; i < n; i++ {
		b[i] = byte(splitmix(&st))
	}
	return b
}

// splitmix advances the splitmix64 state st and returns its next output.
//
//go:norace
func splitmix(st *uint64) uint64 {
	*st += 0x9e3779b97f4a7c15
	z := *st
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// unit returns a uniform float64 in [0, 1) from 53 bits of splitmix.
//
//go:norace
func unit(st *uint64) float64 { return float64(splitmix(st)>>11) / (1 << 53) }

// bigElem reads element i of a little-endian integer slice as a big.Int.
func bigElem(b []byte, i int, bits uint, signed bool) *big.Int {
	w := int(bits / 8)
	le := b[i*w : (i+1)*w]
	be := make([]byte, w)
	for k := range le {
		be[w-1-k] = le[k]
	}
	v := new(big.Int).SetBytes(be)
	if signed && le[w-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), bits))
	}
	return v
}

// putBig writes v modulo 2^bits as element i.
func putBig(b []byte, i int, bits uint, v *big.Int) {
	w := int(bits / 8)
	m := new(big.Int).Lsh(big.NewInt(1), bits)
	u := new(big.Int).Mod(v, m)
	be := u.FillBytes(make([]byte, w))
	for k := range be {
		b[i*w+k] = be[w-1-k]
	}
}

// TestReduceIntegers checks every integer type and op against exact big
// integer arithmetic reduced modulo 2^bits (C's wrapping).
func TestReduceIntegers(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
	var r reducer
	for _, it := range intTypes {
		for _, op := range allOps {
			for _, nsrc := range []int{1, 2, 3, 5} {
				t.Run(fmt.Sprintf("%v/%v/n%d", it.dt, op, nsrc), func(t *testing.T) {
					w := int(it.bits / 8)
					count := 1 + rng.IntN(3*blockBytes/w) // spans several blocks
					srcs := make([][]byte, nsrc)
					for k := range srcs {
						srcs[k] = randBytes(rng, count*w)
					}
					dst := make([]byte, count*w)
					r.reduceBlocks(it.dt, op, [][]byte{dst}, srcs)
					want := make([]byte, count*w)
					for i := 0; i < count; i++ {
						acc := bigElem(srcs[0], i, it.bits, it.signed)
						for _, s := range srcs[1:] {
							v := bigElem(s, i, it.bits, it.signed)
							switch op {
							case opSum:
								acc.Add(acc, v)
							case opProd:
								acc.Mul(acc, v)
							case opMax:
								if v.Cmp(acc) > 0 {
									acc = v
								}
							case opMin:
								if v.Cmp(acc) < 0 {
									acc = v
								}
							}
						}
						putBig(want, i, it.bits, acc)
					}
					require.Equal(t, want, dst)
				})
			}
		}
	}
}

// floatCase describes a float type by its scalar codec.
type floatCase struct {
	dt  dtype
	w   int
	dec func(b []byte) float64
	enc func(b []byte, v float64)
	gen func(rng *rand.Rand) float64
	// narrow types accumulate in float32 and round once
	narrow bool
}

func floatCases() []floatCase {
	small := func(rng *rand.Rand) float64 { return rng.NormFloat64() * 4 }
	return []floatCase{
		{dtFP32, 4,
			func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) },
			func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v))) },
			func(rng *rand.Rand) float64 { return rng.NormFloat64() * 1e3 }, false},
		{dtFP64, 8,
			func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) },
			func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) },
			func(rng *rand.Rand) float64 { return rng.NormFloat64() * 1e6 }, false},
		{dtFP16, 2,
			func(b []byte) float64 { return float64(floatx.F16ToF32(binary.LittleEndian.Uint16(b))) },
			func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, floatx.F32ToF16(float32(v))) },
			small, true},
		{dtBF16, 2,
			func(b []byte) float64 { return float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(b))) },
			func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, floatx.F32ToBF16(float32(v))) },
			small, true},
	}
}

// refFloat is the reference: scalar decode, rank-order accumulation in the
// accumulation type (float32, or float64 for Float64), NaN-propagating max/min,
// one final rounding.
func refFloat(fc floatCase, op redOp, srcs [][]byte, i int) float64 {
	at := func(k int) float64 { return fc.dec(srcs[k][i*fc.w:]) }
	if fc.dt == dtFP64 {
		acc := at(0)
		for k := 1; k < len(srcs); k++ {
			acc = refCombine(op, acc, at(k))
		}
		return acc
	}
	acc := float32(at(0))
	for k := 1; k < len(srcs); k++ {
		acc = float32(refCombine(op, float64(acc), at(k)))
	}
	return float64(acc)
}

func refCombine(op redOp, a, b float64) float64 {
	switch op {
	case opSum:
		return a + b
	case opProd:
		return a * b
	case opMax:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	default:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	}
}

// TestReduceFloats checks every float type and op, with a few NaNs mixed in.
func TestReduceFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
	var r reducer
	for _, fc := range floatCases() {
		for _, op := range allOps {
			for _, nsrc := range []int{1, 2, 4, 7} {
				t.Run(fmt.Sprintf("%v/%v/n%d", fc.dt, op, nsrc), func(t *testing.T) {
					count := 1 + rng.IntN(3*blockBytes/fc.w)
					srcs := make([][]byte, nsrc)
					for k := range srcs {
						srcs[k] = make([]byte, count*fc.w)
						for i := 0; i < count; i++ {
							v := fc.gen(rng)
							if rng.IntN(500) == 0 {
								v = math.NaN()
							}
							fc.enc(srcs[k][i*fc.w:], v)
						}
					}
					dst := make([]byte, count*fc.w)
					r.reduceBlocks(fc.dt, op, [][]byte{dst}, srcs)
					want := make([]byte, count*fc.w)
					for i := 0; i < count; i++ {
						fc.enc(want[i*fc.w:], refFloat(fc, op, srcs, i))
					}
					for i := 0; i < count; i++ {
						g, w := fc.dec(dst[i*fc.w:]), fc.dec(want[i*fc.w:])
						if math.IsNaN(w) {
							require.True(t, math.IsNaN(g), "element %d: got %v want NaN", i, g)
							continue
						}
						require.Equal(t, want[i*fc.w:(i+1)*fc.w], dst[i*fc.w:(i+1)*fc.w], "element %d: got %v want %v", i, g, w)
					}
				})
			}
		}
	}
}

// TestReduceNarrowRoundsOnce shows float16 sums are rounded once: 1 + 2^-11
// + 2^-11 is 1 when rounded after each step, but 1+2^-10 exactly in float32.
func TestReduceNarrowRoundsOnce(t *testing.T) {
	enc := func(v float32) []byte { return binary.LittleEndian.AppendUint16(nil, floatx.F32ToF16(v)) }
	one, tiny := enc(1), enc(1.0/2048)
	dst := make([]byte, 2)
	var r reducer
	r.reduceBlocks(dtFP16, opSum, [][]byte{dst}, [][]byte{one, tiny, tiny})
	assert.Equal(t, float32(1+1.0/1024), floatx.F16ToF32(binary.LittleEndian.Uint16(dst)))
}

// TestReduceAliasAndFanout writes the result to several destinations, one
// of which is a source (an in-place collective).
func TestReduceAliasAndFanout(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
	count := 3*blockBytes/4 + 17
	a, b, c := randBytes(rng, count*4), randBytes(rng, count*4), randBytes(rng, count*4)
	want := make([]byte, count*4)
	for i := 0; i < count; i++ {
		s := binary.LittleEndian.Uint32(a[4*i:]) + binary.LittleEndian.Uint32(b[4*i:]) + binary.LittleEndian.Uint32(c[4*i:])
		binary.LittleEndian.PutUint32(want[4*i:], s)
	}
	other := make([]byte, count*4)
	var r reducer
	r.reduceBlocks(dtUint32, opSum, [][]byte{b, other}, [][]byte{a, b, c})
	require.Equal(t, want, b)
	require.Equal(t, want, other)
}

// TestReduceInPlaceEveryRank is the in-place AllReduce of the in-process
// transport: every rank's output is its own input, for each rank count
// and type with vector kernels, against a reference computed first.
func TestReduceInPlaceEveryRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 4))
	var r reducer
	for _, dt := range []dtype{dtFP32, dtFP64, dtInt8, dtInt16, dtInt32, dtUint64, dtFP16, dtBF16} {
		for _, n := range []int{1, 2, 3, 4, 5} {
			for _, op := range []redOp{opSum, opProd, opMax} {
				esz := int(dt.size())
				count := 1 + rng.IntN(2*blockBytes/esz)
				bufs := make([][]byte, n)
				want := make([]byte, count*esz)
				for k := range bufs {
					bufs[k] = randBytes(rng, count*esz)
				}
				// Reference: a separate output, no aliasing.
				r.reduceBlocks(dt, op, [][]byte{want}, clone(bufs))
				r.reduceBlocks(dt, op, bufs, bufs)
				for k := range bufs {
					require.Equal(t, want, bufs[k], "%v %v n=%d rank %d", dt, op, n, k)
				}
			}
		}
	}
}

func clone(bs [][]byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = append([]byte(nil), b...)
	}
	return out
}

// refSeq is an independent reference for SUM and PROD: plain Go
// arithmetic on T, combining the sources in rank order (norace: see
// randBytes).
//
//go:norace
func refSeq[T number](op redOp, srcs [][]byte) []byte {
	out := make([]byte, len(srcs[0]))
	acc := asSlice[T](out)
	copy(acc, asSlice[T](srcs[0]))
	for _, s := range srcs[1:] {
		x := asSlice[T](s)
		for i := range acc {
			if op == opSum {
				acc[i] += x[i]
			} else {
				acc[i] *= x[i]
			}
		}
	}
	return out
}

// refNarrow is an independent reference for SUM and PROD on bfloat16 or
// float16: widen each element, combine in float32 in rank order, round
// once.
func refNarrow(dec func(uint16) float32, enc func(float32) uint16) func(redOp, [][]byte) []byte {
	return func(op redOp, srcs [][]byte) []byte { return narrowSeq(dec, enc, op, srcs) }
}

// narrowSeq is refNarrow's loop (norace: see randBytes).
//
//go:norace
func narrowSeq(dec func(uint16) float32, enc func(float32) uint16, op redOp, srcs [][]byte) []byte {
	out := make([]byte, len(srcs[0]))
	for i := 0; i+2 <= len(out); i += 2 {
		acc := dec(binary.LittleEndian.Uint16(srcs[0][i:]))
		for _, s := range srcs[1:] {
			v := dec(binary.LittleEndian.Uint16(s[i:]))
			if op == opSum {
				acc += v
			} else {
				acc *= v
			}
		}
		binary.LittleEndian.PutUint16(out[i:], enc(acc))
	}
	return out
}

// fillFinite overwrites the count elements of dt in b with finite values
// of magnitude in [0.5, 1.5) and random sign for the narrow types, in
// [0.5, 1.5) for fp32 and fp64 (so that products neither vanish nor
// overflow much); other types keep their random bits (norace: see
// randBytes).
//
//go:norace
func fillFinite(rng *rand.Rand, dt dtype, b []byte, count int) {
	st := rng.Uint64()
	switch dt {
	case dtBF16, dtFP16:
		for i := 0; i < count; i++ {
			x := splitmix(&st)
			v := float32(0.5 + float64(x>>11)/(1<<53))
			if x&1 == 0 {
				v = -v
			}
			h := floatx.F32ToBF16(v)
			if dt == dtFP16 {
				h = floatx.F32ToF16(v)
			}
			binary.LittleEndian.PutUint16(b[i*2:], h)
		}
	case dtFP32:
		for i := 0; i < count; i++ {
			binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(float32(0.5+unit(&st))))
		}
	case dtFP64:
		for i := 0; i < count; i++ {
			binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(0.5+unit(&st)))
		}
	}
}

// TestReduceStreaming covers large reductions (the streaming kernels):
// every type and op with a kernel, 1–8 sources and destinations, heads
// before the first 32-byte boundary and tails after the last whole chunk,
// in-place destinations, and destinations at different offsets from a
// boundary (which must take the blockwise path and still be right).
func TestReduceStreaming(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 5))
	type tcase struct {
		dt  dtype
		esz int
		ref func(redOp, [][]byte) []byte
	}
	types := []tcase{
		{dtFP32, 4, refSeq[float32]}, {dtFP64, 8, refSeq[float64]}, {dtInt8, 1, refSeq[int8]},
		{dtUint8, 1, refSeq[uint8]}, {dtInt16, 2, refSeq[int16]}, {dtUint32, 4, refSeq[uint32]},
		{dtInt32, 4, refSeq[int32]}, {dtInt64, 8, refSeq[int64]}, {dtUint64, 8, refSeq[uint64]},
		{dtBF16, 2, refNarrow(floatx.BF16ToF32, floatx.F32ToBF16)},
		{dtFP16, 2, refNarrow(floatx.F16ToF32, floatx.F32ToF16)},
	}
	var r reducer
	for _, tc := range types {
		for _, op := range []redOp{opSum, opProd} {
			for _, n := range []int{1, 2, 3, 5, 8} {
				t.Run(fmt.Sprintf("%v/%v/n%d", tc.dt, op, n), func(t *testing.T) {
					count := (ntBytes+rng.IntN(4096))/tc.esz + rng.IntN(64)
					size := count * tc.esz
					// Backing stores with room to place each slice at a
					// chosen offset from a 32-byte boundary.
					place := func(b []byte, mis int) []byte {
						back := make([]byte, size+64)
						base := int(uintptr(unsafe.Pointer(&back[0])) % 32)
						off := (32-base)%32 + mis
						s := back[off : off+size]
						copy(s, b)
						return s
					}
					gen := func() []byte {
						b := randBytes(rng, size)
						fillFinite(rng, tc.dt, b, count)
						return b
					}
					srcs := make([][]byte, n)
					for k := range srcs {
						srcs[k] = place(gen(), rng.IntN(32/tc.esz)*tc.esz)
					}
					want := tc.ref(op, srcs)

					// Out of place, every destination at the same offset.
					mis := rng.IntN(32/tc.esz) * tc.esz
					dsts := make([][]byte, 1+rng.IntN(n))
					for k := range dsts {
						dsts[k] = place(nil, mis)
					}
					r.reduceBlocks(tc.dt, op, dsts, srcs)
					for k, d := range dsts {
						requireSameBytes(t, want, d, "out of place, destination %d", k)
					}

					// Destinations at different offsets.
					if tc.esz < 32 {
						odd := [][]byte{place(nil, 0), place(nil, tc.esz)}
						r.reduceBlocks(tc.dt, op, odd, srcs)
						requireSameBytes(t, want, odd[0], "destination at offset 0")
						requireSameBytes(t, want, odd[1], "destination at another offset")
					}

					// In place on every rank (all at one offset).
					bufs := make([][]byte, n)
					for k := range bufs {
						bufs[k] = place(srcs[k], mis)
					}
					r.reduceBlocks(tc.dt, op, bufs, bufs)
					for k := range bufs {
						requireSameBytes(t, want, bufs[k], "in place, rank %d", k)
					}
				})
			}
		}
	}
}

// requireSameBytes compares large buffers, naming the first difference
// instead of printing megabytes.
func requireSameBytes(t *testing.T, want, got []byte, format string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	if bytes.Equal(want, got) {
		return
	}
	for i := range want {
		if want[i] != got[i] {
			require.FailNowf(t, "bytes differ", "%s: first difference at byte %d of %d (got %#x, want %#x)",
				fmt.Sprintf(format, args...), i, len(want), got[i], want[i])
		}
	}
}
