package gert_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/gert"
)

// Single-op cases of the ops of ge/kernel_extra*.go: the optimizer steps
// and TfIdfVectorizer.
func init() {
	moreOpCases = append(moreOpCases, extraOpCases)
}

func extraOpCases(rng *rand.Rand) []opCase {
	f32s := func(n int64, f func() float32) (gert.IODesc, []byte) {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f()))
		}
		return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{n}, Format: acl.FormatND}, b
	}
	normal := func() float32 { return float32(rng.NormFloat64()) }
	squares := func() float32 { return float32(math.Abs(rng.NormFloat64())) }
	rate := gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{}, Format: acl.FormatND}
	step := gert.IODesc{DataType: acl.Int64, Shape: gert.Shape{}, Format: acl.FormatND}
	optimizer := func(op string, attrs gert.OpAttrs, state ...func() float32) opCase {
		c := opCase{op: op, attrs: attrs,
			in:   []gert.IODesc{rate, step},
			data: [][]byte{binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1)), binary.LittleEndian.AppendUint64(nil, 2)}}
		for _, f := range append([]func() float32{normal, normal}, state...) {
			d, b := f32s(11, f)
			c.in, c.data = append(c.in, d), append(c.data, b)
		}
		return c
	}
	x := make([]byte, 8*10)
	for i := range 10 {
		binary.LittleEndian.PutUint64(x[8*i:], uint64(rng.IntN(4)))
	}
	w, wb := f32s(5, func() float32 { return 0.5 + rng.Float32() })
	return []opCase{
		optimizer("Adagrad", gert.OpAttrs{"decay_factor": float32(0.1), "epsilon": float32(1e-5), "norm_coefficient": float32(0.001)}, squares),
		optimizer("Adam", gert.OpAttrs{"alpha": float32(0.9), "beta": float32(0.99), "norm_coefficient_post": float32(0.01)}, normal, squares),
		optimizer("Momentum", gert.OpAttrs{"alpha": float32(0.9), "beta": float32(0.5), "norm_coefficient": float32(0.01), "nesterov": true}, normal),
		{op: "TfIdfVectorizer",
			attrs: gert.OpAttrs{"min_gram_length": int64(1), "max_gram_length": int64(2), "max_skip_count": int64(2),
				"ngram_counts": []int64{0, 3}, "ngram_indexes": []int64{4, 0, 1, 2, 3}, "pool_int64s": []int64{0, 1, 3, 1, 2, 3, 3},
				"mode": int64(2)},
			in:   []gert.IODesc{{DataType: acl.Int64, Shape: gert.Shape{2, 5}, Format: acl.FormatND}, w},
			data: [][]byte{x, wb}},
	}
}
