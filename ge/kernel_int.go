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

// f64sOf decodes n float values as float64.
func f64sOf(dt acl.DataType, b []byte, n int) []float64 {
	v := make([]float64, n)
	readF64(v, dt, b)
	return v
}

// storeInts writes v in integer type dt (narrowing wraps, as integer
// casts do).
func storeInts(dt acl.DataType, b []byte, v []int64) {
	for i, x := range v {
		writeInt(b, dt, i, x)
	}
}
