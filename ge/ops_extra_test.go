package ge_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// extraBytes stores v as dt (float32, float64, int32 or int64) and
// returns the values as stored.
func extraBytes(dt acl.DataType, v []float64) ([]byte, []float64) {
	b := make([]byte, len(v)*dt.Size())
	got := make([]float64, len(v))
	for i, x := range v {
		switch dt {
		case acl.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
			got[i] = float64(float32(x))
		case acl.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
			got[i] = x
		case acl.Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(x)))
			got[i] = float64(int32(x))
		case acl.Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(x)))
			got[i] = float64(int64(x))
		default:
			panic("extraBytes: " + dt.String())
		}
	}
	return b, got
}

// TestExtraOptimizers runs Adagrad, Adam and Momentum (standard and
// Nesterov) on float32 and float64 tensors, at the first update (T = 0)
// and a later one, and compares every output with refOptimizer; EvalOp
// (constant folding) gives the same bytes.
func TestExtraOptimizers(t *testing.T) {
	r := newRand(t)
	cases := []struct {
		op    ge.OpType
		state int
		attrs ge.Attrs
	}{
		{ge.OpAdagrad, 1, ge.Attrs{ge.AttrDecayFactor: ge.FloatAttr(0.1), ge.AttrEpsilon: ge.FloatAttr(1e-5), ge.AttrNormCoefficient: ge.FloatAttr(0.001)}},
		{ge.OpAdagrad, 1, nil}, // the defaults
		{ge.OpAdam, 2, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.95), ge.AttrBeta: ge.FloatAttr(0.85), ge.AttrEpsilon: ge.FloatAttr(1e-2),
			ge.AttrNormCoefficient: ge.FloatAttr(0.001), ge.AttrNormCoefficientPost: ge.FloatAttr(0.01)}},
		{ge.OpAdam, 2, nil},
		{ge.OpMomentum, 1, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.95), ge.AttrBeta: ge.FloatAttr(0.1), ge.AttrNormCoefficient: ge.FloatAttr(0.001)}},
		{ge.OpMomentum, 1, ge.Attrs{ge.AttrAlpha: ge.FloatAttr(0.9), ge.AttrBeta: ge.FloatAttr(1), ge.AttrNormCoefficient: ge.FloatAttr(0.01), ge.AttrNesterov: ge.BoolAttr(true)}},
	}
	for ci, c := range cases {
		for _, dt := range []acl.DataType{acl.Float32, acl.Float64} {
			for _, step := range []int64{0, 3} {
				t.Run(fmt.Sprintf("%s_%d_%s_T%d", c.op, ci, dt, step), func(t *testing.T) {
					dims := []int64{int64(1 + r.IntN(4)), int64(1 + r.IntN(7))}
					rdt := []acl.DataType{acl.Float32, acl.Float64}[r.IntN(2)]
					g := ge.NewGraph("opt")
					var ins []*ge.Tensor
					var data [][]byte
					var vals []refVal
					var hs []ge.HostTensor
					add := func(dt acl.DataType, dims []int64, v []float64) {
						b, stored := extraBytes(dt, v)
						ins = append(ins, g.Data(fmt.Sprintf("in%d", len(ins)), len(ins), dt, dims))
						data = append(data, b)
						vals = append(vals, refVal{dt, dims, stored})
						hs = append(hs, ge.HostTensor{Desc: ge.TensorDesc{DataType: dt, Dims: dims}, Data: b})
					}
					add(rdt, nil, []float64{0.05 + 0.1*r.Float64()})
					add(acl.Int64, nil, []float64{float64(step)})
					n := numel(dims)
					for k := range 2 + c.state {
						v := make([]float64, n)
						for i := range v {
							v[i] = r.NormFloat64()
							if k == 1+c.state { // the squared-gradient state H is ≥ 0
								v[i] = math.Abs(v[i])
							}
						}
						add(dt, dims, v)
					}
					nd := g.AddOp(c.op, ins, c.attrs)
					var outs []*ge.Tensor
					for i := range nd.NumOutputs() {
						outs = append(outs, nd.Output(i))
					}
					require.Len(t, outs, 1+c.state)
					g.Output(outs...)
					require.NoError(t, g.Err())
					want := refOptimizer(c.op, vals, c.attrs)
					got := runGraph(t, g, data)
					folded, err := ge.EvalOp(c.op, c.attrs, hs)
					require.NoError(t, err)
					for i := range want {
						requireClose(t, want[i], got[i], 1e-6, fmt.Sprintf("output %d", i))
						require.Equal(t, got[i], folded[i].Data, "output %d: EvalOp and the compiled model agree", i)
					}
					// refOps (output 0) agrees too.
					requireClose(t, refOps[c.op](t, vals, c.attrs, outs[0].Desc()), got[0], 1e-6, "refOps")
				})
			}
		}
	}
}

