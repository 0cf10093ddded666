package ge

import (
	"github.com/ascend-go/cann/internal/par"
	"github.com/ascend-go/cann/internal/vmath"
)

// Softmax, LayerNorm and RMSNorm run row by row on internal/vmath (float32
// exps, sums accumulated in float64).

func softmaxKernel(t *Task, args [][]byte) error {
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
	if inner == 1 {
		if th := par.Threads(n, parallelElems); th > 1 && l > 0 {
			par.Chunked(th, n/l, func(lo, hi int) { softmaxRows(out[lo*l:hi*l], x[lo*l:hi*l], l) })
		} else {
			softmaxRows(out, x, l)
		}
	} else {
		row := s.f32(l) // a strided row, gathered
		for o := range outer {
			for i := range inner {
				base := o*l*inner + i
				for j := range l {
					row[j] = x[base+j*inner]
				}
				vmath.Softmax(row, row)
				for j, v := range row {
					out[base+j*inner] = v
				}
			}
		}
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// normKernel runs LayerNorm (x, gamma, beta) and RMSNorm (x, gamma) over the
// last axis: LayerNorm y = (x-mean)/√(var+eps)·gamma + beta with the
// population variance; RMSNorm y = x/√(mean(x²)+eps)·gamma.
func normKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n := prod(d.Dims)
	l := int(d.Dims[len(d.Dims)-1])
	eps := t.Attrs.Float(AttrEpsilon, 1e-5)
	x := readFloats(&s, d.DataType, args[0], n)
	g := readFloats(&s, d.DataType, args[1], l)
	var b []float32
	outArg := args[2]
	if t.Op == OpLayerNorm {
		b = readFloats(&s, d.DataType, args[2], l)
		outArg = args[3]
	}
	out := outFloats(&s, d.DataType, outArg, n)
	if th := par.Threads(n, parallelElems); th > 1 && l > 0 {
		par.Chunked(th, n/l, func(lo, hi int) { normRows(out[lo*l:hi*l], x[lo*l:hi*l], g, b, l, eps) })
	} else {
		normRows(out, x, g, b, l, eps)
	}
	storeFloats(d.DataType, outArg, out)
	return nil
}

// softmaxRows runs Softmax on each row of l elements of x into out.
func softmaxRows(out, x []float32, l int) {
	for r := 0; r+l <= len(x) && l > 0; r += l {
		vmath.Softmax(out[r:r+l], x[r:r+l])
	}
}

// normRows runs LayerNorm (b set) or RMSNorm on each row of l elements.
func normRows(out, x, g, b []float32, l int, eps float64) {
	for r := 0; r+l <= len(x) && l > 0; r += l {
		if b != nil {
			vmath.LayerNorm(out[r:r+l], x[r:r+l], g, b, eps)
		} else {
			vmath.RMSNorm(out[r:r+l], x[r:r+l], g, eps)
		}
	}
}
