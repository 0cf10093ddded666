package ge

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
)

// Cast semantics (documented on Graph.Cast): float to float rounds once to
// nearest even, e4m3fn without saturation (overflow becomes NaN); float to
// int truncates toward zero, saturates at the target's range and maps NaN to
// 0; int to int wraps (two's complement truncation, as C and numpy); anything
// to bool is value != 0 (NaN is true); bool reads as 0 or 1.

// castChunk is the elements Cast converts per step through its stack
// scratch: small, since Go zeroes the scratch on every call (4096 made a
// one-element Cast, as a Loop counter's, clear 64 KiB per run).
const castChunk = 256

func isIntType(t acl.DataType) bool {
	switch t {
	case acl.Int8, acl.Uint8, acl.Int16, acl.Uint16, acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Bool:
		return true
	}
	return false
}

func castKernel(t *Task, args [][]byte) error {
	src, dst := t.Inputs[0].DataType, t.Outputs[0].DataType
	n := prod(t.Inputs[0].Dims)
	ss, ds := src.Size(), dst.Size()
	in, out := args[0], args[1]
	var fv [castChunk]float64
	var iv [castChunk]int64
	for base := 0; base < n; base += castChunk {
		c := min(castChunk, n-base)
		sb, db := in[base*ss:(base+c)*ss], out[base*ds:(base+c)*ds]
		if src == acl.Uint64 && !isIntType(dst) {
			// uint64 above 2^63 has no int64 form: widen to float64
			// directly (exact below 2^53, rounded once above).
			for i := range c {
				fv[i] = float64(binary.LittleEndian.Uint64(sb[8*i:]))
			}
			writeFromF64(db, dst, fv[:c])
		} else if isIntType(src) {
			readInts(iv[:c], src, sb)
			writeFromInts(db, dst, iv[:c])
		} else {
			readF64(fv[:c], src, sb)
			writeFromF64(db, dst, fv[:c])
		}
	}
	return nil
}

func readInts(v []int64, t acl.DataType, b []byte) {
	for i := range v {
		switch t {
		case acl.Int8:
			v[i] = int64(int8(b[i]))
		case acl.Uint8:
			v[i] = int64(b[i])
		case acl.Bool:
			v[i] = boolInt(b[i] != 0)
		case acl.Int16:
			v[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Uint16:
			v[i] = int64(binary.LittleEndian.Uint16(b[2*i:]))
		case acl.Int32:
			v[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Uint32:
			v[i] = int64(binary.LittleEndian.Uint32(b[4*i:]))
		case acl.Int64, acl.Uint64: // uint64: the bit pattern
			v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
}

func readF64(v []float64, t acl.DataType, b []byte) {
	for i := range v {
		switch t {
		case acl.Float32:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case acl.Float64:
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case acl.Float16:
			v[i] = float64(floatx.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.BFloat16:
			v[i] = float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case acl.Float8E4M3FN:
			v[i] = float64(floatx.E4M3FNToF32(b[i]))
		case acl.Float8E5M2:
			v[i] = float64(floatx.E5M2ToF32(b[i]))
		}
	}
}

func writeInt(b []byte, t acl.DataType, i int, x int64) {
	switch t {
	case acl.Int8, acl.Uint8:
		b[i] = byte(x)
	case acl.Bool:
		b[i] = 0
		if x != 0 {
			b[i] = 1
		}
	case acl.Int16, acl.Uint16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	case acl.Int32, acl.Uint32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	case acl.Int64, acl.Uint64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
}

func writeFloat(b []byte, t acl.DataType, i int, x float64) {
	switch t {
	case acl.Float32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	case acl.Float64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	case acl.Float16:
		binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToF16(x))
	case acl.BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToBF16(x))
	case acl.Float8E4M3FN:
		b[i] = floatx.F64ToE4M3FN(x)
	case acl.Float8E5M2:
		b[i] = floatx.F64ToE5M2(x)
	}
}

func writeFromInts(b []byte, t acl.DataType, v []int64) {
	for i, x := range v {
		switch {
		case isIntType(t):
			writeInt(b, t, i, x)
		case t == acl.Float32:
			// int64 → float32 directly: one correct rounding.
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		default:
			writeFloat(b, t, i, float64(x))
		}
	}
}

// intRange is the representable range of an integer type.
func intRange(t acl.DataType) (lo, hi float64) {
	switch t {
	case acl.Int8:
		return math.MinInt8, math.MaxInt8
	case acl.Uint8:
		return 0, math.MaxUint8
	case acl.Int16:
		return math.MinInt16, math.MaxInt16
	case acl.Uint16:
		return 0, math.MaxUint16
	case acl.Int32:
		return math.MinInt32, math.MaxInt32
	case acl.Uint32:
		return 0, math.MaxUint32
	case acl.Uint64:
		return 0, 1 << 64
	}
	return math.MinInt64, math.MaxInt64
}

func writeFromF64(b []byte, t acl.DataType, v []float64) {
	for i, x := range v {
		switch {
		case t == acl.Bool:
			writeInt(b, t, i, boolInt(x != 0))
		case isIntType(t):
			writeInt(b, t, i, floatToInt(x, t))
		default:
			writeFloat(b, t, i, x)
		}
	}
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// floatToInt truncates toward zero and saturates; NaN becomes 0.
func floatToInt(x float64, t acl.DataType) int64 {
	if x != x {
		return 0
	}
	lo, hi := intRange(t)
	x = math.Trunc(x)
	switch {
	case x <= lo:
		if t == acl.Int64 {
			return math.MinInt64
		}
		return int64(lo)
	case x >= hi:
		switch t {
		case acl.Int64:
			return math.MaxInt64 // float64(MaxInt64) rounds up to 2^63
		case acl.Uint64:
			return -1 // all ones: MaxUint64
		}
		return int64(hi)
	case t == acl.Uint64 && x >= 1<<63:
		return int64(uint64(x))
	}
	return int64(x)
}
