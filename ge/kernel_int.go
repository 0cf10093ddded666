package ge

import "github.com/ascend-go/cann/acl"

// Integer and mixed-type element access for the ops that take int32/int64
// (shape arithmetic, comparisons, Where): values are widened to int64 or
// float64 with Cast's readers, computed, and narrowed back.

func isInt(t acl.DataType) bool { return t == acl.Int32 || t == acl.Int64 }

// intsOf decodes n integer or bool values as int64.
func intsOf(dt acl.DataType, b []byte, n int) []int64 {
	v := make([]int64, n)
	readInts(v, dt, b)
	return v
}

// f64sOf decodes n float or integer values as float64 (integers above
// 2^53 round).
func f64sOf(dt acl.DataType, b []byte, n int) []float64 {
	v := make([]float64, n)
	if dt == acl.Bool || isInteger(dt) {
		iv := intsOf(dt, b, n)
		for i, x := range iv {
			v[i] = intToF64(dt, x)
		}
		return v
	}
	readF64(v, dt, b)
	return v
}

// writeNum stores x as element i of a float or integer tensor: rounded
// once for floats, truncated toward zero and saturated for integers (NaN
// becomes 0), as Cast does.
func writeNum(b []byte, dt acl.DataType, i int, x float64) {
	if isInteger(dt) {
		writeInt(b, dt, i, floatToInt(x, dt))
		return
	}
	writeFloat(b, dt, i, x)
}

// storeInts writes v in integer type dt (narrowing wraps, as integer
// casts do).
func storeInts(dt acl.DataType, b []byte, v []int64) {
	for i, x := range v {
		writeInt(b, dt, i, x)
	}
}
