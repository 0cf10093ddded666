package floatx

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// format describes a narrow format for the reference model. The reference
// decodes bit patterns from the format's definition in float64 and encodes by
// searching the sorted table of representable values for the nearest one,
// ties to the even code: it shares no code with the package.
type format struct {
	name         string
	bits         int
	ebits, mbits int
	ieee         bool // all-ones exponent is Inf/NaN; otherwise only S.1111.111 is NaN (e4m3fn)
	sat          bool // overflow saturates instead of giving Inf/NaN
	encode       func(float32) uint32
	decode       func(uint32) float32
}

func (f format) bias() int { return 1<<(f.ebits-1) - 1 }

func (f format) refDecode(c uint32) float64 {
	signBit := uint32(1) << (f.bits - 1)
	mag := c &^ signBit
	e := int(mag >> f.mbits)
	m := float64(mag & (1<<f.mbits - 1))
	emax := 1<<f.ebits - 1
	var v float64
	switch {
	case f.ieee && e == emax && m == 0:
		v = math.Inf(1)
	case f.ieee && e == emax:
		v = math.NaN()
	case !f.ieee && mag == signBit-1:
		v = math.NaN()
	case e == 0:
		v = m * math.Pow(2, float64(1-f.bias()-f.mbits))
	default:
		v = (1 + m/math.Pow(2, float64(f.mbits))) * math.Pow(2, float64(e-f.bias()))
	}
	if c&signBit != 0 {
		v = -v
	}
	return v
}

// table returns the non-negative finite codes in ascending order with their
// values, plus one virtual code past the largest finite value (one step
// further) standing for overflow.
func (f format) table() ([]uint32, []float64) {
	var codes []uint32
	var vals []float64
	signBit := uint32(1) << (f.bits - 1)
	for c := uint32(0); c < signBit; c++ {
		v := f.refDecode(c)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		codes = append(codes, c)
		vals = append(vals, v)
	}
	n := len(vals)
	codes = append(codes, codes[n-1]+1)
	vals = append(vals, 2*vals[n-1]-vals[n-2])
	return codes, vals
}

func (f format) overflow(neg bool) uint32 {
	signBit := uint32(1) << (f.bits - 1)
	var c uint32
	switch {
	case f.sat && f.ieee: // the code below +Inf
		c = (1<<f.ebits-1)<<f.mbits - 1
	case f.sat: // the code below the NaN
		c = signBit - 2
	case f.ieee:
		c = (1<<f.ebits - 1) << f.mbits
	default:
		c = signBit - 1
	}
	if neg {
		c |= signBit
	}
	return c
}

// refEncode is the correctly rounded code of x (not NaN).
func (f format) refEncode(x float64, codes []uint32, vals []float64) uint32 {
	signBit := uint32(1) << (f.bits - 1)
	neg := math.Signbit(x)
	a := math.Abs(x)
	var sign uint32
	if neg {
		sign = signBit
	}
	last := len(vals) - 1
	if a >= vals[last] {
		return f.overflow(neg)
	}
	i := sort.SearchFloat64s(vals, a) // vals[i-1] < a <= vals[i]
	if vals[i] == a {
		if i == last {
			return f.overflow(neg)
		}
		return sign | codes[i]
	}
	lo, hi := i-1, i
	dlo, dhi := a-vals[lo], vals[hi]-a
	pick := lo
	if dhi < dlo || (dhi == dlo && codes[hi]&1 == 0) {
		pick = hi
	}
	if pick == last {
		return f.overflow(neg)
	}
	return sign | codes[pick]
}

var formats = []format{
	{name: "f16", bits: 16, ebits: 5, mbits: 10, ieee: true,
		encode: func(x float32) uint32 { return uint32(F32ToF16(x)) },
		decode: func(c uint32) float32 { return F16ToF32(uint16(c)) }},
	{name: "bf16", bits: 16, ebits: 8, mbits: 7, ieee: true,
		encode: func(x float32) uint32 { return uint32(F32ToBF16(x)) },
		decode: func(c uint32) float32 { return BF16ToF32(uint16(c)) }},
	{name: "e4m3fn", bits: 8, ebits: 4, mbits: 3,
		encode: func(x float32) uint32 { return uint32(F32ToE4M3FN(x)) },
		decode: func(c uint32) float32 { return E4M3FNToF32(uint8(c)) }},
	{name: "e4m3fn-sat", bits: 8, ebits: 4, mbits: 3, sat: true,
		encode: func(x float32) uint32 { return uint32(F32ToE4M3FNSat(x)) },
		decode: func(c uint32) float32 { return E4M3FNToF32(uint8(c)) }},
	{name: "e5m2", bits: 8, ebits: 5, mbits: 2, ieee: true,
		encode: func(x float32) uint32 { return uint32(F32ToE5M2(x)) },
		decode: func(c uint32) float32 { return E5M2ToF32(uint8(c)) }},
	{name: "e5m2-sat", bits: 8, ebits: 5, mbits: 2, ieee: true, sat: true,
		encode: func(x float32) uint32 { return uint32(F32ToE5M2Sat(x)) },
		decode: func(c uint32) float32 { return E5M2ToF32(uint8(c)) }},
}

