package ge

import "math"

// Softmax, LayerNorm and RMSNorm accumulate in float64 and round once into
// the output type.

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
			for j := range l {
				out[base+j*inner] = float32(math.Exp(float64(x[base+j*inner])-mx) / sum)
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
	for r := 0; r < n; r += l {
		row, y := x[r:r+l], out[r:r+l]
		var mean float64
		if b != nil {
			for _, v := range row {
				mean += float64(v)
			}
			mean /= float64(l)
		}
		var sq float64
		for _, v := range row {
			dv := float64(v) - mean
			sq += dv * dv
		}
		inv := 1 / math.Sqrt(sq/float64(l)+eps)
		for j, v := range row {
			o := (float64(v) - mean) * inv * float64(g[j])
			if b != nil {
				o += float64(b[j])
			}
			y[j] = float32(o)
		}
	}
	storeFloats(d.DataType, outArg, out)
	return nil
}
