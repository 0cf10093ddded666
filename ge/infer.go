package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// dtypeError marks an inference failure caused by an unsupported data type,
// reported as ACL_ERROR_UNSUPPORTED_DATA_TYPE.
type dtypeError struct{ msg string }

func (e *dtypeError) Error() string { return e.msg }

func isFloat(t acl.DataType) bool { return t == acl.Float32 || t == acl.Float16 || t == acl.BFloat16 }

func needFloat(what string, t acl.DataType) error {
	if !isFloat(t) {
		return &dtypeError{fmt.Sprintf("%s has data type %s, want float32, float16 or bfloat16", what, t)}
	}
	return nil
}

func sameType(in []TensorDesc) error {
	for i := 1; i < len(in); i++ {
		if in[i].DataType != in[0].DataType {
			return &dtypeError{fmt.Sprintf("input %d has data type %s, input 0 has %s", i, in[i].DataType, in[0].DataType)}
		}
	}
	return nil
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// broadcastDims applies numpy broadcasting: dims are aligned on the right,
// and each pair must be equal or contain a 1.
func broadcastDims(a, b []int64) ([]int64, error) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := range n {
		da, db := int64(1), int64(1)
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %s and %s do not broadcast", dimsString(a), dimsString(b))
		}
	}
	return out, nil
}

