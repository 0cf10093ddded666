package ge

import (
	"fmt"
	"math"
	"slices"

	"github.com/ascend-go/cann/acl"
)

// Optimizer steps of ONNX's ai.onnx.preview.training domain: one update of
// a tensor X from its gradient G and optimizer state, as a training graph
// exported to ONNX runs them. Each op updates one tensor; ONNX's variadic
// form (X1, X2, …, G1, G2, …) is one op per tensor, since every formula is
// element-wise. Inputs are R (learning rate, a float32 or float64 scalar),
// T (update count, an int64 scalar), then X, G and the state tensors, all
// of one float type (float32 or float64) and one shape; outputs are the new
// X and the new state. Computation is in float64, rounded once.
const (
	OpAdagrad  OpType = 600 // R, T, X, G, H → X_new, H_new
	OpAdam     OpType = 601 // R, T, X, G, V, H → X_new, V_new, H_new
	OpMomentum OpType = 602 // R, T, X, G, V → X_new, V_new
)

// Attributes of the optimizer ops (alpha, beta and epsilon are AttrAlpha,
// AttrBeta and AttrEpsilon).
const (
	AttrDecayFactor         = "decay_factor"          // Adagrad: float, r = R / (1 + T·decay_factor)
	AttrNormCoefficient     = "norm_coefficient"      // float, G += norm_coefficient·X (L2 regularisation)
	AttrNormCoefficientPost = "norm_coefficient_post" // Adam: float, X_new *= 1 - norm_coefficient_post
	AttrNesterov            = "nesterov"              // Momentum: bool, Nesterov's momentum instead of the standard one
)

func init() {
	f := AttrFloat
	registerOp(OpAdagrad, &opSpec{name: "Adagrad", minIn: 5, maxIn: 5,
		attrs: map[string]AttrKind{AttrDecayFactor: f, AttrEpsilon: f, AttrNormCoefficient: f},
		infer: inferOptimizer(2), kernel: optimizerKernel})
	registerOp(OpAdam, &opSpec{name: "Adam", minIn: 6, maxIn: 6,
		attrs: map[string]AttrKind{AttrAlpha: f, AttrBeta: f, AttrEpsilon: f, AttrNormCoefficient: f, AttrNormCoefficientPost: f},
		infer: inferOptimizer(3), kernel: optimizerKernel})
	registerOp(OpMomentum, &opSpec{name: "Momentum", minIn: 5, maxIn: 5,
		attrs: map[string]AttrKind{AttrAlpha: f, AttrBeta: f, AttrNormCoefficient: f, AttrNesterov: AttrBool},
		infer: inferOptimizer(2), kernel: optimizerKernel})
}

// Adagrad adds one ADAGRAD step of x (gradient g, accumulated squared
// gradient h) and returns the new x and h.
func (g *Graph) Adagrad(r, t, x, grad, h *Tensor, decayFactor, epsilon, normCoefficient float64, opts ...OpOption) (xNew, hNew *Tensor) {
	n := g.addOp(OpAdagrad, []*Tensor{r, t, x, grad, h}, Attrs{AttrDecayFactor: FloatAttr(decayFactor),
		AttrEpsilon: FloatAttr(epsilon), AttrNormCoefficient: FloatAttr(normCoefficient)}, opts...)
	return n.Output(0), n.Output(1)
}

// Adam adds one Adam step of x (gradient g, averaged gradient v, averaged
// squared gradient h) and returns the new x, v and h.
func (g *Graph) Adam(r, t, x, grad, v, h *Tensor, alpha, beta, epsilon, normCoefficient, normCoefficientPost float64, opts ...OpOption) (xNew, vNew, hNew *Tensor) {
	n := g.addOp(OpAdam, []*Tensor{r, t, x, grad, v, h}, Attrs{AttrAlpha: FloatAttr(alpha), AttrBeta: FloatAttr(beta),
		AttrEpsilon: FloatAttr(epsilon), AttrNormCoefficient: FloatAttr(normCoefficient),
		AttrNormCoefficientPost: FloatAttr(normCoefficientPost)}, opts...)
	return n.Output(0), n.Output(1), n.Output(2)
}

// Momentum adds one step of stochastic gradient descent with momentum
// (Nesterov's when nesterov is set) and returns the new x and v.
func (g *Graph) Momentum(r, t, x, grad, v *Tensor, alpha, beta, normCoefficient float64, nesterov bool, opts ...OpOption) (xNew, vNew *Tensor) {
	n := g.addOp(OpMomentum, []*Tensor{r, t, x, grad, v}, Attrs{AttrAlpha: FloatAttr(alpha), AttrBeta: FloatAttr(beta),
		AttrNormCoefficient: FloatAttr(normCoefficient), AttrNesterov: BoolAttr(nesterov)}, opts...)
	return n.Output(0), n.Output(1)
}

