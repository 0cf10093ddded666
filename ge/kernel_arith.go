package ge

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
)

// Element-wise arithmetic beyond Add/Sub/Mul/Div: Pow, Max, Min and PRelu
// (numpy broadcasting), the comparisons Equal/Less/Greater (bool output)
// and Where. The arithmetic ops also take int32/int64, as ONNX shape
// computations use them.
const (
	OpPow     OpType = 50
	OpMax     OpType = 51
	OpMin     OpType = 52
	OpEqual   OpType = 53
	OpLess    OpType = 54
	OpGreater OpType = 55
	OpWhere   OpType = 56
	OpPRelu   OpType = 57
)

func init() {
	for _, op := range []struct {
		t OpType
		n string
	}{{OpMax, "Max"}, {OpMin, "Min"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 2, maxIn: 2, infer: inferBinary, kernel: binaryKernel})
	}
	registerOp(OpPow, &opSpec{name: "Pow", minIn: 2, maxIn: 2, infer: inferPow, kernel: binaryKernel})
	registerOp(OpPRelu, &opSpec{name: "PRelu", minIn: 2, maxIn: 2, infer: inferPRelu, kernel: binaryKernel})
	for _, op := range []struct {
		t OpType
		n string
	}{{OpEqual, "Equal"}, {OpLess, "Less"}, {OpGreater, "Greater"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 2, maxIn: 2, infer: inferCompare, kernel: compareKernel})
	}
	registerOp(OpWhere, &opSpec{name: "Where", minIn: 3, maxIn: 3, infer: inferWhere, kernel: whereKernel})
}

// Pow returns a^b, Max and Min the element-wise extremes (NaN wins), all
// with numpy broadcasting. Pow's exponent may have another numeric type
// than the base; the result has the base's type.
func (g *Graph) Pow(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpPow, []*Tensor{a, b}, nil, opts)
}

// Max returns the element-wise maximum of a and b (NaN if either is NaN).
func (g *Graph) Max(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpMax, []*Tensor{a, b}, nil, opts)
}

// Min returns the element-wise minimum of a and b (NaN if either is NaN).
func (g *Graph) Min(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpMin, []*Tensor{a, b}, nil, opts)
}

// PRelu returns x where x >= 0 and slope·x elsewhere; slope broadcasts to x.
func (g *Graph) PRelu(x, slope *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpPRelu, []*Tensor{x, slope}, nil, opts)
}

// Compare returns the bool tensor a op b for op OpEqual, OpLess,
// OpGreater, OpLessEqual or OpGreaterEqual, with numpy broadcasting.
func (g *Graph) Compare(op OpType, a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(op, []*Tensor{a, b}, nil, opts)
}

// Where returns x where cond is true and y elsewhere (all three broadcast).
func (g *Graph) Where(cond, x, y *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpWhere, []*Tensor{cond, x, y}, nil, opts)
}

func inferPRelu(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	out, err := inferBinary(in, a)
	if err != nil {
		return nil, err
	}
	if !isReal(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want float32, float16, bfloat16 or float64", in[0].DataType)}
	}
	if !dimsEqual(out[0].Dims, in[0].Dims) {
		return nil, fmt.Errorf("slope %s does not broadcast to x %s", dimsString(in[1].Dims), dimsString(in[0].Dims))
	}
	return out, nil
}

func inferCompare(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if err := sameType(in); err != nil {
		return nil, err
	}
	dt := in[0].DataType
	if !isNumeric(dt) && dt != acl.Bool {
		return nil, &dtypeError{fmt.Sprintf("cannot compare %s", dt)}
	}
	dims, err := broadcastDims(in[0].Dims, in[1].Dims)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: acl.Bool, Format: in[0].Format, Dims: dims}}, nil
}