func TestDecodeExhaustive(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			for c := uint32(0); c < 1<<f.bits; c++ {
				want := f.refDecode(c)
				got := float64(f.decode(c))
				if math.IsNaN(want) {
					if !math.IsNaN(got) {
						t.Fatalf("code %#x: got %v, want NaN", c, got)
					}
					continue
				}
				if got != want || math.Signbit(got) != math.Signbit(want) {
					t.Fatalf("code %#x: got %v, want %v", c, got, want)
				}
			}
		})
	}
}

func TestRoundTripExhaustive(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			for c := uint32(0); c < 1<<f.bits; c++ {
				v := f.decode(c)
				got := f.encode(v)
				switch {
				case math.IsNaN(float64(v)):
					if !math.IsNaN(float64(f.decode(got))) {
						t.Fatalf("NaN code %#x became %#x", c, got)
					}
				case f.sat && math.IsInf(float64(v), 0):
					require.Equal(t, f.overflow(v < 0), got)
				case got != c:
					t.Fatalf("code %#x (%v) encodes back to %#x", c, v, got)
				}
			}
		})
	}
}

func TestOrdering(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			codes, _ := f.table()
			prev := math.Inf(-1)
			for _, c := range codes[:len(codes)-1] {
				v := float64(f.decode(c))
				if !(v > prev) {
					t.Fatalf("code %#x: %v not above the previous %v", c, v, prev)
				}
				prev = v
			}
		})
	}
}

// TestTies checks every midpoint between neighbouring representable values
// (and the midpoint to the overflow step): the exact tie rounds to the even
// code, one float32 ulp either side rounds to the nearer neighbour.
func TestTies(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			codes, vals := f.table()
			for i := 0; i+1 < len(vals); i++ {
				mid := (vals[i] + vals[i+1]) / 2
				m32 := float32(mid)
				require.Equal(t, mid, float64(m32), "midpoint must be exact in float32")
				for _, neg := range []bool{false, true} {
					s := float32(1)
					if neg {
						s = -1
					}
					want := func(j int) uint32 {
						if j == len(vals)-1 {
							return f.overflow(neg)
						}
						c := codes[j]
						if neg {
							c |= 1 << (f.bits - 1)
						}
						return c
					}
					even := i
					if codes[i+1]&1 == 0 {
						even = i + 1
					}
					check := func(x float32, w uint32, what string) {
						if got := f.encode(x); got != w {
							t.Fatalf("%s %v: got %#x, want %#x", what, x, got, w)
						}
					}
					check(s*m32, want(even), "tie")
					up := math.Nextafter32(m32, float32(math.Inf(1)))
					down := math.Nextafter32(m32, 0)
					check(s*up, want(i+1), "above tie")
					if vals[i] != float64(down) || i == 0 && down == 0 {
						check(s*down, want(i), "below tie")
					}
				}
			}
		})
	}
}

func TestRandomAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			codes, vals := f.table()
			maxv := vals[len(vals)-1] * 2
			for i := range 200000 {
				var x float32
				switch i % 3 {
				case 0: // any bit pattern
					x = math.Float32frombits(r.Uint32())
				case 1: // the format's range, log-uniform
					x = float32(math.Exp2(r.Float64()*math.Log2(maxv)*2 - math.Log2(maxv)))
					if r.IntN(2) == 0 {
						x = -x
					}
				default: // near a representable value
					j := r.IntN(len(vals))
					x = float32(vals[j] * (1 + (r.Float64()-0.5)*0.01))
				}
				got := f.encode(x)
				if math.IsNaN(float64(x)) {
					require.True(t, math.IsNaN(float64(f.decode(got))), "NaN input %#x gave %#x", math.Float32bits(x), got)
					require.Equal(t, math.Signbit(float64(x)), got>>(f.bits-1) == 1, "NaN sign")
					continue
				}
				if math.IsInf(float64(x), 0) {
					if f.sat || !f.ieee {
						require.Equal(t, f.overflow(x < 0), got)
					} else {
						require.True(t, math.IsInf(float64(f.decode(got)), int(math.Copysign(1, float64(x)))))
					}
					continue
				}
				if want := f.refEncode(float64(x), codes, vals); got != want {
					t.Fatalf("input %v (%#x): got %#x, want %#x", x, math.Float32bits(x), got, want)
				}
			}
		})
	}
}

