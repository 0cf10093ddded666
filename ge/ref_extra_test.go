package ge_test

import (
	"math"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// float64 references of the ops of kernel_extra*.go, written from the ONNX
// definitions: the optimizer steps follow the pseudo code of the
// ai.onnx.preview.training ops line by line; TfIdfVectorizer enumerates
// every (length, skip, start) n-gram and looks it up in the pool by a
// linear scan.

func init() {
	// refOps takes one output: the new X of the optimizers (their other
	// outputs are checked by TestExtraOptimizers through refOptimizer).
	for _, op := range []ge.OpType{ge.OpAdagrad, ge.OpAdam, ge.OpMomentum} {
		refOps[op] = func(_ testing.TB, in []refVal, a ge.Attrs, _ ge.TensorDesc) refVal {
			return refOptimizer(op, in, a)[0]
		}
	}
	refOps[ge.OpTfIdfVectorizer] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		var w []float64
		if len(in) > 1 {
			w = in[1].v
		}
		return refTfIdf(t, in[0], w, a, out)
	}
}

// refOptimizer returns every output of one optimizer step: in are R, T, X,
// G and the state tensors.
func refOptimizer(op ge.OpType, in []refVal, a ge.Attrs) []refVal {
	R, T := in[0].v[0], in[1].v[0]
	x, g := in[2].v, in[3].v
	dt, dims := in[2].dt, in[2].dims
	norm := a.Float(ge.AttrNormCoefficient, 0)
	outs := make([][]float64, len(in)-3)
	for k := range outs {
		outs[k] = make([]float64, len(x))
	}
	for i := range x {
		gReg := norm*x[i] + g[i]
		switch op {
		case ge.OpAdagrad:
			r := R / (1 + T*a.Float(ge.AttrDecayFactor, 0))
			hNew := in[4].v[i] + gReg*gReg
			hAdaptive := math.Sqrt(hNew) + a.Float(ge.AttrEpsilon, 1e-6)
			outs[0][i], outs[1][i] = x[i]-r*gReg/hAdaptive, hNew
		case ge.OpAdam:
			alpha, beta := a.Float(ge.AttrAlpha, 0.9), a.Float(ge.AttrBeta, 0.999)
			vNew := alpha*in[4].v[i] + (1-alpha)*gReg
			hNew := beta*in[5].v[i] + (1-beta)*gReg*gReg
			hSqrt := math.Sqrt(hNew) + a.Float(ge.AttrEpsilon, 1e-6)
			rAdj := R
			if T > 0 {
				rAdj = R * math.Sqrt(1-math.Pow(beta, T)) / (1 - math.Pow(alpha, T))
			}
			xNew := x[i] - rAdj*vNew/hSqrt
			outs[0][i], outs[1][i], outs[2][i] = (1-a.Float(ge.AttrNormCoefficientPost, 0))*xNew, vNew, hNew
		case ge.OpMomentum:
			alpha, beta := a.Float(ge.AttrAlpha, 0), a.Float(ge.AttrBeta, 0)
			if !(T > 0) {
				beta = 1
			}
			vNew := alpha*in[4].v[i] + beta*gReg
			if a.Bool(ge.AttrNesterov) {
				outs[0][i] = x[i] - R*(gReg+alpha*vNew)
			} else {
				outs[0][i] = x[i] - R*vNew
			}
			outs[1][i] = vNew
		}
	}
	n := map[ge.OpType]int{ge.OpAdagrad: 2, ge.OpAdam: 3, ge.OpMomentum: 2}[op]
	res := make([]refVal, n)
	for k := range res {
		res[k] = rounded(dt, dims, outs[k])
	}
	return res
}

// refTfIdf counts the pool's n-grams per row of x.
func refTfIdf(t testing.TB, x refVal, w []float64, a ge.Attrs, out ge.TensorDesc) refVal {
	pool, counts, indexes := a.Ints(ge.AttrPoolInt64s), a.Ints(ge.AttrNgramCounts), a.Ints(ge.AttrNgramIndexes)
	// The pool's n-grams in order, each with its length.
	var grams [][]int64
	for k := range counts {
		end := int64(len(pool))
		if k+1 < len(counts) {
			end = counts[k+1]
		}
		for j := counts[k]; j+int64(k) < end; j += int64(k + 1) {
			grams = append(grams, pool[j:j+int64(k)+1])
		}
	}
	if len(grams) != len(indexes) {
		t.Fatalf("refTfIdf: %d n-grams, %d indexes", len(grams), len(indexes))
	}
	rows, c := 1, len(x.v)
	if len(x.dims) == 2 {
		rows, c = int(x.dims[0]), int(x.dims[1])
	}
	size := int(out.Dims[len(out.Dims)-1])
	y := make([]float64, rows*size)
	mode := a.Int(ge.AttrTfIdfMode, ge.TfIdfTF)
	for r := range rows {
		row := x.v[r*c : (r+1)*c]
		found := make([]float64, len(grams))
		for n := a.Int(ge.AttrMinGramLength, 1); n <= a.Int(ge.AttrMaxGramLength, 1); n++ {
			skips := a.Int(ge.AttrMaxSkipCount, 0)
			if n == 1 {
				skips = 0 // a 1-gram is the same item whatever the skip
			}
			for s := int64(0); s <= skips; s++ {
				for j := 0; j+int((n-1)*(s+1)) < c; j++ {
					for gi, gram := range grams {
						if int64(len(gram)) != n {
							continue
						}
						match := true
						for k := range gram {
							if row[j+k*int(s+1)] != float64(gram[k]) {
								match = false
								break
							}
						}
						if match {
							found[gi]++
							break // the first pool entry of a repeated n-gram
						}
					}
				}
			}
		}
		for gi, f := range found {
			if f == 0 {
				continue
			}
			switch mode {
			case ge.TfIdfIDF:
				f = 1
			}
			if mode != ge.TfIdfTF && w != nil {
				f *= w[gi]
			}
			y[r*size+int(indexes[gi])] += f
		}
	}
	return rounded(acl.Float32, out.Dims, y)
}