func inferWhere(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if in[0].DataType != acl.Bool {
		return nil, &dtypeError{fmt.Sprintf("condition has data type %s, want bool", in[0].DataType)}
	}
	if err := sameType(in[1:]); err != nil {
		return nil, err
	}
	dims, err := broadcastAll(in[0].Dims, in[1].Dims, in[2].Dims)
	if err != nil {
		return nil, err
	}
	if len(dims) > MaxRank {
		return nil, fmt.Errorf("output rank %d exceeds %d", len(dims), MaxRank)
	}
	return []TensorDesc{{DataType: in[1].DataType, Format: in[1].Format, Dims: dims}}, nil
}

// intBinaryKernel runs the two-input ops on bool and integer tensors
// (Add ... Min, Mod, And/Or/Xor, BitShift) in int64, uint64 for uint64
// (see intBinOp): division truncates toward zero, division by zero fails
// the task (the device raises an exception), Pow with a negative exponent
// is 0 unless the base is ±1; results wrap into the output type.
func intBinaryKernel(t *Task, args [][]byte) error {
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	a := intsOf(ad.DataType, args[0], prod(ad.Dims))
	b := intsOf(bd.DataType, args[1], prod(bd.Dims))
	out := make([]int64, prod(od.Dims))
	unsigned, fmod := ad.DataType == acl.Uint64, t.Attrs.Bool(AttrFmod)
	left, bits := t.Attrs.Bool(AttrShiftLeft), ad.DataType.Bits()
	var err error
	bcastWalk(od.Dims, [][]int64{ad.Dims, bd.Dims}, func(i int, o []int) {
		if err != nil {
			return
		}
		var e error
		if out[i], e = intBinOp(t.Op, a[o[0]], b[o[1]], unsigned, fmod, left, bits); e != nil {
			err = kernelError(t, "%v at element %d", e, i)
		}
	})
	if err != nil {
		return err
	}
	storeInts(od.DataType, args[2], out)
	return nil
}

func ipow(x, y int64) int64 {
	if y < 0 {
		switch x {
		case 1:
			return 1
		case -1:
			if y%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := int64(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// floatBinOp is the scalar form of the float binary ops (binLoop's fast
// loops cover Add/Sub/Mul/Div): f64BinOp's, rounded once (a float64
// product or comparison of two float32 values is exact, so the result is
// float32 arithmetic's).
func floatBinOp(op OpType, x, y float32) float32 {
	return float32(f64BinOp(op, float64(x), float64(y), false))
}

func compareKernel(t *Task, args [][]byte) error {
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	na, nb := prod(ad.Dims), prod(bd.Dims)
	out := args[2]
	if compareFlat(t.Op, ad.DataType, bd.DataType, na, nb, prod(od.Dims), args[0], args[1], out) {
		return nil
	}
	return compareBroadcast(t, args)
}

// compareBroadcast is compareKernel's general path: any types, numpy
// broadcasting, inputs widened to float64 or int64.
func compareBroadcast(t *Task, args [][]byte) error {
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	na, nb := prod(ad.Dims), prod(bd.Dims)
	out := args[2]
	ins := [][]int64{ad.Dims, bd.Dims}
	if isReal(ad.DataType) {
		a, b := f64sOf(ad.DataType, args[0], na), f64sOf(bd.DataType, args[1], nb)
		bcastWalk(od.Dims, ins, func(i int, o []int) { out[i] = b2u(cmp(t.Op, a[o[0]], b[o[1]])) })
		return nil
	}
	a, b := intsOf(ad.DataType, args[0], na), intsOf(bd.DataType, args[1], nb)
	if ad.DataType == acl.Uint64 {
		// Flipping the sign bit maps uint64 order onto int64 order.
		for i := range a {
			a[i] ^= math.MinInt64
		}
		for i := range b {
			b[i] ^= math.MinInt64
		}
	}
	bcastWalk(od.Dims, ins, func(i int, o []int) { out[i] = b2u(cmp(t.Op, a[o[0]], b[o[1]])) })
	return nil
}

// compareFlat is compareKernel without broadcasting strides or widened
// copies, for the common cases (one type of float32, int64 or int32; each
// input the output's size or one element): it compares in place, as the
// general path would after widening (exactly, both ways), and allocates
// nothing. It reports false, writing nothing, for any other case.
func compareFlat(op OpType, da, db acl.DataType, na, nb, n int, a, b, out []byte) bool {
	if da != db || (na != n && na != 1) || (nb != n && nb != 1) {
		return false
	}
	sa, sb := 1, 1
	if na == 1 {
		sa = 0
	}
	if nb == 1 {
		sb = 0
	}
	switch da {
	case acl.Float32:
		for i := range n {
			x := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i*sa:]))
			y := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i*sb:]))
			out[i] = b2u(cmp(op, float64(x), float64(y)))
		}
	case acl.Int64:
		for i := range n {
			x, y := int64(binary.LittleEndian.Uint64(a[8*i*sa:])), int64(binary.LittleEndian.Uint64(b[8*i*sb:]))
			out[i] = b2u(cmp(op, x, y))
		}
	case acl.Int32:
		for i := range n {
			x, y := int32(binary.LittleEndian.Uint32(a[4*i*sa:])), int32(binary.LittleEndian.Uint32(b[4*i*sb:]))
			out[i] = b2u(cmp(op, int64(x), int64(y)))
		}
	default:
		return false
	}
	return true
}

