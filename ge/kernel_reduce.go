package ge

import (
	"fmt"
	"math"
	"slices"

	"github.com/ascend-go/cann/acl"
)

// Reductions over a set of axes, accumulated in float64 and rounded once
// (integers truncate toward zero).
const (
	OpReduceMean OpType = 80
	OpReduceSum  OpType = 81
	OpReduceMax  OpType = 82
	OpReduceMin  OpType = 83
	OpReduceProd OpType = 84
	OpLogSoftmax OpType = 71

	// ONNX's other reductions: ReduceL1 sums |x|, ReduceL2 is
	// sqrt(Σ x²), ReduceLogSum log(Σ x), ReduceLogSumExp log(Σ exp(x))
	// (shifted by the maximum, so it does not overflow) and
	// ReduceSumSquare Σ x².
	OpReduceL1        OpType = 500
	OpReduceL2        OpType = 501
	OpReduceLogSum    OpType = 502
	OpReduceLogSumExp OpType = 503
	OpReduceSumSquare OpType = 504
)

// Attributes of the reductions.
const (
	AttrAxes     = "axes"     // ints: the axes to reduce (negative from the end); absent or empty: all
	AttrKeepDims = "keepdims" // bool: keep reduced axes as size 1
)

func init() {
	attrs := map[string]AttrKind{AttrAxes: AttrInts, AttrKeepDims: AttrBool}
	for _, op := range []struct {
		t OpType
		n string
	}{{OpReduceMean, "ReduceMean"}, {OpReduceSum, "ReduceSum"}, {OpReduceMax, "ReduceMax"},
		{OpReduceMin, "ReduceMin"}, {OpReduceProd, "ReduceProd"}, {OpReduceL1, "ReduceL1"}, {OpReduceL2, "ReduceL2"},
		{OpReduceLogSum, "ReduceLogSum"}, {OpReduceLogSumExp, "ReduceLogSumExp"}, {OpReduceSumSquare, "ReduceSumSquare"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 1, maxIn: 1, attrs: attrs, infer: inferReduce, kernel: reduceKernel})
	}
	registerOp(OpLogSoftmax, &opSpec{name: "LogSoftmax", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferLogSoftmax, kernel: logSoftmaxKernel})
}

// Reduce applies a reduction op over axes (nil: all) of x.
func (g *Graph) Reduce(op OpType, x *Tensor, axes []int64, keepDims bool, opts ...OpOption) *Tensor {
	a := Attrs{AttrKeepDims: BoolAttr(keepDims)}
	if axes != nil {
		a[AttrAxes] = IntsAttr(axes)
	}
	return g.single(op, []*Tensor{x}, a, opts)
}

// LogSoftmax returns log(softmax(x)) along axis.
func (g *Graph) LogSoftmax(x *Tensor, axis int, opts ...OpOption) *Tensor {
	return g.single(OpLogSoftmax, []*Tensor{x}, Attrs{AttrAxis: IntAttr(int64(axis))}, opts)
}

// reduceAxes returns a flag per dim of x: reduced or not.
func reduceAxes(x []int64, a Attrs) ([]bool, error) {
	red := make([]bool, len(x))
	if err := reduceAxesInto(red, x, a); err != nil {
		return nil, err
	}
	return red, nil
}

// reduceAxesInto marks the reduced axes of x in red (len(x) values,
// false on entry).
func reduceAxesInto(red []bool, x []int64, a Attrs) error {
	axes := a.Ints(AttrAxes)
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
		return nil
	}
	for _, ax := range axes {
		i, err := normAxis(ax, len(x))
		if err != nil {
			return err
		}
		if red[i] {
			return fmt.Errorf("axis %d repeated", ax)
		}
		red[i] = true
	}
	return nil
}

// reducible reports whether the reductions take type t: the float types,
// float64 and the integers (exact in the float64 accumulator up to 2^53;
// ReduceMean of integers truncates toward zero, as numpy's astype).
func reducible(t acl.DataType) bool {
	return isFloat(t) || t == acl.Float64 || (isIntType(t) && t != acl.Bool)
}

