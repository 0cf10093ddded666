package ge

import (
	"github.com/ascend-go/cann/acl"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// matmulKernel computes C = op(A)·op(B) per batch with internal/sgemm.
// float32 operands are used in place; float16/bfloat16 operands are widened
// to float32 while sgemm packs them, the product accumulates in float32
// (in the task's workspace, or scratch when it is not aligned) and is
// rounded once into the output type. Batches run as one sgemm batch.
//
// It also runs FusedMatMul: the scale is the GEMM's alpha, the bias
// (input 2) and the activation are its epilogue, applied to each tile of C
// in float32 right after its last K block, before the rounding into a half
// output type; a B packed at compile time (packed_b) goes to sgemm as
// packed, so no run packs it again.
func matmulKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	nIn := len(t.Inputs)
	// A packed B (FusedMatMul's packed_b, checked by inference) is
	// described as its [K, N]; sgemm checks the packed length again.
	in := t.Inputs
	packNR := int(t.Attrs.Int(AttrPackedB, 0))
	var inBuf [3]TensorDesc
	var bDims [2]int64
	if packNR != 0 && nIn <= len(inBuf) && len(in[0].Dims) >= 2 {
		copy(inBuf[:], t.Inputs)
		kd := len(t.Inputs[0].Dims) - 1
		if t.Attrs.Bool(AttrTransposeA) {
			kd--
		}
		bDims = [2]int64{t.Inputs[0].Dims[kd], t.Attrs.Int(AttrPackedN, 0)}
		inBuf[1].Dims = bDims[:]
		in = inBuf[:nIn]
	}
	ad, bd, od := in[0], in[1], t.Outputs[0]
	outArg := args[nIn]
	epi, err := epilogueOf(t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	ta, tb := t.Attrs.Bool(AttrTransposeA), t.Attrs.Bool(AttrTransposeB)
	alpha := float32(t.Attrs.Float(AttrScale, 1))
	m64, k64, n64, batch, err := matmulDims(in, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	m, k, n := int(m64), int(k64), int(n64)
	// Stored operand widths: A is [M,K] or [K,M], B is [K,N] or [N,K].
	aCols, bCols := k, n
	if ta {
		aCols = m
	}
	if tb {
		bCols = k
	}
	nb := prod(batch)
	aBatch, bBatch := ad.Dims[:len(ad.Dims)-2], bd.Dims[:len(bd.Dims)-2]
	sa, sb := broadcastStrides(aBatch, batch), broadcastStrides(bBatch, batch)
	es := ad.DataType.Size()
	aMat, bMat, cMat := m*k, k*n, m*n

	half := ad.DataType != acl.Float32
	var aAll, bAll, cAll []float32
	if half {
		// The workspace holds M·K+K·N+M·N floats; the products need only C.
		if cAll = viewF32(args[nIn+1], nb*cMat); cAll == nil {
			cAll = s.f32(nb * cMat)
		}
	} else {
		aAll = readFloats(&s, acl.Float32, args[0], prod(ad.Dims))
		bAll = readFloats(&s, acl.Float32, args[1], prod(t.Inputs[1].Dims))
		cAll = outFloats(&s, acl.Float32, outArg, nb*cMat)
	}
	if nIn == 3 {
		epi.Bias = readFloats(&s, t.Inputs[2].DataType, args[2], n)
	}
	operand := func(all []float32, raw []byte, off, size, cols int, trans bool) sg.Matrix {
		if !half {
			return sg.Matrix{F32: all[off*size : (off+1)*size], Stride: cols, Trans: trans}
		}
		kind := sg.F16
		if ad.DataType == acl.BFloat16 {
			kind = sg.BF16
		}
		return sg.Matrix{Kind: kind, Half: raw[off*size*es : (off+1)*size*es], Stride: cols, Trans: trans}
	}
	bOperand := func(off int) sg.Matrix {
		if packNR != 0 {
			return sg.Packed(bAll, k, n, packNR) // packed ahead; B has no batch dims
		}
		return operand(bAll, args[1], off, bMat, bCols, tb)
	}
	var one [1]sg.Call
	calls := one[:0]
	if nb > 1 {
		calls = make([]sg.Call, 0, nb)
	}
	idx := make([]int, len(batch))
	offA, offB := 0, 0
	for bi := range nb {
		calls = append(calls, sg.Call{M: m, N: n, K: k, Alpha: alpha,
			A: operand(aAll, args[0], offA, aMat, aCols, ta),
			B: bOperand(offB),
			C: cAll[bi*cMat : (bi+1)*cMat], LDC: n, Epi: epi})
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
	if err := sg.GemmBatch(calls); err != nil {
		return kernelError(t, "%v", err)
	}
	storeFloats(od.DataType, outArg, cAll)
	return nil
}