func cmp[T int64 | float64](op OpType, x, y T) bool {
	switch op {
	case OpEqual:
		return x == y
	case OpLess:
		return x < y
	case OpLessEqual:
		return x <= y
	case OpGreaterEqual:
		return x >= y
	}
	return x > y
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func whereKernel(t *Task, args [][]byte) error {
	cd, xd, yd, od := t.Inputs[0], t.Inputs[1], t.Inputs[2], t.Outputs[0]
	es := od.DataType.Size()
	c, x, y, out := args[0], args[1], args[2], args[3]
	r := len(od.Dims)
	if r == 0 || r > maxStackRank {
		bcastWalk(od.Dims, [][]int64{cd.Dims, xd.Dims, yd.Dims}, func(i int, o []int) {
			if c[o[0]] != 0 {
				copy(out[i*es:(i+1)*es], x[o[1]*es:])
			} else {
				copy(out[i*es:(i+1)*es], y[o[2]*es:])
			}
		})
		return nil
	}
	// Rows of the last dim, an odometer over the rest (strides on the
	// stack); 4-byte elements are moved as uint32.
	var sc, sx, sy, idx [maxStackRank]int
	stridesInto(sc[:r], cd.Dims, od.Dims)
	stridesInto(sx[:r], xd.Dims, od.Dims)
	stridesInto(sy[:r], yd.Dims, od.Dims)
	row := int(od.Dims[r-1])
	n := prod(od.Dims)
	x32, y32, o32 := viewU32(x, es), viewU32(y, es), viewU32(out, es)
	lc, lx, ly := sc[r-1], sx[r-1], sy[r-1]
	oc, ox, oy := 0, 0, 0
	for o := 0; o < n; o += row {
		if x32 != nil && y32 != nil && o32 != nil {
			dst := o32[o : o+row]
			for j := range dst {
				if c[oc+j*lc] != 0 {
					dst[j] = x32[ox+j*lx]
				} else {
					dst[j] = y32[oy+j*ly]
				}
			}
		} else {
			for j := range row {
				if c[oc+j*lc] != 0 {
					copy(out[(o+j)*es:(o+j+1)*es], x[(ox+j*lx)*es:])
				} else {
					copy(out[(o+j)*es:(o+j+1)*es], y[(oy+j*ly)*es:])
				}
			}
		}
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			oc, ox, oy = oc+sc[d], ox+sx[d], oy+sy[d]
			if idx[d] < int(od.Dims[d]) {
				break
			}
			oc, ox, oy = oc-sc[d]*idx[d], ox-sx[d]*idx[d], oy-sy[d]*idx[d]
			idx[d] = 0
		}
	}
	return nil
}
