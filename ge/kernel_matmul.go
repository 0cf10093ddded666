package ge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/ascend-go/cann/acl"
)

// matmulKernel computes C = op(A)·op(B) per batch with gonum's SGEMM.
// float32 operands are used in place; float16/bfloat16 operands are staged
// in float32 in the task's workspace (or scratch when the workspace is not
// aligned), accumulated in float32 and rounded once into the output type.
func matmulKernel(t *Task, args [][]byte) error {
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