// TestExtraOptimizerErrors: bad operands are typed errors of the graph.
func TestExtraOptimizerErrors(t *testing.T) {
	build := func(rdt, tdt, xdt acl.DataType, rdims, gdims []int64) error {
		g := ge.NewGraph("bad")
		R := g.Data("r", 0, rdt, rdims)
		T := g.Data("t", 1, tdt, nil)
		x := g.Data("x", 2, xdt, []int64{2, 3})
		gr := g.Data("g", 3, xdt, gdims)
		h := g.Data("h", 4, xdt, []int64{2, 3})
		xn, hn := g.Adagrad(R, T, x, gr, h, 0, 1e-6, 0)
		if xn != nil && hn != nil {
			g.Output(xn, hn)
		}
		return g.Err()
	}
	f32, i64 := acl.Float32, acl.Int64
	require.NoError(t, build(f32, i64, f32, nil, []int64{2, 3}))
	err := build(f32, i64, f32, nil, []int64{3, 2})
	require.ErrorContains(t, err, "dims")
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(build(f32, acl.Int32, f32, nil, []int64{2, 3})), "T must be int64")
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(build(f32, i64, acl.Float16, nil, []int64{2, 3})), "float16 tensors")
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(build(acl.Int32, i64, f32, nil, []int64{2, 3})), "an integer R")
	require.ErrorContains(t, build(f32, i64, f32, []int64{2}, []int64{2, 3}), "scalar")

	g := ge.NewGraph("bad")
	s := func(i int, dt acl.DataType) *ge.Tensor { return g.Data(fmt.Sprint("s", i), i, dt, nil) }
	x := g.Data("x", 2, acl.Float32, []int64{4})
	_, _ = g.Momentum(s(0, acl.Float32), s(1, acl.Int64), x, x, x, math.NaN(), 1, 0, false)
	require.ErrorContains(t, g.Err(), "finite")
}

// tfidfCase is one random TfIdfVectorizer configuration.
func tfidfCase(r *rand.Rand) (ge.Attrs, int) {
	maxN := 1 + r.IntN(3)
	var pool, counts []int64
	grams := 0
	for n := 1; n <= maxN; n++ {
		counts = append(counts, int64(len(pool)))
		k := r.IntN(5)
		if n == 1 {
			k++ // at least one n-gram
		}
		for range k {
			for range n {
				pool = append(pool, int64(r.IntN(4)))
			}
			grams++
		}
	}
	indexes := make([]int64, grams)
	for i := range indexes {
		indexes[i] = int64(r.IntN(grams + 2))
	}
	minN := 1 + r.IntN(maxN)
	return ge.Attrs{
		ge.AttrMinGramLength: ge.IntAttr(int64(minN)), ge.AttrMaxGramLength: ge.IntAttr(int64(minN + r.IntN(maxN-minN+1))),
		ge.AttrMaxSkipCount: ge.IntAttr(int64(r.IntN(4))), ge.AttrNgramCounts: ge.IntsAttr(counts),
		ge.AttrNgramIndexes: ge.IntsAttr(indexes), ge.AttrPoolInt64s: ge.IntsAttr(pool),
		ge.AttrTfIdfMode: ge.IntAttr(int64(r.IntN(3))),
	}, grams
}