func inferReduce(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !reducible(in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float or integer type", in[0].DataType)}
	}
	red, err := reduceAxes(in[0].Dims, a)
	if err != nil {
		return nil, err
	}
	keep := a.Bool(AttrKeepDims)
	var dims []int64
	for i, d := range in[0].Dims {
		switch {
		case !red[i]:
			dims = append(dims, d)
		case keep:
			dims = append(dims, 1)
		}
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func reduceKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	var redv [maxStackRank]bool
	red := redv[:0]
	if len(d.Dims) > len(redv) {
		red = make([]bool, 0, len(d.Dims))
	}
	red = red[:len(d.Dims)]
	if err := reduceAxesInto(red, d.Dims, t.Attrs); err != nil {
		return kernelError(t, "%v", err)
	}
	nOut := prod(t.Outputs[0].Dims)
	if reduceRowsFast(t, args, red, nOut) {
		return nil
	}
	// Output dims with reduced axes kept as 1, so input strides map to it.
	kept := slices.Clone(d.Dims)
	for i := range kept {
		if red[i] {
			kept[i] = 1
		}
	}
	x := make([]float64, prod(d.Dims))
	if isIntType(d.DataType) {
		iv := make([]int64, len(x))
		readInts(iv, d.DataType, args[0])
		if t.Op != OpReduceL2 && t.Op != OpReduceLogSum && t.Op != OpReduceLogSumExp {
			reduceInts(t.Op, iv, d.Dims, kept, args[1], t.Outputs[0].DataType, nOut)
			return nil
		}
		for i, v := range iv {
			x[i] = float64(v)
		}
	} else {
		readF64(x, d.DataType, args[0])
	}
	acc := make([]float64, nOut)
	init := 0.0
	var shift []float64 // ReduceLogSumExp: the maximum of each output's elements
	switch t.Op {
	case OpReduceLogSumExp:
		shift = make([]float64, nOut)
		for i := range shift {
			shift[i] = math.Inf(-1)
		}
		bcastWalk(d.Dims, [][]int64{kept}, func(i int, o []int) {
			if v := x[i]; v > shift[o[0]] || v != v {
				shift[o[0]] = v
			}
		})
		for i, m := range shift {
			if math.IsInf(m, 0) {
				shift[i] = 0 // all -Inf (or +Inf present): exp handles it unshifted
			}
		}
	case OpReduceMax:
		init = math.Inf(-1)
	case OpReduceMin:
		init = math.Inf(1)
	case OpReduceProd:
		init = 1
	}
	for i := range acc {
		acc[i] = init
	}
	// Walk the input; bcastWalk over the input dims gives, for the kept
	// output (broadcast to the input), the output offset of each element.
	bcastWalk(d.Dims, [][]int64{kept}, func(i int, o []int) {
		v := x[i]
		switch t.Op {
		case OpReduceMean, OpReduceSum, OpReduceLogSum:
			acc[o[0]] += v
		case OpReduceL1:
			acc[o[0]] += math.Abs(v)
		case OpReduceL2, OpReduceSumSquare:
			acc[o[0]] += v * v
		case OpReduceLogSumExp:
			acc[o[0]] += math.Exp(v - shift[o[0]])
		case OpReduceMax:
			if v > acc[o[0]] || v != v {
				acc[o[0]] = v
			}
		case OpReduceMin:
			if v < acc[o[0]] || v != v {
				acc[o[0]] = v
			}
		case OpReduceProd:
			acc[o[0]] *= v
		}
	})
	cnt := float64(prod(d.Dims) / max(nOut, 1))
	for i, v := range acc {
		switch t.Op {
		case OpReduceMean:
			v /= cnt
		case OpReduceL2:
			v = math.Sqrt(v)
		case OpReduceLogSum:
			v = math.Log(v)
		case OpReduceLogSumExp:
			v = math.Log(v) + shift[i]
		}
		acc[i] = v
	}
	// Integers: the float64 result truncates toward zero and saturates.
	writeFromF64(args[1], t.Outputs[0].DataType, acc)
	return nil
}

// reduceInts reduces integers exactly in int64, wrapping on overflow as
// numpy does; ReduceMean divides truncating toward zero.
func reduceInts(op OpType, x []int64, dims, kept []int64, out []byte, dt acl.DataType, nOut int) {
	acc := make([]int64, nOut)
	seen := make([]bool, nOut)
	bcastWalk(dims, [][]int64{kept}, func(i int, o []int) {
		v, k := x[i], o[0]
		switch op {
		case OpReduceMean, OpReduceSum:
			acc[k] += v
		case OpReduceL1:
			if v < 0 {
				v = -v
			}
			acc[k] += v
		case OpReduceSumSquare:
			acc[k] += v * v
		case OpReduceProd:
			if !seen[k] {
				acc[k] = 1
			}
			acc[k] *= v
		case OpReduceMax:
			if !seen[k] || v > acc[k] {
				acc[k] = v
			}
		case OpReduceMin:
			if !seen[k] || v < acc[k] {
				acc[k] = v
			}
		}
		seen[k] = true
	})
	if op == OpReduceMean {
		cnt := int64(len(x) / max(nOut, 1))
		for i := range acc {
			acc[i] /= cnt
		}
	}
	writeFromInts(out, dt, acc)
}

// inferLogSoftmax is Softmax's inference, float64 included (the losses
// of float64 models run LogSoftmax).
func inferLogSoftmax(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if in[0].DataType == acl.Float64 {
		if _, err := normAxis(a.Int(AttrAxis, -1), len(in[0].Dims)); err != nil {
			return nil, err
		}
		return []TensorDesc{cloneDesc(in[0])}, nil
	}
	return inferSoftmax(in, a)
}

func logSoftmaxKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), len(d.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	if d.DataType == acl.Float64 {
		x := readF64s(d, args[0])
		logSoftmax(x, x, prod(d.Dims[:axis]), int(d.Dims[axis]), prod(d.Dims[axis+1:]))
		writeFromF64(args[1], acl.Float64, x)
		return nil
	}
	n := prod(d.Dims)
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], n)
	outer, l, inner := prod(d.Dims[:axis]), int(d.Dims[axis]), prod(d.Dims[axis+1:])
	for o := range outer {
		for i := range inner {
			base := o*l*inner + i
			mx := math.Inf(-1)
			for j := range l {
				mx = math.Max(mx, float64(x[base+j*inner]))
			}
			var sum float64
			for j := range l {
				sum += math.Exp(float64(x[base+j*inner]) - mx)
			}
			ls := math.Log(sum)
			for j := range l {
				out[base+j*inner] = float32(float64(x[base+j*inner]) - mx - ls)
			}
		}
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// logSoftmax writes log(softmax(x)) over the middle dim of [outer, l,
// inner] into out (which may be x).
func logSoftmax(x, out []float64, outer, l, inner int) {
	for o := range outer {
		for i := range inner {
			base := o*l*inner + i
			mx := math.Inf(-1)
			for j := range l {
				mx = math.Max(mx, x[base+j*inner])
			}
			var sum float64
			for j := range l {
				sum += math.Exp(x[base+j*inner] - mx)
			}
			ls := math.Log(sum)
			for j := range l {
				out[base+j*inner] = x[base+j*inner] - mx - ls
			}
		}
	}
}

// reduceRowsFast reduces a float32/float16/bfloat16 tensor over a trailing
// block of axes (LayerNorm written out as ReduceMean over the last axis,
// a global pool as ReduceMean over H and W): each output is one
// contiguous row, read in place and summed in float64 (max and min exact)
// without the general path's float64 copy of the input and per-element
// walk. It reports whether it handled the task.
func reduceRowsFast(t *Task, args [][]byte, red []bool, nOut int) bool {
	d := t.Inputs[0]
	switch t.Op {
	case OpReduceMean, OpReduceSum, OpReduceMax, OpReduceMin, OpReduceSumSquare, OpReduceL1, OpReduceL2:
	default:
		return false
	}
	n := prod(d.Dims)
	if !isFloat(d.DataType) || t.Outputs[0].DataType != d.DataType || nOut == 0 || n == 0 {
		return false
	}
	// Reduced axes must be one contiguous block (size-1 axes do not
	// matter): outer × block × inner.
	first, last := -1, -1
	for i, r := range red {
		if r && d.Dims[i] != 1 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	inner := 1
	if first >= 0 {
		for i := first; i <= last; i++ {
			if !red[i] && d.Dims[i] != 1 {
				return false
			}
		}
		inner = prod(d.Dims[last+1:])
	}
	if inner > 1 {
		return reduceBlockFast(t, args, n, nOut, inner)
	}
	var s scratch
	defer s.release()
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], nOut)
	l := n / nOut
	for o := range out {
		row := x[o*l : (o+1)*l]
		switch t.Op {
		case OpReduceMax, OpReduceMin:
			acc := row[0]
			for _, v := range row[1:] {
				if t.Op == OpReduceMax && (v > acc || v != v) || t.Op == OpReduceMin && (v < acc || v != v) {
					if acc == acc {
						acc = v
					}
				}
			}
			out[o] = acc
			continue
		}
		var acc float64
		switch t.Op {
		case OpReduceSumSquare, OpReduceL2:
			for _, v := range row {
				acc += float64(v) * float64(v)
			}
		case OpReduceL1:
			for _, v := range row {
				acc += math.Abs(float64(v))
			}
		default:
			for _, v := range row {
				acc += float64(v)
			}
		}
		out[o] = reduceFinish(t.Op, acc, l)
	}
	storeFloats(d.DataType, args[1], out)
	return true
}