func TestSpecialValues(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	assert.Equal(t, F16PosInf, F32ToF16(inf))
	assert.Equal(t, F16NegInf, F32ToF16(-inf))
	assert.Equal(t, F16PosInf, F32ToF16(65520))
	assert.Equal(t, F16Max, F32ToF16(65519.996))
	assert.Equal(t, uint16(0x0001), F32ToF16(float32(math.Ldexp(1, -24))))
	assert.Equal(t, uint16(0x0000), F32ToF16(float32(math.Ldexp(1, -25))), "tie to even zero")
	assert.Equal(t, uint16(0x0001), F32ToF16(math.Nextafter32(float32(math.Ldexp(1, -25)), 1)))
	assert.True(t, math.IsNaN(float64(F16ToF32(F32ToF16(nan)))))
	// A signalling-NaN payload in the low bits only must not become Inf.
	snan := math.Float32frombits(0x7f800001)
	assert.Equal(t, uint16(0x7e00), F32ToF16(snan))
	assert.Equal(t, uint16(0x7fc0), F32ToBF16(snan))
	assert.Equal(t, uint16(0xffc0), F32ToBF16(-snan))
	assert.Equal(t, BF16PosInf, F32ToBF16(inf))
	assert.Equal(t, BF16PosInf, F32ToBF16(math.MaxFloat32))
	assert.Equal(t, BF16Max, F32ToBF16(BF16ToF32(BF16Max)))
	assert.Equal(t, uint16(0x3f80), F32ToBF16(1.00390625), "tie 1+2^-8 rounds to even 1")
	assert.Equal(t, uint16(0x3f82), F32ToBF16(1.01171875), "tie 1+3·2^-8 rounds to even")

	assert.Equal(t, float32(448), E4M3FNToF32(E4M3FNMax))
	assert.Equal(t, E4M3FNMax, F32ToE4M3FN(464), "464 ties to even 448")
	assert.Equal(t, E4M3FNNaN, F32ToE4M3FN(464.1))
	assert.Equal(t, uint8(0xff), F32ToE4M3FN(-1000))
	assert.Equal(t, E4M3FNNaN, F32ToE4M3FN(inf))
	assert.Equal(t, E4M3FNMax, F32ToE4M3FNSat(1e30))
	assert.Equal(t, uint8(0xfe), F32ToE4M3FNSat(-inf))
	assert.Equal(t, E4M3FNNaN, F32ToE4M3FNSat(nan))
	assert.Equal(t, float32(math.Ldexp(1, -9)), E4M3FNToF32(1))

	assert.Equal(t, float32(57344), E5M2ToF32(E5M2Max))
	assert.Equal(t, E5M2PosInf, F32ToE5M2(61440))
	assert.Equal(t, E5M2Max, F32ToE5M2(61439))
	assert.Equal(t, E5M2Max, F32ToE5M2Sat(inf))
	assert.Equal(t, E5M2NaN, F32ToE5M2(nan))
	assert.True(t, math.IsInf(float64(E5M2ToF32(0xfc)), -1))
}

func TestSliceHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	src := make([]float32, 1001)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 100)
	}
	b16 := make([]byte, 2*len(src))
	out := make([]float32, len(src))

	require.Equal(t, len(src), EncodeF16(b16, src))
	require.Equal(t, len(src), DecodeF16(out, b16))
	for i, x := range src {
		require.Equal(t, F16ToF32(F32ToF16(x)), out[i])
		require.Equal(t, F32ToF16(x), uint16(b16[2*i])|uint16(b16[2*i+1])<<8, "little-endian")
	}
	require.Equal(t, len(src), EncodeBF16(b16, src))
	require.Equal(t, len(src), DecodeBF16(out, b16))
	for i, x := range src {
		require.Equal(t, BF16ToF32(F32ToBF16(x)), out[i])
	}
	b8 := make([]byte, len(src))
	require.Equal(t, len(src), EncodeE4M3FN(b8, src))
	require.Equal(t, len(src), DecodeE4M3FN(out, b8))
	for i, x := range src {
		require.Equal(t, F32ToE4M3FN(x), b8[i])
		if !math.IsNaN(float64(out[i])) {
			require.Equal(t, E4M3FNToF32(F32ToE4M3FN(x)), out[i])
		}
	}
	require.Equal(t, len(src), EncodeE4M3FNSat(b8, src))
	for i, x := range src {
		require.Equal(t, F32ToE4M3FNSat(x), b8[i])
	}
	require.Equal(t, len(src), EncodeE5M2(b8, src))
	require.Equal(t, len(src), DecodeE5M2(out, b8))
	for i, x := range src {
		require.Equal(t, E5M2ToF32(F32ToE5M2(x)), out[i])
	}

	u := make([]uint16, len(src))
	F32ToF16Slice(u, src)
	F16ToF32Slice(out, u)
	for i, x := range src {
		require.Equal(t, F16ToF32(F32ToF16(x)), out[i])
	}
	F32ToBF16Slice(u, src)
	BF16ToF32Slice(out, u)
	for i, x := range src {
		require.Equal(t, BF16ToF32(F32ToBF16(x)), out[i])
	}
	// Short destinations convert only what fits.
	require.Equal(t, 3, EncodeF16(make([]byte, 7), src))
	require.Equal(t, 2, DecodeF16(make([]float32, 2), b16))
}

func BenchmarkEncodeF16(b *testing.B) {
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(i) * 0.37
	}
	dst := make([]byte, 2*len(src))
	b.SetBytes(int64(4 * len(src)))
	b.ReportAllocs()
	for b.Loop() {
		EncodeF16(dst, src)
	}
}

func BenchmarkDecodeF16(b *testing.B) {
	src := make([]byte, 8192)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]float32, 4096)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		DecodeF16(dst, src)
	}
}