// inferBinary covers the numpy-broadcasting arithmetic ops: float types,
// float64 and the integer types (computed exactly in int64 or uint64).
func inferBinary(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if err := needNumeric("input 0", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	dims, err := broadcastDims(in[0].Dims, in[1].Dims)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func inferSame(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// matmulDims returns m, k, n and the batch dims of a MatMul.
func matmulDims(in []TensorDesc, a Attrs) (m, k, n int64, batch []int64, err error) {
	x, w := in[0].Dims, in[1].Dims
	if len(x) < 2 || len(w) < 2 {
		return 0, 0, 0, nil, fmt.Errorf("inputs must have rank >= 2, got %s and %s", dimsString(x), dimsString(w))
	}
	m, k = x[len(x)-2], x[len(x)-1]
	if a.Bool(AttrTransposeA) {
		m, k = k, m
	}
	k2, n := w[len(w)-2], w[len(w)-1]
	if a.Bool(AttrTransposeB) {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, 0, 0, nil, fmt.Errorf("inner dims %d and %d differ", k, k2)
	}
	batch, err = broadcastDims(x[:len(x)-2], w[:len(w)-2])
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("batch dims: %w", err)
	}
	return m, k, n, batch, nil
}

func inferMatMul(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input 0", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	m, _, n, batch, err := matmulDims(in, a)
	if err != nil {
		return nil, err
	}
	dims := append(batch, m, n)
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// matmulWorkspace stages fp16/bf16 operands and the fp32 accumulator of one
// batch in float32: M·K + K·N + M·N elements.
func matmulWorkspace(in, _ []TensorDesc, a Attrs) []int64 {
	if in[0].DataType == acl.Float32 {
		return nil
	}
	m, k, n, _, err := matmulDims(in, a)
	if err != nil {
		return nil
	}
	return []int64{4 * (m*k + k*n + m*n)}
}

func inferSoftmax(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	if _, err := normAxis(a.Int(AttrAxis, -1), len(in[0].Dims)); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// inferNorm covers LayerNorm (x, gamma, beta) and RMSNorm (x, gamma): the
// affine parameters have shape [last dim of x].
func inferNorm(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	x := in[0].Dims
	if len(x) == 0 {
		return nil, fmt.Errorf("input must have rank >= 1")
	}
	last := x[len(x)-1]
	for i := 1; i < len(in); i++ {
		if len(in[i].Dims) != 1 || in[i].Dims[0] != last {
			return nil, fmt.Errorf("input %d has dims %s, want [%d]", i, dimsString(in[i].Dims), last)
		}
	}
	if eps := a.Float(AttrEpsilon, 1e-5); !(eps >= 0) {
		return nil, fmt.Errorf("epsilon %v must be >= 0", eps)
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

func inferGather(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	p, idx := in[0], in[1]
	if idx.DataType != acl.Int32 && idx.DataType != acl.Int64 {
		return nil, &dtypeError{fmt.Sprintf("indices have data type %s, want int32 or int64", idx.DataType)}
	}
	if len(p.Dims) == 0 {
		return nil, fmt.Errorf("params must have rank >= 1")
	}
	axis, err := normAxis(a.Int(AttrAxis, 0), len(p.Dims))
	if err != nil {
		return nil, err
	}
	dims := append(append(cloneDims(p.Dims[:axis]), idx.Dims...), p.Dims[axis+1:]...)
	if len(dims) > MaxRank {
		return nil, fmt.Errorf("output rank %d exceeds %d", len(dims), MaxRank)
	}
	return []TensorDesc{{DataType: p.DataType, Format: p.Format, Dims: dims}}, nil
}

func inferReshape(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if v, ok := a[AttrShape]; !ok || v.Kind != AttrInts {
		return nil, fmt.Errorf("missing %q attribute", AttrShape)
	}
	shape := a.Ints(AttrShape) // empty: a scalar
	if len(shape) > MaxRank {
		return nil, fmt.Errorf("shape %s: rank exceeds %d", dimsString(shape), MaxRank)
	}
	total := in[0].NumElements()
	dims := cloneDims(shape)
	free, known := -1, int64(1)
	for i, v := range dims {
		switch {
		case v == -1 && free < 0:
			free = i
		case v == 0 && total == 0: // an empty tensor's zero dim (host evaluation only)
		case v <= 0 || v > MaxDim:
			return nil, fmt.Errorf("shape %s: dims must be positive, with at most one -1", dimsString(shape))
		default:
			if total > 0 && v > total/known { // known·v > total, tested without overflow
				return nil, fmt.Errorf("shape %s does not hold %d elements", dimsString(shape), total)
			}
			known *= v
		}
	}
	if free >= 0 {
		if total%known != 0 {
			return nil, fmt.Errorf("shape %s does not hold %d elements", dimsString(shape), total)
		}
		dims[free] = total / known
	}
	if d := (TensorDesc{Dims: dims}); d.NumElements() != total {
		return nil, fmt.Errorf("shape %s does not hold %d elements", dimsString(shape), total)
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// castable lists the types Cast converts between.
func castable(t acl.DataType) bool {
	switch t {
	case acl.Float32, acl.Float16, acl.BFloat16, acl.Float64, acl.Float8E4M3FN, acl.Float8E5M2,
		acl.Int8, acl.Uint8, acl.Int16, acl.Uint16, acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Bool:
		return true
	}
	return false
}

func inferCast(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	dst := acl.DataType(a.Int(AttrDstType, int64(acl.DTUndefined)))
	if !castable(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("cannot cast from %s", in[0].DataType)}
	}
	if !castable(dst) {
		return nil, &dtypeError{fmt.Sprintf("cannot cast to %s", dst)}
	}
	return []TensorDesc{{DataType: dst, Format: in[0].Format, Dims: cloneDims(in[0].Dims)}}, nil
}

func inferConcat(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := sameType(in); err != nil {
		return nil, err
	}
	r := len(in[0].Dims)
	if r == 0 {
		return nil, fmt.Errorf("inputs must have rank >= 1")
	}
	axis, err := normAxis(a.Int(AttrAxis, 0), r)
	if err != nil {
		return nil, err
	}
	dims := cloneDims(in[0].Dims)
	for i := 1; i < len(in); i++ {
		d := in[i].Dims
		if len(d) != r {
			return nil, fmt.Errorf("input %d has rank %d, input 0 has %d", i, len(d), r)
		}
		for j := range d {
			if j != axis && d[j] != dims[j] {
				return nil, fmt.Errorf("input %d dims %s differ from %s outside axis %d", i, dimsString(d), dimsString(in[0].Dims), axis)
			}
		}
		dims[axis] += d[axis]
		if dims[axis] > MaxDim {
			return nil, fmt.Errorf("concatenated dim exceeds %d", int64(MaxDim))
		}
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// sliceBounds resolves begin and size (-1 = to the end) against dims.
func sliceBounds(dims []int64, a Attrs) (begin, size []int64, err error) {
	b, s := a.Ints(AttrBegin), a.Ints(AttrSize)
	if len(b) != len(dims) || len(s) != len(dims) {
		return nil, nil, fmt.Errorf("begin %s and size %s must both have rank %d", dimsString(b), dimsString(s), len(dims))
	}
	begin, size = cloneDims(b), cloneDims(s)
	for i, d := range dims {
		if begin[i] < 0 || begin[i] >= d {
			return nil, nil, fmt.Errorf("begin[%d] = %d out of range [0, %d)", i, begin[i], d)
		}
		if size[i] == -1 {
			size[i] = d - begin[i]
		}
		if size[i] < 1 || size[i] > d-begin[i] {
			return nil, nil, fmt.Errorf("size[%d] = %d out of range [1, %d]", i, s[i], d-begin[i])
		}
	}
	return begin, size, nil
}

func inferSlice(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	_, size, err := sliceBounds(in[0].Dims, a)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: size}}, nil
}
