package ge

import (
	"github.com/ascend-go/cann/internal/par"
	"github.com/ascend-go/cann/internal/vmath"
)

// float32 forms of the unary ops on the hot path of imported models
// (Paddle's hard-swish, torch's Erf GELU, the logistic gates): float16
// and bfloat16 convert at the edges (readFloats/storeFloats) and compute
// in float32, Sigmoid/Tanh/Erf/Exp through internal/vmath (at most 3 ulp
// from the float64 value), the piecewise-linear ones in plain float32
// arithmetic. They replace the per-element float64 closures of
// elemUnaryKernel, which spent most of a MobileNetV3 block in
// HardSigmoid.

// fastUnaryOp reports whether fastUnaryKernel has a float32 form of op.
func fastUnaryOp(op OpType) bool {
	switch op {
	case OpSigmoid, OpTanh, OpErf, OpExp, OpHardSigmoid, OpHardSwish, OpGeluErf:
		return true
	}
	return false
}

// fastUnaryKernel runs a fastUnaryOp on a float32/float16/bfloat16
// tensor, split over threads when large (each element depends only on
// itself, so the split changes no bit).
func fastUnaryKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n := prod(d.Dims)
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], n)
	alpha, beta := float32(t.Attrs.Float(AttrAlpha, 0.2)), float32(t.Attrs.Float(AttrBeta, 0.5))
	if th := par.Threads(n, parallelElems); th > 1 {
		par.Chunked(th, n, func(lo, hi int) { fastUnary(t.Op, alpha, beta, out[lo:hi], x[lo:hi]) })
	} else {
		fastUnary(t.Op, alpha, beta, out, x)
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// fastUnary sets out = op(x); alpha and beta are HardSigmoid's.
func fastUnary(op OpType, alpha, beta float32, out, x []float32) {
	switch op {
	case OpSigmoid:
		vmath.Sigmoid(out, x)
	case OpTanh:
		vmath.Tanh(out, x)
	case OpErf:
		vmath.Erf(out, x)
	case OpExp:
		vmath.Exp(out, x)
	case OpHardSwish:
		vmath.HardSwish(out, x)
	case OpHardSigmoid:
		vmath.HardSigmoid(out, x, alpha, beta)
	case OpGeluErf:
		vmath.GeluErf(out, x)
	}
}
