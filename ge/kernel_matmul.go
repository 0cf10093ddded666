package ge

import (
	"fmt"

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
	m64, k64, n64, batch, err := matmulTaskDims(in, od, t.Attrs)
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
	var few [16]sg.Call // batched attention heads fit without allocating
	calls := few[:0]
	if nb > len(few) {
		calls = make([]sg.Call, 0, nb)
	}
	var idxv [8]int
	idx := idxv[:0]
	if len(batch) > len(idxv) {
		idx = make([]int, 0, len(batch))
	}
	idx = idx[:len(batch)]
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

// matmulTaskDims is matmulDims for a task, without allocating: the batch
// dims are the output's leading dims once they are checked to be the
// broadcast of the operands' (matmulDims otherwise, which says what is
// wrong).
func matmulTaskDims(in []TensorDesc, out TensorDesc, a Attrs) (m, k, n int64, batch []int64, err error) {
	x, w, od := in[0].Dims, in[1].Dims, out.Dims
	ok := len(x) >= 2 && len(w) >= 2 && len(od) == max(len(x), len(w))
	if ok {
		m, k = x[len(x)-2], x[len(x)-1]
		if a.Bool(AttrTransposeA) {
			m, k = k, m
		}
		k2, n2 := w[len(w)-2], w[len(w)-1]
		if a.Bool(AttrTransposeB) {
			k2, n2 = n2, k2
		}
		n = n2
		ok = k == k2 && od[len(od)-2] == m && od[len(od)-1] == n
		batch = od[:len(od)-2]
		xb, wb := x[:len(x)-2], w[:len(w)-2]
		for i := range batch {
			da, db := int64(1), int64(1)
			if j := len(xb) - len(batch) + i; j >= 0 {
				da = xb[j]
			}
			if j := len(wb) - len(batch) + i; j >= 0 {
				db = wb[j]
			}
			want := da
			if da == 1 {
				want = db
			}
			ok = ok && (da == db || da == 1 || db == 1) && batch[i] == want
		}
	}
	if ok {
		return m, k, n, batch, nil
	}
	m, _, n, batch, err = matmulDims(in, a)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	return 0, 0, 0, nil, fmt.Errorf("output %s is not the product's %v×[%d, %d]", dimsString(od), batch, m, n)
}
