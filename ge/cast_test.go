package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
)

var castTypes = []acl.DataType{acl.Float32, acl.Float16, acl.BFloat16, acl.Float64, acl.Float8E4M3FN, acl.Float8E5M2,
	acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64, acl.Bool}

func isInt(dt acl.DataType) bool {
	switch dt {
	case acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64, acl.Bool:
		return true
	}
	return false
}

// encodeAny stores x in dt: floats rounded to nearest even, ints wrapped.
func encodeAny(dt acl.DataType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case acl.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		case acl.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		case acl.Float16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToF16(x))
		case acl.BFloat16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToBF16(x))
		case acl.Float8E4M3FN:
			b[i] = floatx.F64ToE4M3FNSat(x)
		case acl.Float8E5M2:
			b[i] = floatx.F64ToE5M2(x)
		case acl.Int8, acl.Uint8:
			b[i] = byte(int64(x))
		case acl.Bool:
			if x != 0 {
				b[i] = 1
			}
		case acl.Int16, acl.Uint16:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(int64(x)))
		case acl.Int32, acl.Uint32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int64(x)))
		case acl.Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(x)))
		case acl.Uint64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		default:
			panic("encodeAny: " + dt.String())
		}
	}
	return b
}

// castRef is the expected value of casting the exact value x (of type src)
// to dst, per the documented semantics.
func castRef(src, dst acl.DataType, x float64) float64 {
	switch dst {
	case acl.Bool:
		if x != 0 {
			return 1
		}
		return 0
	case acl.Float32:
		return float64(float32(x))
	case acl.Float64:
		return x
	case acl.Float16:
		return float64(floatx.F16ToF32(floatx.F64ToF16(x)))
	case acl.BFloat16:
		return float64(floatx.BF16ToF32(floatx.F64ToBF16(x)))
	case acl.Float8E4M3FN:
		return float64(floatx.E4M3FNToF32(floatx.F64ToE4M3FN(x)))
	case acl.Float8E5M2:
		return float64(floatx.E5M2ToF32(floatx.F64ToE5M2(x)))
	}
	bits := uint(dst.Size() * 8)
	if isInt(src) { // wrap
		v := int64(x) << (64 - bits)
		if dst == acl.Uint8 {
			return float64(uint64(v) >> (64 - bits))
		}
		return float64(v >> (64 - bits))
	}
	if math.IsNaN(x) {
		return 0
	}
	lo, hi := -math.Pow(2, float64(bits-1)), math.Pow(2, float64(bits-1))-1
	if dst == acl.Uint8 {
		lo, hi = 0, 255
	}
	return math.Max(lo, math.Min(hi, math.Trunc(x)))
}

func TestCast(t *testing.T) {
	r := newRand(t)
	for _, src := range castTypes {
		for _, dst := range castTypes {
			t.Run(fmt.Sprintf("%s->%s", src, dst), func(t *testing.T) {
				var vals []float64
				if isInt(src) {
					vals = []float64{0, 1, -1, 127, -128, 255, 256, 300, -300, 32767, -32768, 70000, -1 << 31, 1<<31 - 1, 1 << 40}
					for range 40 {
						vals = append(vals, float64(r.IntN(2001)-1000))
					}
					if src == acl.Bool {
						vals = []float64{0, 1, 1, 0}
					}
				} else {
					vals = []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1.5, -2.5, 2.9, -2.9, 100.7, 300, -300, 1e5, -1e5, 3e9, -3e9, 1e20, math.NaN(), math.Inf(1), math.Inf(-1)}
					for range 40 {
						vals = append(vals, r.NormFloat64()*math.Pow(10, float64(r.IntN(5))))
					}
				}
				in := encodeAny(src, vals)
				exact := decodeAll(src, in, len(vals))
				g := ge.NewGraph("cast")
				g.Output(g.Cast(g.Data("x", 0, src, []int64{int64(len(vals))}), dst))
				require.NoError(t, g.Err())
				out := runGraph(t, g, [][]byte{in})[0]
				got := decodeAll(dst, out, len(vals))
				for i, x := range exact {
					want := castRef(src, dst, x)
					if math.IsNaN(want) {
						require.True(t, math.IsNaN(got[i]), "element %d: %v -> %v, want NaN", i, x, got[i])
						continue
					}
					require.Equal(t, want, got[i], "element %d: %v", i, x)
				}
			})
		}
	}
}

func TestCastRejectsUnsupportedTypes(t *testing.T) {
	g := ge.NewGraph("cast")
	g.Cast(g.Data("x", 0, acl.Float32, []int64{2}), acl.Complex64, ge.Name("c"))
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(g.Err()))
	require.Contains(t, g.Err().Error(), `node "c" (Cast)`)
}
