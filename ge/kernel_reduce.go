package ge

import (
	"fmt"
	"math"
	"slices"
)

// Reductions over a set of axes, accumulated in float64 and rounded once.
const (
	OpReduceMean OpType = 80
	OpReduceSum  OpType = 81
	OpReduceMax  OpType = 82
	OpReduceMin  OpType = 83
	OpReduceProd OpType = 84
	OpLogSoftmax OpType = 71
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
		{OpReduceMin, "ReduceMin"}, {OpReduceProd, "ReduceProd"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 1, maxIn: 1, attrs: attrs, infer: inferReduce, kernel: reduceKernel})
	}
	registerOp(OpLogSoftmax, &opSpec{name: "LogSoftmax", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferSoftmax, kernel: logSoftmaxKernel})
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
	axes := a.Ints(AttrAxes)
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
		return red, nil
	}
	for _, ax := range axes {
		i, err := normAxis(ax, len(x))
		if err != nil {
			return nil, err
		}
		if red[i] {
			return nil, fmt.Errorf("axis %d repeated", ax)
		}
		red[i] = true
	}
	return red, nil
}

func inferReduce(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
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
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	red, err := reduceAxes(d.Dims, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	x := readFloats(&s, d.DataType, args[0], prod(d.Dims))
	nOut := prod(t.Outputs[0].Dims)
	out := outFloats(&s, t.Outputs[0].DataType, args[1], nOut)
	// Output dims with reduced axes kept as 1, so input strides map to it.
	kept := slices.Clone(d.Dims)
	for i := range kept {
		if red[i] {
			kept[i] = 1
		}
	}
	acc := make([]float64, nOut)
	init := 0.0
	switch t.Op {
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
		v := float64(x[i])
		switch t.Op {
		case OpReduceMean, OpReduceSum:
			acc[o[0]] += v
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
		if t.Op == OpReduceMean {
			v /= cnt
		}
		out[i] = float32(v)
	}
	storeFloats(t.Outputs[0].DataType, args[1], out)
	return nil
}

func logSoftmaxKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), len(d.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
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
