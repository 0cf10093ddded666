package ge

// The host kernels as they were before issue 16 (gonum SGEMM, float64 math
// per element), kept for the benchmarks that measure the speed-up in the
// same run. Not used by any test of behaviour.

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/ascend-go/cann/acl"
)

// matmulKernel computes C = op(A)·op(B) per batch with gonum's SGEMM.
// float32 operands are used in place; float16/bfloat16 operands are staged
// in float32 in the task's workspace (or scratch when the workspace is not
// aligned), accumulated in float32 and rounded once into the output type.
func legacyMatmulKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	ad, bd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	ta, tb := t.Attrs.Bool(AttrTransposeA), t.Attrs.Bool(AttrTransposeB)
	m64, k64, n64, batch, err := matmulDims(t.Inputs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	m, k, n := int(m64), int(k64), int(n64)
	// Stored operand shapes: A is [M,K] or [K,M], B is [K,N] or [N,K].
	aRows, aCols := m, k
	if ta {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if tb {
		bRows, bCols = n, k
	}
	transA, transB := blas.NoTrans, blas.NoTrans
	if ta {
		transA = blas.Trans
	}
	if tb {
		transB = blas.Trans
	}
	nb := prod(batch)
	aBatch, bBatch := ad.Dims[:len(ad.Dims)-2], bd.Dims[:len(bd.Dims)-2]
	sa, sb := broadcastStrides(aBatch, batch), broadcastStrides(bBatch, batch)
	es := ad.DataType.Size()
	aMat, bMat, cMat := m*k, k*n, m*n

	// float32 operands are used in place (or decoded once when unaligned);
	// half operands are staged per batch in the workspace.
	var wa, wb, wc, aAll, bAll, cAll []float32
	half := ad.DataType != acl.Float32
	if half {
		ws := viewF32(args[3], aMat+bMat+cMat)
		if ws == nil {
			ws = s.f32(aMat + bMat + cMat)
		}
		wa, wb, wc = ws[:aMat], ws[aMat:aMat+bMat], ws[aMat+bMat:]
	} else {
		aAll = readFloats(&s, acl.Float32, args[0], prod(ad.Dims))
		bAll = readFloats(&s, acl.Float32, args[1], prod(bd.Dims))
		cAll = outFloats(&s, acl.Float32, args[2], nb*cMat)
	}
	idx := make([]int, len(batch))
	offA, offB := 0, 0
	for bi := range nb {
		var av, bv, cv []float32
		if half {
			decodeFloats(wa, ad.DataType, args[0][offA*aMat*es:(offA+1)*aMat*es])
			decodeFloats(wb, bd.DataType, args[1][offB*bMat*es:(offB+1)*bMat*es])
			av, bv, cv = wa, wb, wc
		} else {
			av, bv, cv = aAll[offA*aMat:(offA+1)*aMat], bAll[offB*bMat:(offB+1)*bMat], cAll[bi*cMat:(bi+1)*cMat]
		}
		blas32.Gemm(transA, transB, 1,
			blas32.General{Rows: aRows, Cols: aCols, Stride: aCols, Data: av},
			blas32.General{Rows: bRows, Cols: bCols, Stride: bCols, Data: bv},
			0, blas32.General{Rows: m, Cols: n, Stride: n, Data: cv})
		if half {
			storeFloats(od.DataType, args[2][bi*cMat*es:(bi+1)*cMat*es], cv)
		}
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d]++
			offA += sa[d]
			offB += sb[d]
			if idx[d] < int(batch[d]) {
				break
			}
			offA -= sa[d] * idx[d]
			offB -= sb[d] * idx[d]
			idx[d] = 0
		}
	}
	if !half {
		storeFloats(acl.Float32, args[2], cAll)
	}
	return nil
}
func legacyUnaryKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	d := t.Inputs[0]
	n := prod(d.Dims)
	x := readFloats(&s, d.DataType, args[0], n)
	out := outFloats(&s, d.DataType, args[1], n)
	switch t.Op {
	case OpRelu:
		for i, v := range x {
			if v < 0 {
				v = 0
			}
			out[i] = v
		}
	case OpGelu:
		for i, v := range x {
			out[i] = float32(legacyGelu(float64(v)))
		}
	case OpSilu:
		for i, v := range x {
			f := float64(v)
			out[i] = float32(f / (1 + math.Exp(-f)))
		}
	}
	storeFloats(d.DataType, args[1], out)
	return nil
}

// legacyGelu is the tanh approximation used by the Ascend Gelu operator:
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func legacyGelu(x float64) float64 {
	const c = 0.7978845608028654 // √(2/π)
	return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x)))
}
func legacySoftmaxKernel(t *Task, args [][]byte) error {
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

// legacyNormKernel runs LayerNorm (x, gamma, beta) and RMSNorm (x, gamma) over the
// last axis: LayerNorm y = (x-mean)/√(var+eps)·gamma + beta with the
// population variance; RMSNorm y = x/√(mean(x²)+eps)·gamma.
func legacyNormKernel(t *Task, args [][]byte) error {
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
