package ge

import (
	"fmt"
	"math"
)

// Normalisations of the nn family, all computed in float64 and rounded
// once: GroupNorm (InstanceNorm is GroupNorm with one channel per group),
// LpNorm (x divided by its p-norm along an axis), LRN (local response
// normalisation across channels), MVN (mean-variance normalisation over
// axes) and BatchNormTrain (batch normalisation with the batch's own
// statistics, also returning the updated running mean and variance).
const (
	OpGroupNorm      OpType = 408
	OpLpNorm         OpType = 409
	OpLRN            OpType = 410
	OpMVN            OpType = 411
	OpBatchNormTrain OpType = 413
)

// Attributes of the nn normalisations.
const (
	AttrNumGroups = "num_groups" // GroupNorm: int
	AttrLRNBeta   = "beta"       // LRN: float exponent
	AttrLRNBias   = "bias"       // LRN: float
	AttrMomentum  = "momentum"   // BatchNormTrain: float, weight of the old running statistics
	mvnEpsilon    = 1e-9         // MVN divides by std + 1e-9, as ONNX's function body
)

func init() {
	registerOp(OpGroupNorm, &opSpec{name: "GroupNorm", minIn: 3, maxIn: 3,
		attrs: map[string]AttrKind{AttrNumGroups: AttrInt, AttrEpsilon: AttrFloat}, infer: inferGroupNorm, kernel: groupNormKernel})
	registerOp(OpLpNorm, &opSpec{name: "LpNorm", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt, AttrP: AttrInt}, infer: inferLpNorm, kernel: lpNormKernel})
	registerOp(OpLRN, &opSpec{name: "LRN", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrSize: AttrInt, AttrAlpha: AttrFloat, AttrLRNBeta: AttrFloat, AttrLRNBias: AttrFloat},
		infer: inferLRN, kernel: lrnKernel})
	registerOp(OpMVN, &opSpec{name: "MVN", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxes: AttrInts}, infer: inferMVN, kernel: mvnKernel})
	registerOp(OpBatchNormTrain, &opSpec{name: "BatchNormTrain", minIn: 5, maxIn: 5,
		attrs: map[string]AttrKind{AttrEpsilon: AttrFloat, AttrMomentum: AttrFloat}, infer: inferBatchNormTrain, kernel: batchNormTrainKernel})
}

// GroupNorm normalises x [N, C, ...] over each group of C/numGroups
// channels (and the spatial dims), then applies scale and bias, each [C]
// (per channel) or [numGroups] (per group).
func (g *Graph) GroupNorm(x, scale, bias *Tensor, numGroups int64, eps float64, opts ...OpOption) *Tensor {
	return g.single(OpGroupNorm, []*Tensor{x, scale, bias}, Attrs{AttrNumGroups: IntAttr(numGroups), AttrEpsilon: FloatAttr(eps)}, opts)
}