// reduceBlockFast is reduceRowsFast for a reduced block followed by inner
// kept elements (ReduceMean over H and W of an NHWC tensor): each of the
// block's rows of inner elements is folded into a row of float64 sums (or
// of float32 extremes), in the order of the general path.
func reduceBlockFast(t *Task, args [][]byte, n, nOut, inner int) bool {
	d := t.Inputs[0]
	var s scratch
	defer s.release()
	var ar wordArena
	defer ar.release()
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], nOut)
	outer := nOut / inner
	l := n / nOut
	acc := ar.f64(inner)
	for o := range outer {
		orow := out[o*inner : (o+1)*inner]
		blk := x[o*l*inner : (o+1)*l*inner]
		switch t.Op {
		case OpReduceMax, OpReduceMin:
			copy(orow, blk[:inner])
			for r := 1; r < l; r++ {
				for i, v := range blk[r*inner : (r+1)*inner] {
					a := orow[i]
					if a == a && (t.Op == OpReduceMax && (v > a || v != v) || t.Op == OpReduceMin && (v < a || v != v)) {
						orow[i] = v
					}
				}
			}
			continue
		}
		clear(acc)
		for r := range l {
			row := blk[r*inner : (r+1)*inner]
			switch t.Op {
			case OpReduceSumSquare, OpReduceL2:
				for i, v := range row {
					acc[i] += float64(v) * float64(v)
				}
			case OpReduceL1:
				for i, v := range row {
					acc[i] += math.Abs(float64(v))
				}
			default:
				for i, v := range row {
					acc[i] += float64(v)
				}
			}
		}
		for i, a := range acc {
			orow[i] = reduceFinish(t.Op, a, l)
		}
	}
	storeFloats(d.DataType, args[1], out)
	return true
}

// reduceFinish turns a float64 sum over l elements into the fast paths'
// result: the mean for ReduceMean, the root for ReduceL2, the sum else.
func reduceFinish(op OpType, acc float64, l int) float32 {
	switch op {
	case OpReduceMean:
		acc /= float64(l)
	case OpReduceL2:
		acc = math.Sqrt(acc)
	}
	return float32(acc)
}