// TestExtraTfIdfVectorizer: random pools (repeated n-grams and shared
// output coordinates included), 1-D and 2-D int32/int64 inputs over a small
// alphabet, every mode with and without weights, against refTfIdf; EvalOp
// gives the same bytes.
func TestExtraTfIdfVectorizer(t *testing.T) {
	r := newRand(t)
	for i := range 60 {
		a, grams := tfidfCase(r)
		dt := []acl.DataType{acl.Int32, acl.Int64}[i%2]
		dims := []int64{int64(1 + r.IntN(12))}
		if i%3 != 0 {
			dims = []int64{int64(1 + r.IntN(3)), int64(1 + r.IntN(10))}
		}
		withW := i%4 < 2
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			g := ge.NewGraph("tfidf")
			v := make([]float64, numel(dims))
			for k := range v {
				v[k] = float64(r.IntN(4))
			}
			xb, xv := extraBytes(dt, v)
			x := g.Data("x", 0, dt, dims)
			data := [][]byte{xb}
			vals := []refVal{{dt, dims, xv}}
			hs := []ge.HostTensor{{Desc: ge.TensorDesc{DataType: dt, Dims: dims}, Data: xb}}
			var w *ge.Tensor
			if withW {
				wv := make([]float64, grams)
				for k := range wv {
					wv[k] = r.Float64() * 3
				}
				wb, ws := extraBytes(acl.Float32, wv)
				w = g.Data("w", 1, acl.Float32, []int64{int64(grams)})
				data = append(data, wb)
				vals = append(vals, refVal{acl.Float32, []int64{int64(grams)}, ws})
				hs = append(hs, ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{int64(grams)}}, Data: wb})
			}
			y := g.TfIdfVectorizer(x, w, a)
			g.Output(y)
			require.NoError(t, g.Err(), "%v", a)
			want := refOps[ge.OpTfIdfVectorizer](t, vals, a, y.Desc())
			got := runGraph(t, g, data)[0]
			requireClose(t, want, got, 1e-6, fmt.Sprintf("x %v attrs %v", xv, a))
			folded, err := ge.EvalOp(ge.OpTfIdfVectorizer, a, hs)
			require.NoError(t, err)
			require.Equal(t, got, folded[0].Data)
		})
	}
}

// TestExtraTfIdfVectorizerExample: ONNX's uni- and bigram example with
// skips, by hand: [1 1 3 3 3 7 8 6 7 5 6 8], 1-grams {2 3 5 4}, 2-grams
// {5 6} {7 8} {6 7}, skips up to 5.
func TestExtraTfIdfVectorizerExample(t *testing.T) {
	xb, _ := extraBytes(acl.Int32, []float64{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8})
	a := ge.Attrs{ge.AttrMinGramLength: ge.IntAttr(1), ge.AttrMaxGramLength: ge.IntAttr(2), ge.AttrMaxSkipCount: ge.IntAttr(5),
		ge.AttrNgramCounts: ge.IntsAttr([]int64{0, 4}), ge.AttrNgramIndexes: ge.IntsAttr([]int64{0, 1, 2, 3, 4, 5, 6}),
		ge.AttrPoolInt64s: ge.IntsAttr([]int64{2, 3, 5, 4, 5, 6, 7, 8, 6, 7})}
	out, err := ge.EvalOp(ge.OpTfIdfVectorizer, a, []ge.HostTensor{{Desc: ge.TensorDesc{DataType: acl.Int32, Dims: []int64{12}}, Data: xb}})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 3, 1, 0, 1, 3, 1}, decodeAll(acl.Float32, out[0].Data, 7))
}