// inferOptimizer checks R (a float scalar), T (an int64 scalar) and the
// tensors (one float type and one shape) and gives nOut outputs like X.
func inferOptimizer(nOut int) func(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	return func(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
		if r := in[0]; r.NumElements() != 1 || len(r.Dims) > 1 {
			return nil, fmt.Errorf("input R must be a scalar, got dims %s", dimsString(r.Dims))
		} else if r.DataType != acl.Float32 && r.DataType != acl.Float64 {
			return nil, &dtypeError{fmt.Sprintf("R has data type %s, want float32 or float64", r.DataType)}
		}
		if t := in[1]; t.NumElements() != 1 || len(t.Dims) > 1 {
			return nil, fmt.Errorf("input T must be a scalar, got dims %s", dimsString(t.Dims))
		} else if t.DataType != acl.Int64 {
			return nil, &dtypeError{fmt.Sprintf("T has data type %s, want int64", t.DataType)}
		}
		x := in[2]
		if x.DataType != acl.Float32 && x.DataType != acl.Float64 {
			return nil, &dtypeError{fmt.Sprintf("X has data type %s, want float32 or float64", x.DataType)}
		}
		if err := sameType(in[2:]); err != nil {
			return nil, err
		}
		for i, d := range in[3:] {
			if !slices.Equal(d.Dims, x.Dims) {
				return nil, fmt.Errorf("input %d has dims %s, X has %s", i+3, dimsString(d.Dims), dimsString(x.Dims))
			}
		}
		for _, k := range []string{AttrAlpha, AttrBeta, AttrEpsilon, AttrDecayFactor, AttrNormCoefficient, AttrNormCoefficientPost} {
			if v, ok := a[k]; ok && (math.IsNaN(v.F) || math.IsInf(v.F, 0)) {
				return nil, fmt.Errorf("attribute %s is %v, want a finite value", k, v.F)
			}
		}
		out := make([]TensorDesc, nOut)
		for i := range out {
			out[i] = TensorDesc{DataType: x.DataType, Format: acl.FormatND, Dims: cloneDims(x.Dims)}
		}
		return out, nil
	}
}

// optimizerKernel computes the ONNX pseudo code of the three ops.
func optimizerKernel(t *Task, args [][]byte) error {
	r := f64sOf(t.Inputs[0].DataType, args[0], 1)[0]
	step := intsOf(acl.Int64, args[1], 1)[0]
	dt := t.Inputs[2].DataType
	n := prod(t.Inputs[2].Dims)
	x, g := f64sOf(dt, args[2], n), f64sOf(dt, args[3], n)
	a := t.Attrs
	nc := a.Float(AttrNormCoefficient, 0)
	switch t.Op {
	case OpAdagrad:
		h := f64sOf(dt, args[4], n)
		xo, ho := args[5], args[6]
		// The learning rate decays with the update count.
		lr := r / (1 + float64(step)*a.Float(AttrDecayFactor, 0))
		eps := a.Float(AttrEpsilon, 1e-6)
		for i := range n {
			gr := nc*x[i] + g[i]
			hn := h[i] + gr*gr
			writeFloat(xo, dt, i, x[i]-lr*gr/(math.Sqrt(hn)+eps))
			writeFloat(ho, dt, i, hn)
		}
	case OpAdam:
		v, h := f64sOf(dt, args[4], n), f64sOf(dt, args[5], n)
		xo, vo, ho := args[6], args[7], args[8]
		alpha, beta := a.Float(AttrAlpha, 0.9), a.Float(AttrBeta, 0.999)
		eps, post := a.Float(AttrEpsilon, 1e-6), a.Float(AttrNormCoefficientPost, 0)
		// Bias correction of the two averages once updates have happened.
		lr := r
		if step > 0 {
			lr = r * math.Sqrt(1-math.Pow(beta, float64(step))) / (1 - math.Pow(alpha, float64(step)))
		}
		for i := range n {
			gr := nc*x[i] + g[i]
			vn := alpha*v[i] + (1-alpha)*gr
			hn := beta*h[i] + (1-beta)*gr*gr
			xn := x[i] - lr*(vn/(math.Sqrt(hn)+eps))
			writeFloat(xo, dt, i, (1-post)*xn)
			writeFloat(vo, dt, i, vn)
			writeFloat(ho, dt, i, hn)
		}
	case OpMomentum:
		v := f64sOf(dt, args[4], n)
		xo, vo := args[5], args[6]
		alpha, beta := a.Float(AttrAlpha, 0), a.Float(AttrBeta, 0)
		if step <= 0 {
			beta = 1 // the first update takes the whole gradient
		}
		nesterov := a.Bool(AttrNesterov)
		for i := range n {
			gr := nc*x[i] + g[i]
			vn := alpha*v[i] + beta*gr
			dir := vn
			if nesterov {
				dir = gr + alpha*vn
			}
			writeFloat(xo, dt, i, x[i]-r*dir)
			writeFloat(vo, dt, i, vn)
		}
	default:
		return kernelError(t, "not an optimizer op")
	}
	return nil
}