func inferGroupNorm(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	if len(x.Dims) < 2 {
		return nil, fmt.Errorf("input %s must be [N, C, ...]", dimsString(x.Dims))
	}
	c := x.Dims[1]
	g := a.Int(AttrNumGroups, 0)
	if g < 1 || c%g != 0 {
		return nil, fmt.Errorf("num_groups %d must divide the %d channels", g, c)
	}
	for i := 1; i < 3; i++ {
		if len(in[i].Dims) != 1 || (in[i].Dims[0] != c && in[i].Dims[0] != g) {
			return nil, fmt.Errorf("input %d has dims %s, want [%d] or [%d]", i, dimsString(in[i].Dims), c, g)
		}
	}
	if eps := a.Float(AttrEpsilon, 1e-5); !(eps >= 0) {
		return nil, fmt.Errorf("epsilon %v must be >= 0", eps)
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

func groupNormKernel(t *Task, args [][]byte) error {
	xd := t.Inputs[0]
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	n, c := int(xd.Dims[0]), int(xd.Dims[1])
	g := int(t.Attrs.Int(AttrNumGroups, 1))
	sc := readNums(xd.DataType, args[1], int(t.Inputs[1].Dims[0]))
	bi := readNums(xd.DataType, args[2], int(t.Inputs[2].Dims[0]))
	eps := t.Attrs.Float(AttrEpsilon, 1e-5)
	inner := prod(xd.Dims[2:])
	cg := c / g
	out := make([]float64, len(x))
	param := func(v []float64, ch int) float64 {
		if len(v) == c {
			return v[ch]
		}
		return v[ch/cg]
	}
	for b := range n {
		for gi := range g {
			lo, hi := (b*c+gi*cg)*inner, (b*c+(gi+1)*cg)*inner
			mean, v := meanVar(x[lo:hi])
			inv := 1 / math.Sqrt(v+eps)
			for ch := gi * cg; ch < (gi+1)*cg; ch++ {
				s, bb := param(sc, ch), param(bi, ch)
				base := (b*c + ch) * inner
				for i := base; i < base+inner; i++ {
					out[i] = (x[i]-mean)*inv*s + bb
				}
			}
		}
	}
	writeFromF64(args[3], xd.DataType, out)
	return nil
}

// meanVar returns the mean and the population variance (two passes).
func meanVar(v []float64) (mean, variance float64) {
	if len(v) == 0 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

// LpNorm divides x by its p-norm (p 1 or 2) along axis.
func (g *Graph) LpNorm(x *Tensor, axis, p int64, opts ...OpOption) *Tensor {
	return g.single(OpLpNorm, []*Tensor{x}, Attrs{AttrAxis: IntAttr(axis), AttrP: IntAttr(p)}, opts)
}

func inferLpNorm(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if p := a.Int(AttrP, 2); p != 1 && p != 2 {
		return nil, fmt.Errorf("p %d: want 1 or 2", p)
	}
	if _, err := normAxis(a.Int(AttrAxis, -1), max(len(x.Dims), 1)); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

// axisLines calls f for each line along axis of dims: the flat offset of
// its first element and the stride between elements.
func axisLines(dims []int64, axis int, f func(base, stride int)) {
	outer, inner := prod(dims[:axis]), prod(dims[axis+1:])
	l := 1
	if axis < len(dims) {
		l = int(dims[axis])
	}
	for o := range outer {
		for i := range inner {
			f(o*l*inner+i, inner)
		}
	}
}

func lpNormKernel(t *Task, args [][]byte) error {
	xd := t.Inputs[0]
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), max(len(xd.Dims), 1))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	p := t.Attrs.Int(AttrP, 2)
	out := make([]float64, len(x))
	l := 1
	if len(xd.Dims) > 0 {
		l = int(xd.Dims[axis])
	}
	axisLines(xd.Dims, axis, func(base, stride int) {
		s := 0.0
		for j := range l {
			v := x[base+j*stride]
			if p == 1 {
				s += math.Abs(v)
			} else {
				s += v * v
			}
		}
		if p == 2 {
			s = math.Sqrt(s)
		}
		for j := range l {
			out[base+j*stride] = x[base+j*stride] / s
		}
	})
	writeFromF64(args[1], xd.DataType, out)
	return nil
}

// LRN normalises x [N, C, ...] by the squares of size neighbouring
// channels: x / (bias + alpha/size·Σx²)^beta.
func (g *Graph) LRN(x *Tensor, size int64, alpha, beta, bias float64, opts ...OpOption) *Tensor {
	return g.single(OpLRN, []*Tensor{x}, Attrs{AttrSize: IntAttr(size), AttrAlpha: FloatAttr(alpha),
		AttrLRNBeta: FloatAttr(beta), AttrLRNBias: FloatAttr(bias)}, opts)
}

func inferLRN(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if len(x.Dims) < 2 {
		return nil, fmt.Errorf("input %s must be [N, C, ...]", dimsString(x.Dims))
	}
	if s := a.Int(AttrSize, 0); s < 1 {
		return nil, fmt.Errorf("size %d must be positive", s)
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

func lrnKernel(t *Task, args [][]byte) error {
	xd := t.Inputs[0]
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	size := int(t.Attrs.Int(AttrSize, 1))
	alpha, beta, bias := t.Attrs.Float(AttrAlpha, 1e-4), t.Attrs.Float(AttrLRNBeta, 0.75), t.Attrs.Float(AttrLRNBias, 1)
	c := int(xd.Dims[1])
	out := make([]float64, len(x))
	lo, hi := (size-1)/2, size/2 // floor((size-1)/2) below, ceil((size-1)/2) above
	axisLines(xd.Dims, 1, func(base, stride int) {
		for ch := range c {
			s := 0.0
			for j := max(0, ch-lo); j <= min(c-1, ch+hi); j++ {
				v := x[base+j*stride]
				s += v * v
			}
			i := base + ch*stride
			out[i] = x[i] / math.Pow(bias+alpha/float64(size)*s, beta)
		}
	})
	writeFromF64(args[1], xd.DataType, out)
	return nil
}

// MVN normalises x to zero mean and unit variance over axes (default
// [0, 2, 3]): (x - mean) / (std + 1e-9).
func (g *Graph) MVN(x *Tensor, axes []int64, opts ...OpOption) *Tensor {
	return g.single(OpMVN, []*Tensor{x}, Attrs{AttrAxes: IntsAttr(axes)}, opts)
}

func mvnAxes(x []int64, a Attrs) ([]bool, error) {
	axes := a.Ints(AttrAxes)
	if _, ok := a[AttrAxes]; !ok {
		axes = []int64{0, 2, 3}
	}
	red := make([]bool, len(x))
	for _, ax := range axes {
		j, err := normAxis(ax, len(x))
		if err != nil {
			return nil, err
		}
		if red[j] {
			return nil, fmt.Errorf("axis %d repeated", ax)
		}
		red[j] = true
	}
	return red, nil
}

func inferMVN(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloatOr64("input", in[0].DataType); err != nil {
		return nil, err
	}
	if _, err := mvnAxes(in[0].Dims, a); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// reduceGroups returns, for each element of dims, the index of its group
// when the red axes are reduced (the kept axes' row-major position), and
// the number of groups.
func reduceGroups(dims []int64, red []bool) ([]int, int) {
	n := prod(dims)
	grp := make([]int, n)
	ng := 1
	for k, d := range dims {
		if !red[k] {
			ng *= int(d)
		}
	}
	pos := make([]int, len(dims))
	for i := range n {
		g := 0
		for k, d := range dims {
			if !red[k] {
				g = g*int(d) + pos[k]
			}
		}
		grp[i] = g
		for k := len(dims) - 1; k >= 0; k-- {
			pos[k]++
			if pos[k] < int(dims[k]) {
				break
			}
			pos[k] = 0
		}
	}
	return grp, ng
}

func mvnKernel(t *Task, args [][]byte) error {
	xd := t.Inputs[0]
	red, err := mvnAxes(xd.Dims, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	grp, ng := reduceGroups(xd.Dims, red)
	sum, sq, cnt := make([]float64, ng), make([]float64, ng), make([]float64, ng)
	for i, v := range x {
		sum[grp[i]] += v
		cnt[grp[i]]++
	}
	for g := range sum {
		sum[g] /= cnt[g]
	}
	for i, v := range x {
		d := v - sum[grp[i]]
		sq[grp[i]] += d * d
	}
	out := make([]float64, len(x))
	for i, v := range x {
		g := grp[i]
		out[i] = (v - sum[g]) / (math.Sqrt(sq[g]/cnt[g]) + mvnEpsilon)
	}
	writeFromF64(args[1], xd.DataType, out)
	return nil
}

// BatchNormTrain normalises x [N, C, ...] with the per-channel mean and
// population variance of the batch, and returns y, momentum·mean +
// (1-momentum)·batch mean and the same for the variance (ONNX
// BatchNormalization with training_mode).
func (g *Graph) BatchNormTrain(x, scale, bias, mean, variance *Tensor, eps, momentum float64, opts ...OpOption) (y, runMean, runVar *Tensor) {
	n := g.AddOp(OpBatchNormTrain, []*Tensor{x, scale, bias, mean, variance}, Attrs{AttrEpsilon: FloatAttr(eps), AttrMomentum: FloatAttr(momentum)}, opts...)
	return n.Output(0), n.Output(1), n.Output(2)
}

func inferBatchNormTrain(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	if len(x.Dims) < 2 {
		return nil, fmt.Errorf("input %s must have rank >= 2", dimsString(x.Dims))
	}
	for i := 1; i < 5; i++ {
		if len(in[i].Dims) != 1 || in[i].Dims[0] != x.Dims[1] {
			return nil, fmt.Errorf("input %d has dims %s, want [%d]", i, dimsString(in[i].Dims), x.Dims[1])
		}
	}
	if eps := a.Float(AttrEpsilon, 1e-5); !(eps >= 0) {
		return nil, fmt.Errorf("epsilon %v must be >= 0", eps)
	}
	return []TensorDesc{cloneDesc(x), cloneDesc(in[3]), cloneDesc(in[4])}, nil
}

func batchNormTrainKernel(t *Task, args [][]byte) error {
	xd := t.Inputs[0]
	dt := xd.DataType
	n, c := int(xd.Dims[0]), int(xd.Dims[1])
	inner := prod(xd.Dims[2:])
	x := readNums(dt, args[0], prod(xd.Dims))
	sc, bi := readNums(dt, args[1], c), readNums(dt, args[2], c)
	rm, rv := readNums(dt, args[3], c), readNums(dt, args[4], c)
	eps, mom := t.Attrs.Float(AttrEpsilon, 1e-5), t.Attrs.Float(AttrMomentum, 0.9)
	out := make([]float64, len(x))
	vals := make([]float64, 0, n*inner)
	for ch := range c {
		vals = vals[:0]
		for b := range n {
			base := (b*c + ch) * inner
			vals = append(vals, x[base:base+inner]...)
		}
		mean, v := meanVar(vals)
		inv := 1 / math.Sqrt(v+eps)
		for b := range n {
			base := (b*c + ch) * inner
			for i := base; i < base+inner; i++ {
				out[i] = (x[i]-mean)*inv*sc[ch] + bi[ch]
			}
		}
		rm[ch] = rm[ch]*mom + mean*(1-mom)
		rv[ch] = rv[ch]*mom + v*(1-mom)
	}
	writeFromF64(args[5], dt, out)
	writeFromF64(args[6], dt, rm)
	writeFromF64(args[7], dt, rv)
	return nil
}