// TestExtraTfIdfVectorizerErrors: malformed pools and operands are errors,
// never panics.
func TestExtraTfIdfVectorizerErrors(t *testing.T) {
	base := func() ge.Attrs {
		return ge.Attrs{ge.AttrMinGramLength: ge.IntAttr(1), ge.AttrMaxGramLength: ge.IntAttr(2), ge.AttrMaxSkipCount: ge.IntAttr(0),
			ge.AttrNgramCounts: ge.IntsAttr([]int64{0, 2}), ge.AttrNgramIndexes: ge.IntsAttr([]int64{0, 1, 2}),
			ge.AttrPoolInt64s: ge.IntsAttr([]int64{1, 2, 3, 4})}
	}
	x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{5}}, Data: make([]byte, 40)}
	_, err := ge.EvalOp(ge.OpTfIdfVectorizer, base(), []ge.HostTensor{x})
	require.NoError(t, err)
	for name, edit := range map[string]func(a ge.Attrs){
		"odd bigram span":   func(a ge.Attrs) { a[ge.AttrNgramCounts] = ge.IntsAttr([]int64{0, 1}) },
		"descending counts": func(a ge.Attrs) { a[ge.AttrNgramCounts] = ge.IntsAttr([]int64{0, 5}) },
		"negative count":    func(a ge.Attrs) { a[ge.AttrNgramCounts] = ge.IntsAttr([]int64{-1, 2}) },
		"no counts":         func(a ge.Attrs) { a[ge.AttrNgramCounts] = ge.IntsAttr(nil) },
		"too few indexes":   func(a ge.Attrs) { a[ge.AttrNgramIndexes] = ge.IntsAttr([]int64{0, 1}) },
		"negative index":    func(a ge.Attrs) { a[ge.AttrNgramIndexes] = ge.IntsAttr([]int64{0, -1, 2}) },
		"min above max":     func(a ge.Attrs) { a[ge.AttrMinGramLength] = ge.IntAttr(3) },
		"zero min":          func(a ge.Attrs) { a[ge.AttrMinGramLength] = ge.IntAttr(0) },
		"negative skip":     func(a ge.Attrs) { a[ge.AttrMaxSkipCount] = ge.IntAttr(-1) },
		"unknown mode":      func(a ge.Attrs) { a[ge.AttrTfIdfMode] = ge.IntAttr(3) },
		"1-grams not at 0":  func(a ge.Attrs) { a[ge.AttrNgramCounts] = ge.IntsAttr([]int64{2, 2}) },
		"empty pool": func(a ge.Attrs) {
			a[ge.AttrPoolInt64s] = ge.IntsAttr(nil)
			a[ge.AttrNgramCounts] = ge.IntsAttr([]int64{0})
		},
		"huge output position": func(a ge.Attrs) { a[ge.AttrNgramIndexes] = ge.IntsAttr([]int64{0, 1, 1 << 62}) },
	} {
		a := base()
		edit(a)
		_, err := ge.EvalOp(ge.OpTfIdfVectorizer, a, []ge.HostTensor{x})
		require.Error(t, err, name)
	}
	// Operand types and ranks.
	f := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{5}}, Data: make([]byte, 20)}
	_, err = ge.EvalOp(ge.OpTfIdfVectorizer, base(), []ge.HostTensor{f})
	require.Equal(t, acl.CodeUnsupportedDataType, acl.CodeOf(err), "%v", err)
	x3 := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int64, Dims: []int64{1, 1, 5}}, Data: make([]byte, 40)}
	_, err = ge.EvalOp(ge.OpTfIdfVectorizer, base(), []ge.HostTensor{x3})
	require.ErrorContains(t, err, "rank")
	w := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{2}}, Data: make([]byte, 8)}
	_, err = ge.EvalOp(ge.OpTfIdfVectorizer, base(), []ge.HostTensor{x, w})
	require.ErrorContains(t, err, "weight")
}
