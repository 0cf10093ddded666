package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/internal/par"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// BatchNorm is inference-mode batch normalisation over channel dim 1:
// y = (x - mean[c]) / √(var[c] + eps) · scale[c] + bias[c], computed in
// float64 per channel and rounded once.
const OpBatchNorm OpType = 76

func init() {
	registerOp(OpBatchNorm, &opSpec{name: "BatchNorm", minIn: 5, maxIn: 5,
		attrs: map[string]AttrKind{AttrEpsilon: AttrFloat}, infer: inferBatchNorm, kernel: batchNormKernel})
}

// BatchNorm normalises x [N, C, ...] with per-channel scale, bias, mean
// and variance (each [C]) and epsilon eps.
func (g *Graph) BatchNorm(x, scale, bias, mean, variance *Tensor, eps float64, opts ...OpOption) *Tensor {
	return g.single(OpBatchNorm, []*Tensor{x, scale, bias, mean, variance}, Attrs{AttrEpsilon: FloatAttr(eps)}, opts)
}

func inferBatchNorm(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	if err := sameType(in); err != nil {
		return nil, err
	}
	x := in[0].Dims
	if len(x) < 2 {
		return nil, fmt.Errorf("input %s must have rank >= 2", dimsString(x))
	}
	for i := 1; i < 5; i++ {
		if len(in[i].Dims) != 1 || in[i].Dims[0] != x[1] {
			return nil, fmt.Errorf("input %d has dims %s, want [%d]", i, dimsString(in[i].Dims), x[1])
		}
	}
	if eps := a.Float(AttrEpsilon, 1e-5); !(eps >= 0) {
		return nil, fmt.Errorf("epsilon %v must be >= 0", eps)
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

func batchNormKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n, c := int(d.Dims[0]), int(d.Dims[1])
	inner := prod(d.Dims[2:])
	x := readFloats(&s, d.DataType, args[0], prod(d.Dims))
	sc := readFloats(&s, d.DataType, args[1], c)
	b := readFloats(&s, d.DataType, args[2], c)
	mean := readFloats(&s, d.DataType, args[3], c)
	vr := readFloats(&s, d.DataType, args[4], c)
	out := outFloats(&s, d.DataType, args[5], prod(d.Dims))
	eps := t.Attrs.Float(AttrEpsilon, 1e-5)
	// Planes are independent: large inputs split them over threads.
	if th := par.Threads(n*c*inner, parallelElems); th > 1 {
		par.Chunked(th, n*c, func(lo, hi int) { batchNormPlanes(out, x, sc, b, mean, vr, eps, c, inner, lo, hi) })
	} else {
		batchNormPlanes(out, x, sc, b, mean, vr, eps, c, inner, 0, n*c)
	}
	storeFloats(d.DataType, args[5], out)
	return nil
}

// batchNormPlanes normalises planes [lo,hi) of x ([N, C, inner], plane
// i*c+ch) into out.
func batchNormPlanes(out, x, sc, b, mean, vr []float32, eps float64, c, inner, lo, hi int) {
	for p := lo; p < hi; p++ {
		ch := p % c
		// The per-channel scale and shift in float64, applied in float32.
		mul64 := float64(sc[ch]) / math.Sqrt(float64(vr[ch])+eps)
		mul, add := float32(mul64), float32(float64(b[ch])-float64(mean[ch])*mul64)
		os := out[p*inner : (p+1)*inner]
		sg.VecScalar(sg.VecMul, os, x[p*inner:(p+1)*inner], mul)
		sg.VecScalar(sg.VecAdd, os, os, add)
	}
}
