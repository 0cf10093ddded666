package hccltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/hccl"
)

// reducibleTypes are the types reductions accept (hccl.DataType.Reducible;
// PROD of int16 and bf16 is refused, see ReducibleBy).
var reducibleTypes = []hccl.DataType{hccl.Int8, hccl.Int16, hccl.Int32, hccl.Int64, hccl.Float16, hccl.BFloat16, hccl.Float32}

type kind int

const (
	kSigned kind = iota
	kUnsigned
	kFloat
	kBytes
)

func kindOf(dt hccl.DataType) kind {
	switch dt {
	case hccl.Int8, hccl.Int16, hccl.Int32, hccl.Int64:
		return kSigned
	case hccl.Uint8, hccl.Uint16, hccl.Uint32, hccl.Uint64:
		return kUnsigned
	case hccl.Float16, hccl.BFloat16, hccl.Float32, hccl.Float64:
		return kFloat
	}
	return kBytes
}

func bits(dt hccl.DataType) uint { return uint(dt.Size()) * 8 }

func getU(dt hccl.DataType, b []byte, i int) uint64 {
	switch dt.Size() {
	case 1:
		return uint64(b[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	default:
		return binary.LittleEndian.Uint64(b[8*i:])
	}
}

func putU(dt hccl.DataType, b []byte, i int, v uint64) {
	switch dt.Size() {
	case 1:
		b[i] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

func getI(dt hccl.DataType, b []byte, i int) int64 {
	u := getU(dt, b, i)
	sh := 64 - bits(dt)
	return int64(u<<sh) >> sh
}

func getF(dt hccl.DataType, b []byte, i int) float64 {
	switch dt {
	case hccl.Float16:
		return float64(floatx.F16ToF32(uint16(getU(dt, b, i))))
	case hccl.BFloat16:
		return float64(floatx.BF16ToF32(uint16(getU(dt, b, i))))
	case hccl.Float32:
		return float64(math.Float32frombits(uint32(getU(dt, b, i))))
	default:
		return math.Float64frombits(getU(dt, b, i))
	}
}

// fmtParams returns the significand bits, minimum normal exponent and
// largest finite value of a float type.
func fmtParams(dt hccl.DataType) (mbits int, emin int, maxFinite float64) {
	switch dt {
	case hccl.Float16:
		return 10, -14, 65504
	case hccl.BFloat16:
		return 7, -126, (2 - math.Ldexp(1, -7)) * math.Ldexp(1, 127)
	case hccl.Float32:
		return 23, -126, math.MaxFloat32
	default:
		return 52, -1022, math.MaxFloat64
	}
}

// quantum is the spacing of dt's values around |v| (one ulp).
func quantum(dt hccl.DataType, v float64) float64 {
	mbits, emin, _ := fmtParams(dt)
	e := emin
	if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		_, exp := math.Frexp(math.Abs(v))
		if exp-1 > e {
			e = exp - 1
		}
	}
	return math.Ldexp(1, e-mbits)
}

// roundTo rounds v to the nearest value of dt, ties to even, in one step.
func roundTo(dt hccl.DataType, v float64) float64 {
	if dt == hccl.Float64 || v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	if dt == hccl.Float32 {
		return float64(float32(v)) // Go converts float64 → float32 with one rounding
	}
	_, _, maxF := fmtParams(dt)
	q := quantum(dt, v)
	r := math.RoundToEven(v/q) * q
	if math.Abs(r) > maxF {
		return math.Copysign(math.Inf(1), v)
	}
	return r
}

// putF stores v, which must already be a value of dt.
func putF(dt hccl.DataType, b []byte, i int, v float64) {
	switch dt {
	case hccl.Float16:
		putU(dt, b, i, uint64(floatx.F32ToF16(float32(v))))
	case hccl.BFloat16:
		putU(dt, b, i, uint64(floatx.F32ToBF16(float32(v))))
	case hccl.Float32:
		putU(dt, b, i, uint64(math.Float32bits(float32(v))))
	default:
		putU(dt, b, i, math.Float64bits(v))
	}
}

// randBytes returns n random bytes.
func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// genReduce returns count random elements of dt for a reduction with op over
// n ranks, in ranges where the exact result is representable (no integer
// overflow, no float overflow).
func genReduce(rng *rand.Rand, dt hccl.DataType, op hccl.ReduceOp, n, count int) []byte {
	b := make([]byte, count*int(dt.Size()))
	switch kindOf(dt) {
	case kSigned:
		maxV := int64(1)<<(bits(dt)-1) - 1
		lim := maxV
		switch op {
		case hccl.Sum:
			lim = maxV / int64(n)
		case hccl.Prod:
			lim = rootBound(float64(maxV), n)
		}
		for i := 0; i < count; i++ {
			var v int64
			if lim == maxV {
				v = int64(rng.Uint64()) // full range
			} else {
				v = rng.Int64N(2*lim+1) - lim
			}
			putU(dt, b, i, uint64(v))
		}
	case kUnsigned:
		maxV := uint64(1)<<bits(dt) - 1
		if bits(dt) == 64 {
			maxV = math.MaxUint64
		}
		lim := maxV
		switch op {
		case hccl.Sum:
			lim = maxV / uint64(n)
		case hccl.Prod:
			lim = uint64(rootBound(float64(maxV), n))
		}
		for i := 0; i < count; i++ {
			var v uint64
			if lim == maxV {
				v = rng.Uint64()
			} else {
				v = rng.Uint64N(lim + 1)
			}
			putU(dt, b, i, v)
		}
	case kFloat:
		for i := 0; i < count; i++ {
			var v float64
			switch op {
			case hccl.Prod:
				v = math.Ldexp(1+rng.Float64(), -rng.IntN(2)) // [0.5, 2)
				if rng.IntN(2) == 0 {
					v = -v
				}
			default:
				scale := 100.0
				if dt == hccl.Float16 || dt == hccl.BFloat16 {
					scale = 8
				}
				v = (rng.Float64()*2 - 1) * scale
			}
			putF(dt, b, i, roundTo(dt, v))
		}
	}
	return b
}

// rootBound is the largest b ≥ 1 with b^n ≤ maxV, with margin, capped.
func rootBound(maxV float64, n int) int64 {
	b := math.Floor(math.Pow(maxV, 1/float64(n)))
	b = math.Min(b, 1<<20)
	for b > 1 && math.Pow(b, float64(n)) > maxV*(1-1e-9) {
		b--
	}
	return int64(math.Max(b, 1))
}

// reduceRef computes the reduction of the inputs (one per rank) in exact
// integer arithmetic or in float64, rounding once to dt. It returns the
// encoded result and, for floats, the per-element tolerance.
func reduceRef(dt hccl.DataType, op hccl.ReduceOp, ins [][]byte, count int) (want []byte, tol []float64) {
	want = make([]byte, count*int(dt.Size()))
	n := len(ins)
	switch kindOf(dt) {
	case kSigned:
		for i := 0; i < count; i++ {
			acc := getI(dt, ins[0], i)
			for r := 1; r < n; r++ {
				acc = combineI(op, acc, getI(dt, ins[r], i))
			}
			putU(dt, want, i, uint64(acc))
		}
	case kUnsigned:
		for i := 0; i < count; i++ {
			acc := getU(dt, ins[0], i)
			for r := 1; r < n; r++ {
				acc = combineU(op, acc, getU(dt, ins[r], i))
			}
			putU(dt, want, i, acc)
		}
	case kFloat:
		tol = make([]float64, count)
		// Backends accumulate fp16/bf16/fp32 in fp32 and fp64 in fp64.
		eps := math.Ldexp(1, -24)
		if dt == hccl.Float64 {
			eps = math.Ldexp(1, -53)
		}
		for i := 0; i < count; i++ {
			acc := getF(dt, ins[0], i)
			abs := math.Abs(acc)
			for r := 1; r < n; r++ {
				x := getF(dt, ins[r], i)
				acc = combineF(op, acc, x)
				abs += math.Abs(x)
			}
			ref := roundTo(dt, acc)
			putF(dt, want, i, ref)
			switch op {
			case hccl.Sum:
				tol[i] = quantum(dt, ref) + float64(n)*eps*abs
			case hccl.Prod:
				tol[i] = quantum(dt, ref) + float64(n)*eps*math.Abs(acc)
			}
		}
	}
	return want, tol
}

func combineI(op hccl.ReduceOp, a, b int64) int64 {
	switch op {
	case hccl.Sum:
		return a + b
	case hccl.Prod:
		return a * b
	case hccl.Max:
		return max(a, b)
	default:
		return min(a, b)
	}
}

func combineU(op hccl.ReduceOp, a, b uint64) uint64 {
	switch op {
	case hccl.Sum:
		return a + b
	case hccl.Prod:
		return a * b
	case hccl.Max:
		return max(a, b)
	default:
		return min(a, b)
	}
}

func combineF(op hccl.ReduceOp, a, b float64) float64 {
	switch op {
	case hccl.Sum:
		return a + b
	case hccl.Prod:
		return a * b
	case hccl.Max:
		return math.Max(a, b)
	default:
		return math.Min(a, b)
	}
}

// compareReduce returns a description of the first few elements where got
// differs from want by more than the tolerance (nil when they agree).
func compareReduce(dt hccl.DataType, want, got []byte, tol []float64, count int) []string {
	var bad []string
	for i := 0; i < count && len(bad) < 4; i++ {
		if kindOf(dt) != kFloat || tol == nil {
			if getU(dt, want, i) != getU(dt, got, i) {
				bad = append(bad, fmt.Sprintf("[%d] want %s got %s", i, fmtElem(dt, want, i), fmtElem(dt, got, i)))
			}
			continue
		}
		w, g := getF(dt, want, i), getF(dt, got, i)
		if math.IsNaN(g) || math.Abs(w-g) > tol[i] {
			bad = append(bad, fmt.Sprintf("[%d] want %v got %v (tolerance %g)", i, w, g, tol[i]))
		}
	}
	return bad
}

func fmtElem(dt hccl.DataType, b []byte, i int) string {
	switch kindOf(dt) {
	case kSigned:
		return fmt.Sprint(getI(dt, b, i))
	case kUnsigned:
		return fmt.Sprint(getU(dt, b, i))
	default:
		return fmt.Sprint(getF(dt, b, i))
	}
}

// firstDiff describes where two byte slices first differ ("" if equal).
func firstDiff(want, got []byte) string {
	if len(want) != len(got) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("byte %d of %d: want %#02x got %#02x", i, len(want), want[i], got[i])
		}
	}
	return ""
}
